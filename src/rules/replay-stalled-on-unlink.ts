/**
 * replay-stalled-on-unlink: a standby's replay stands still while received WAL waits, and the
 * cause is a dropped (or truncated, or rewritten) table whose files the startup process is
 * unlinking: replay still stands still after any recovery conflict wait ended, and PG 19 shows it
 * inside one record, or the wait ended on a commit dropping relation files (certain), or a
 * table-dropping command was logged on a server of the same cluster shortly before (probable, and
 * said so). Unlinking a 4 TB table stalls replay for minutes, and every change on the primary
 * queues behind it (seed 003_e3cc2138bb41931f.txt). Other stalls, a recovery conflict wait above
 * all, are replay-stalled's; the analysis is shared (replay-stall.ts).
 *
 * Needs the standby's replay samples: the unlink logs nothing, so a standby's log alone cannot
 * show that replay stood still after its conflict wait ended (replay-stall-log.ts).
 */
import { evidenceOf, findingKey, type Rule } from './rule.js';
import { causeEventIds, describeStall, describeUnlink, replayStalls, STALL_DEFAULTS, type StallOptions } from './replay-stall.js';

export const ID = 'replay-stalled-on-unlink';

export type ReplayStalledOnUnlinkOptions = StallOptions;

export const DEFAULTS: ReplayStalledOnUnlinkOptions = STALL_DEFAULTS;

export function replayStalledOnUnlink(options: ReplayStalledOnUnlinkOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A standby stopped replaying while it unlinks the files of a table dropped on the primary.',
    evaluate(view) {
      return replayStalls(view, options).flatMap((stall) => {
        if (stall.cause.kind !== 'unlink') return [];
        const cause = stall.cause;
        const drop = cause.drop;
        return [{
          dedupKey: findingKey(ID, stall.target),
          target: stall.target,
          labels: { relation: drop?.details.relation ?? '', primary: drop?.target ?? '' },
          summary: `replay on ${stall.target} stalled ${describeStall(stall)} ${describeUnlink(cause)}`,
          evidence: evidenceOf({
            eventIds: causeEventIds(cause),
            series: stall.series,
            facts: {
              standing_still_seconds: stall.standingStillSeconds,
              pending_bytes: stall.pendingBytes,
              relation: drop?.details.relation ?? null,
              command: drop?.details.command ?? null,
              dropped_on: drop?.target ?? null,
              dropped_at_ms: drop?.tsMs ?? null,
              inside_one_record: cause.insideRecord,
              possible: !cause.certain,
            },
          }),
        }];
      });
    },
  };
}
