/**
 * repack-lost-at-swap: a REPACK (CONCURRENTLY) failed at its final swap. By then the copy, the
 * index builds and the catch-up are done; REPACK asks once for ACCESS EXCLUSIVE, and when
 * lock_timeout expires (55P03, `canceling statement due to lock timeout`) or a deadlock breaks the
 * upgrade, the whole run is rolled back (seed 000_ddfba2eacd9de59b.txt; pg-messages.md §9.5, §13.5,
 * §13.6). There is no REPACK-specific message: the session's STATEMENT line says it was a REPACK,
 * and the PG 19 CONTEXT line `waiting for AccessExclusiveLock on ...` that it was the swap (the
 * start of a concurrent REPACK takes only SHARE UPDATE EXCLUSIVE, losing nothing).
 *
 * The finding stays open for `activeForMs` after the failure: it is news, not a state.
 */
import type { RuleView, RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { failedRun, runStartMs } from './repack-runs.js';
import type { CitedSeries } from './sample-evidence.js';
import { tableCommandOf } from './statements.js';
import { formatDuration } from './summary-format.js';

export const ID = 'repack-lost-at-swap';

export interface RepackLostAtSwapOptions {
  /** How long the alert stays open after the failure. */
  activeForMs: number;
  /** How far before the failure the run's start is looked for. */
  lookbackMs: number;
}

export const DEFAULTS: RepackLostAtSwapOptions = { activeForMs: 30 * 60_000, lookbackMs: 24 * 3_600_000 };

const SWAP_LOCK = 'AccessExclusiveLock';

type Failure = RuleEvent<'lock_timeout'> | RuleEvent<'deadlock'>;

export function repackLostAtSwap(options: RepackLostAtSwapOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A REPACK (CONCURRENTLY) was cancelled at its final swap (lock_timeout or deadlock): the whole run was thrown away.',
    evaluate(view, nowMs) {
      const sinceMs = nowMs - options.activeForMs;
      const failures: Failure[] = [...view.events('lock_timeout', { sinceMs }), ...view.events('deadlock', { sinceMs })];
      return failures.flatMap((e) => {
        const repack = tableCommandOf(e.details.statement);
        if (repack?.command !== 'REPACK' || !repack.concurrently || e.pid === null) return [];
        if (failedLockMode(e) !== null && failedLockMode(e) !== SWAP_LOCK) return [];
        return [finding(view, e, e.pid, repack.relation, options)];
      });
    },
  };
}

/** The lock the REPACK session was waiting for when it failed, when the log says (PG 19 CONTEXT, deadlock DETAIL). */
function failedLockMode(e: Failure): string | null {
  if (e.kind === 'lock_timeout') return e.details.lock_mode;
  return e.details.processes.find((p) => p.pid === e.pid)?.lock_mode ?? null;
}

function finding(view: RuleView, e: Failure, pid: number, relation: string | null, o: RepackLostAtSwapOptions): Finding {
  const start = workStart(view, e, pid, o.lookbackMs);
  const wait = swapWait(view, e, pid, start?.ms ?? e.tsMs);
  const table = relation === null ? 'its table' : e.database ? `${e.database}.${relation}` : relation;
  const holders = wait?.details.holder_pids ?? [];
  const behind = holders.length > 0 ? ` behind pid ${holders.join(', ')}` : '';
  const waitStartMs = wait && wait.details.wait_ms !== null ? wait.tsMs - wait.details.wait_ms : null;
  const waitedMs = waitStartMs === null ? null : e.tsMs - waitStartMs;
  const cause = e.kind === 'lock_timeout'
    ? `lock_timeout expired${waitedMs !== null ? ` after ${formatDuration(waitedMs)}` : ''} waiting for ${SWAP_LOCK}${behind}`
    : `a deadlock broke its upgrade to ${SWAP_LOCK}`;
  const summary = start
    ? `REPACK (CONCURRENTLY) of ${table} threw away ${formatDuration(e.tsMs - start.ms)} of work at the final swap: ${cause}`
    : `REPACK (CONCURRENTLY) of ${table} was rolled back at the final swap, all its copying and index builds lost: ${cause}`;
  return {
    dedupKey: findingKey(ID, e.target, pid, e.id),
    target: e.target,
    labels: { database: e.database ?? '', relation: relation ?? '', pid: String(pid) },
    summary,
    evidence: evidenceOf({
      eventIds: [...(start?.eventIds ?? []), ...(wait ? [wait.id] : []), e.id],
      series: start?.series ?? [],
      facts: {
        repack_pid: pid,
        failed_at_ms: e.tsMs,
        cause: e.kind,
        work_started_ms: start?.ms ?? null,
        work_lost_seconds: start ? Math.round((e.tsMs - start.ms) / 1000) : null,
        blocking_pids: holders.join(', ') || null,
        statement: e.details.statement,
      },
    }),
  };
}

/** When the failed run started, if its samples or its logged statement say: an earlier run of the session does not count. */
function workStart(view: RuleView, e: Failure, pid: number, lookbackMs: number): { ms: number; eventIds: number[]; series: CitedSeries[] } | null {
  const { run } = failedRun(view, e, pid, lookbackMs);
  // A run only the log shows, without its statement or duration line, has no known start.
  if (!run || (run.logOnly && run.xactStartMs === null)) return null;
  return { ms: runStartMs(run), eventIds: run.eventIds.filter((id) => id !== e.id), series: run.series };
}

/** The session's wait for the swap lock that the failure ended: logged after the run began, on the failure's lock when both say. */
function swapWait(view: RuleView, e: Failure, pid: number, runStartMs: number): RuleEvent<'lock_wait'> | null {
  const failedOn = e.kind === 'lock_timeout' ? e.details.lock_object : e.details.processes.find((p) => p.pid === pid)?.lock_object ?? null;
  return view.events('lock_wait', { sinceMs: runStartMs, target: e.target, pid })
    .filter((w) => w.tsMs <= e.tsMs && w.details.phase === 'waiting' && w.details.lock_mode === SWAP_LOCK &&
      w.tsMs - (w.details.wait_ms ?? 0) >= runStartMs &&
      (failedOn === null || w.details.lock_object.relation_oid === failedOn.relation_oid))
    .pop() ?? null;
}
