/**
 * recovery-conflict-cancellations: standby queries cancelled (or their sessions terminated)
 * because replay of the primary's WAL conflicted with them, one alert per cause on each standby
 * while it recurs, naming what was replayed in a DBA's words: VACUUM's cleanup of rows the
 * queries could still see, the ACCESS EXCLUSIVE lock of a DROP or TRUNCATE (with the DROP itself
 * when the primary logged it), a DROP TABLESPACE, a DROP DATABASE.
 *
 * From the log alone: the victims' `canceling statement due to conflict with recovery` (the
 * DETAIL gives the reason) and, with log_recovery_conflict_waits (14+), the startup process's
 * `recovery still waiting` line that lists them among the conflicting processes, whose CONTEXT
 * names the WAL record replayed. Info: max_standby_streaming_delay did its job (replay went on),
 * the queries' users saw an error, and the cause is on the primary; replay-stalled speaks when
 * replay itself stands still.
 */
import type { RecoveryConflictReason } from '../domain/index.js';
import { EPISODE_DEFAULTS, EPISODE_LOOKBACK_MS, episodeEventIds, episodeSpan, liveEpisodes, type EpisodeOptions } from './cancel-episodes.js';
import { STALL_DEFAULTS } from './replay-stall.js';
import { dropBefore, waitStartMs } from './replay-stall-log.js';
import { firstAtOrAfter, type RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { formatCount, plural, quoteStatement } from './summary-format.js';

export const ID = 'recovery-conflict-cancellations';

export type RecoveryConflictCancellationsOptions = EpisodeOptions;

export const DEFAULTS: RecoveryConflictCancellationsOptions = EPISODE_DEFAULTS;

type Cancel = RuleEvent<'recovery_conflict'>;
type Wait = RuleEvent<'recovery_conflict_wait'>;

/** How long replay may wait before it cancels: max_standby_streaming_delay is seconds to minutes. */
const WAIT_LOOKBACK_MS = 30 * 60_000;
const TOP = 3;

/** What replay did that the queries were in the way of, by conflict reason (pg-messages.md §2.2). */
const REPLAYED: Record<RecoveryConflictReason, string> = {
  snapshot: 'VACUUM (or pruning) on the primary removed row versions the queries could still see',
  bufferpin: "replay of VACUUM's cleanup on the primary needed pages the queries had pinned",
  lock: 'replay of an ACCESS EXCLUSIVE lock taken on the primary by DROP, TRUNCATE, ALTER TABLE, LOCK TABLE or VACUUM truncating the table',
  tablespace: 'a DROP TABLESPACE replayed from the primary',
  database: 'a DROP DATABASE (or ALTER DATABASE SET TABLESPACE) replayed from the primary',
  logical_slot: 'rows a logical slot on the standby needed were removed on the primary',
  startup_deadlock: 'replay deadlocked with the queries on a buffer pin',
  deadlock: 'replay deadlocked with the queries on a buffer pin',
};

const CONFLICT_NAMES: Record<RecoveryConflictReason, string> = {
  snapshot: 'snapshot', bufferpin: 'buffer pin', lock: 'lock', tablespace: 'tablespace', database: 'database',
  logical_slot: 'replication slot', startup_deadlock: 'buffer deadlock', deadlock: 'deadlock',
};

/** Conflicts replay waits on before it cancels, so a logged wait would name the record. */
const RECORD_LOGGED = new Set<RecoveryConflictReason>(['snapshot', 'bufferpin', 'lock', 'tablespace']);

interface Cause {
  reason: RecoveryConflictReason | null;
  /** The one thing replayed, when the cause is one object (a table locked, a tablespace or database dropped). */
  subject: string | null;
  wait: Wait | null;
}

export function recoveryConflictCancellations(options: RecoveryConflictCancellationsOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Standby queries cancelled by recovery conflicts, one alert per cause (the VACUUM cleanup, DROP or lock replayed) while they recur.',
    evaluate(view, nowMs) {
      // The startup process's waits, read once per standby: an episode can hold many cancels.
      const waits = new Map<string, Wait[]>();
      const waitsOn = (target: string) => {
        let list = waits.get(target);
        if (!list) waits.set(target, (list = view.events('recovery_conflict_wait', { sinceMs: nowMs - EPISODE_LOOKBACK_MS - WAIT_LOOKBACK_MS, target })));
        return list;
      };
      const causes = new Map<number, Cause>();
      const causeOf = (e: Cancel) => {
        let cause = causes.get(e.id);
        if (!cause) causes.set(e.id, (cause = conflictCause(e, waitsOn(e.target))));
        return cause;
      };
      const episodes = liveEpisodes(view, 'recovery_conflict', options, nowMs, (e) => {
        const { reason, subject } = causeOf(e);
        return subject === null ? reason ?? 'unknown' : `${reason ?? 'unknown'}/${subject}`;
      });
      return episodes.map((episode): Finding => {
        const cancels = episode.events;
        const last = cancels.at(-1)!;
        const { reason, subject } = causeOf(last);
        const replayWaits = [...new Map(cancels.map((c) => causeOf(c).wait).filter((w) => w !== null).map((w) => [w.id, w])).values()];
        const drop = reason === 'lock' && replayWaits.length > 0 ? dropBefore(view, episode.target, waitStartMs(replayWaits.at(-1)!), STALL_DEFAULTS) : null;
        const terminated = cancels.filter((c) => c.details.fatal).length;
        const statements = topOf(cancels.map((c) => c.details.statement).filter((s) => s !== null).map((s) => quoteStatement(s, 80)));
        const records = topOf(replayWaits.map(describeRecord));
        const replayed = [
          reason === null ? 'a recovery conflict the log does not name' : REPLAYED[reason],
          drop ? `: probably ${drop.details.command}${drop.details.relation === null ? '' : ` of ${drop.details.relation}`} on ${drop.target}` : '',
          records.length > 0 ? ` (WAL replayed: ${records.join(', ')})`
            : reason !== null && RECORD_LOGGED.has(reason) ? ' (log_recovery_conflict_waits = on would name the WAL record)' : '',
        ].join('');
        return {
          dedupKey: findingKey(ID, episode.target, episode.key),
          target: episode.target,
          labels: reason === null ? {} : { reason },
          summary: `${plural(cancels.length, 'query', 'queries')} cancelled on ${episode.target} by recovery conflicts` +
            `${reason === null ? '' : ` on ${CONFLICT_NAMES[reason]}`} ${episodeSpan(episode)}: ${replayed}` +
            `${terminated === 0 ? '' : `; sessions terminated: ${formatCount(terminated)}`}` +
            `${statements.length === 0 ? '' : `; queries: ${statements.join(', ')}`}`,
          evidence: evidenceOf({
            eventIds: [...episodeEventIds(episode), ...replayWaits.slice(-TOP).map((w) => w.id), ...(drop ? [drop.id] : [])],
            facts: {
              cancelled: cancels.length,
              terminated,
              reason,
              replayed: subject,
              redo_record: replayWaits.at(-1)?.details.redo_record ?? null,
              redo_lsn: replayWaits.at(-1)?.details.redo_lsn ?? null,
              drop: drop ? `${drop.details.command} ${drop.details.relation ?? ''}`.trim() : null,
              databases: [...new Set(cancels.map((c) => c.database).filter((d) => d !== null))].join(', '),
            },
          }),
        };
      });
    },
  };
}

