/**
 * replay-stalled: a standby's replay stands still while received WAL waits, for a reason other
 * than unlinking a dropped table (that is replay-stalled-on-unlink): a recovery conflict (replay
 * waits on a lock or snapshot a standby query holds, until max_standby_streaming_delay cancels it),
 * a paused replay, or something pgvigil cannot name, said as such with the startup process's wait
 * event. A replica stuck like this looks exactly like a lagging one to a load balancer
 * (seed 003_e3cc2138bb41931f.txt).
 *
 * From a standby's log alone (no replay samples): exact with log_recovery_conflict_waits (the
 * `still waiting` line opens the stall, `finished waiting` ends it); without it, the cancelled
 * standby queries show replay waited, up to max_standby_streaming_delay (replay-stall-log.ts).
 */
import { evidenceOf, findingKey, type Rule } from './rule.js';
import { causeEventIds, describeCause, describeStall, replayStalls, STALL_DEFAULTS, withinConflictDelay, type StallOptions } from './replay-stall.js';

export const ID = 'replay-stalled';

export type ReplayStalledOptions = StallOptions;

export const DEFAULTS: ReplayStalledOptions = STALL_DEFAULTS;

export function replayStalled(options: ReplayStalledOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A standby stopped replaying WAL it has received: a recovery conflict, a pause, or an unknown cause.',
    evaluate(view) {
      return replayStalls(view, options).flatMap((stall) => {
        if (stall.cause.kind === 'unlink' || withinConflictDelay(view, stall)) return [];
        const cause = stall.cause;
        const wait = cause.kind === 'conflict' ? cause.wait.details : null;
        return [{
          dedupKey: findingKey(ID, stall.target),
          target: stall.target,
          labels: { cause: cause.kind },
          // Known only from the log after the fact (cancel lines): said in the past.
          summary: `replay on ${stall.target} ${stall.standingStillSeconds === null ? 'stood still' : 'has not advanced'} ` +
            `${describeStall(stall)}: ${describeCause(cause)}`,
          evidence: evidenceOf({
            eventIds: causeEventIds(cause),
            series: stall.series,
            facts: {
              standing_still_seconds: stall.standingStillSeconds,
              pending_bytes: stall.pendingBytes,
              cause: cause.kind,
              conflict_reason: wait?.reason ?? null,
              conflicting_pids: wait?.conflicting_pids?.join(', ') ??
                (cause.kind === 'conflict_cancelled' ? cause.cancels.map((c) => c.pid).join(', ') : null),
              redo_lsn: wait?.redo_lsn ?? null,
            },
          }),
        }];
      });
    },
  };
}
