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
import { PROGRESS_INFO, PROGRESS_XACT_START, repackRunOf, runStartMs } from './repack-runs.js';
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
    severity: 'warning',
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
  const wait = view.events('lock_wait', { sinceMs: e.tsMs - o.lookbackMs, target: e.target, pid })
    .filter((w) => w.tsMs <= e.tsMs && w.details.phase === 'waiting' && w.details.lock_mode === SWAP_LOCK).pop();
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

/** When the failed run started: its slot, its progress row, or its logged statement. */
function workStart(view: RuleView, e: Failure, pid: number, lookbackMs: number): { ms: number; eventIds: number[] } | null {
  const sinceMs = e.tsMs - lookbackMs;
  const run = repackRunOf(view, e.target, pid, sinceMs, e.tsMs);
  if (run) return { ms: runStartMs(run), eventIds: run.eventIds };
  const progress = view.series(PROGRESS_INFO, { sinceMs, target: e.target, labels: { pid: String(pid) } })[0];
  if (progress && progress.points[0]!.tsMs <= e.tsMs) {
    const { datname = '', schemaname = '', relname = '' } = progress.labels;
    const xact = view.series(PROGRESS_XACT_START, { sinceMs, target: e.target, labels: { datname, schemaname, relname } })[0];
    const startS = xact?.points.find((p) => p.value !== null)?.value;
    return { ms: startS !== undefined && startS !== null ? startS * 1000 : progress.points[0]!.tsMs, eventIds: [] };
  }
  const logged = view.events('ddl', { sinceMs, target: e.target, pid })
    .filter((d) => d.tsMs <= e.tsMs && d.details.command === 'REPACK').pop();
  return logged ? { ms: logged.tsMs, eventIds: [logged.id] } : null;
}
