/**
 * lock-timeouts: statements cancelled by lock_timeout, one alert per relation (per database)
 * while they recur, naming who held the lock when the log says: with log_lock_waits, the
 * cancelled process's `still waiting` line names the holder's pid, and the holder's own logged
 * lines (its lock waits, its DDL under log_statement = ddl) name its statement.
 *
 * Info: the guard did its job, users saw an error, and the holder is the cause to look at. An
 * application that sets lock_timeout around DDL shows here as often as it runs it; error-storm
 * judges whether the rate is unusual.
 *
 * The relation: the one the statement names, else the locked object (PG 19 prints it in the
 * CONTEXT; before, the `still waiting` line of the same process does). A REPACK's lock timeout is
 * left to repack-lost-at-swap and repack-failed: the run it lost is the news, an error.
 */
import type { LockObject } from '../domain/index.js';
import { lockObjectName } from '../domain/lock-name.js';
import { EPISODE_DEFAULTS, episodeEventIds, episodeSpan, liveEpisodes, type EpisodeOptions } from './cancel-episodes.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { statementRelationOf, tableCommandOf } from './statements.js';
import { plural, quoteStatement } from './summary-format.js';

export const ID = 'lock-timeouts';

export type LockTimeoutsOptions = EpisodeOptions;

export const DEFAULTS: LockTimeoutsOptions = EPISODE_DEFAULTS;

type Timeout = RuleEvent<'lock_timeout'>;
type Wait = RuleEvent<'lock_wait'>;

/** How long before its timeout a process's `still waiting` line can be (lock_timeout is rarely minutes). */
const WAIT_LOOKBACK_MS = 15 * 60_000;
/** How long before the timeout the holder's own lines can name its statement. */
const HOLDER_LOOKBACK_MS = 60 * 60_000;

interface Blocker {
  pid: number;
  /** What the holder's logged lines say it ran; null when it logged nothing. */
  statement: string | null;
  eventIds: number[];
}

export function lockTimeouts(options: LockTimeoutsOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'Statements cancelled by lock_timeout, one alert per relation while they recur, naming the lock holder when log_lock_waits logged it.',
    evaluate(view, nowMs) {
      const waits = new Map<number, Wait | null>();
      const waitOf = (e: Timeout) => {
        if (!waits.has(e.id)) waits.set(e.id, waitBefore(view, e));
        return waits.get(e.id) ?? null;
      };
      const episodes = liveEpisodes(view, 'lock_timeout', options, nowMs, (e) =>
        (tableCommandOf(e.details.statement)?.command === 'REPACK' ? null : `${e.database ?? ''}/${relationOf(e, () => waitOf(e))}`));
      return episodes.map((episode): Finding => {
        const last = episode.events.at(-1)!;
        const wait = waitOf(last);
        const relation = relationOf(last, () => wait);
        const blockers = (wait?.details.holder_pids ?? []).map((pid) => blockerOf(view, last, pid));
        const where = last.database === null ? relation : `${last.database}.${relation}`;
        const mode = last.details.lock_mode ?? wait?.details.lock_mode ?? null;
        const statement = last.details.statement;
        return {
          dedupKey: findingKey(ID, episode.target, episode.key),
          target: episode.target,
          labels: last.database === null ? {} : { database: last.database },
          summary: `${plural(episode.events.length, 'statement')} cancelled by lock_timeout on ${where} (${episode.target}) ${episodeSpan(episode)}` +
            `${mode === null ? '' : `, waiting for ${mode}`}${describeBlockers(blockers, wait !== null)}` +
            `${statement === null ? '' : `; last cancelled: ${quoteStatement(statement)}`}`,
          evidence: evidenceOf({
            eventIds: [...episodeEventIds(episode), ...(wait ? [wait.id] : []), ...blockers.flatMap((b) => b.eventIds)],
            facts: {
              cancelled: episode.events.length,
              relation: where,
              lock_mode: mode,
              blocker_pids: blockers.length === 0 ? null : blockers.map((b) => b.pid).join(', '),
              blocker_statement: blockers.find((b) => b.statement !== null)?.statement ?? null,
              statement,
            },
          }),
        };
      });
    },
  };
}

/** The cancelled process's last `still waiting` line before its timeout (log_lock_waits). */
function waitBefore(view: RuleView, e: Timeout): Wait | null {
  if (e.pid === null) return null;
  return view.events('lock_wait', { sinceMs: e.tsMs - WAIT_LOOKBACK_MS, target: e.target, pid: e.pid })
    .filter((w) => w.tsMs <= e.tsMs && w.details.phase === 'waiting').pop() ?? null;
}

/** `waitOf` is asked only when the statement and the timeout name no relation: a read per timeout otherwise. */
function relationOf(e: Timeout, waitOf: () => Wait | null): string {
  const named = statementRelationOf(e.details.statement);
  if (named !== null) return named;
  const lock: LockObject | null = e.details.lock_object ?? waitOf()?.details.lock_object ?? null;
  return lock ? lockObjectName(lock) : 'an object the log does not name';
}

/** What the holder ran, from its own lines: a lock wait of its own, a DDL it logged. */
function blockerOf(view: RuleView, e: Timeout, pid: number): Blocker {
  const query = { sinceMs: e.tsMs - HOLDER_LOOKBACK_MS, target: e.target, pid };
  const before = <T extends { tsMs: number }>(events: T[]) => events.filter((x) => x.tsMs <= e.tsMs).pop() ?? null;
  const ddl = before(view.events('ddl', query));
  const waited = before(view.events('lock_wait', query).filter((w) => w.details.statement !== null));
  const newest = ddl && (!waited || ddl.tsMs >= waited.tsMs) ? ddl : waited;
  if (newest === null) return { pid, statement: null, eventIds: [] };
  const statement = newest.kind === 'ddl'
    ? [(newest as RuleEvent<'ddl'>).details.command, (newest as RuleEvent<'ddl'>).details.relation].filter((p) => p !== null).join(' ')
    : (newest as Wait).details.statement;
  return { pid, statement, eventIds: [newest.id] };
}

function describeBlockers(blockers: Blocker[], waitLogged: boolean): string {
  if (!waitLogged) return ' (log_lock_waits = on would name the holder)';
  if (blockers.length === 0) return '';
  const named = blockers.map((b) => `pid ${b.pid} (${b.statement === null ? 'its statement was not logged' : quoteStatement(b.statement)})`);
  return ` behind ${named.join(', ')}`;
}