/**
 * The startup process's wait that named this query among its conflicting processes (the latest
 * before the cancel), its reason, and the one object replayed when the cause is one.
 */
function conflictCause(cancel: Cancel, standbyWaits: readonly Wait[]): Cause {
  const wait = waitFor(cancel, standbyWaits);
  const reason = cancel.details.reason ?? wait?.details.reason ?? null;
  const description = wait?.details.redo_description ?? '';
  switch (reason) {
    case 'lock':
      // Standby/LOCK: `xid 812 db 5 rel 16499`.
      return { reason, subject: /\bdb (\d+) rel (\d+)/.exec(description)?.slice(1).join('.') ?? null, wait };
    case 'tablespace':
      return { reason, subject: wait?.details.redo_record === 'Tablespace/DROP' ? description.trim() || null : null, wait };
    case 'database':
      return { reason, subject: cancel.database, wait };
    default:
      return { reason, subject: null, wait };
  }
}

/**
 * The wait replay was in when it cancelled this query: the latest that lists the query's pid, or
 * else (a buffer pin wait lists none) the latest of the same reason that lists no pids and had
 * not finished by the cancel.
 */
function waitFor(cancel: Cancel, standbyWaits: readonly Wait[]): Wait | null {
  const waits = standbyWaits.slice(firstAtOrAfter(standbyWaits, cancel.tsMs - WAIT_LOOKBACK_MS), firstAtOrAfter(standbyWaits, cancel.tsMs + 1));
  const waiting = waits.filter((w) => w.details.phase === 'waiting');
  const named = waiting.filter((w) => cancel.pid !== null && (w.details.conflicting_pids ?? []).includes(cancel.pid)).pop();
  if (named) return named;
  const open = waiting.filter((w) => w.details.conflicting_pids === null && w.details.reason === cancel.details.reason).pop();
  const finished = open && waits.some((w) => w.tsMs > open.tsMs && w.pid === open.pid && w.details.phase === 'finished');
  return open && !finished ? open : null;
}

/** `Heap2/PRUNE_VACUUM_SCAN of rel 1663/5/16492`, `Standby/LOCK of rel 16499 (db 5)`, `Tablespace/DROP 16384`. */
function describeRecord(w: Wait): string {
  const record = w.details.redo_record ?? 'a WAL record';
  const description = w.details.redo_description ?? '';
  const block = /\brel (\d+\/\d+\/\d+)/.exec(description)?.[1];
  if (block) return `${record} of rel ${block}`;
  const locked = /\bdb (\d+) rel (\d+)/.exec(description);
  if (locked) return `${record} of rel ${locked[2]} (db ${locked[1]})`;
  return record === 'Tablespace/DROP' ? `${record} ${description.trim()}` : record;
}

/** The most frequent values first, at most TOP, then how many more. */
function topOf(values: string[]): string[] {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts.keys()].sort((a, b) => counts.get(b)! - counts.get(a)! || a.localeCompare(b));
  return sorted.length <= TOP ? sorted : [...sorted.slice(0, TOP), `${sorted.length - TOP} more`];
}
