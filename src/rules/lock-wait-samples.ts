/**
 * Sessions waiting on heavyweight locks as the pg_lock_waits collector samples them (per database,
 * the longest waits one by one, with pg_blocking_pids): they show a lock queue between log lines,
 * and when log_lock_waits is off (the default before 19). pg_blocking_pids lists the holders and
 * the conflicting waiters queued ahead, so a query stuck behind a queued DROP names the DROP's pid.
 */
import { LOCK_WAIT_SESSIONS_REPORTED } from '../domain/series-limits.js';
import type { RuleView } from './rule-view.js';

const SESSION_WAIT = 'pg_lock_waits_session_wait_seconds';
const SESSIONS = 'pg_lock_waits_sessions';

export interface SampledWaiter {
  target: string;
  pid: number;
  datname: string;
  mode: string;
  relname: string;
  blockingPids: number[];
  waitSeconds: number | null;
  /** Truncated to 100 characters by the collector. */
  query: string;
  tsMs: number;
}

/**
 * The waiters of each database's newest collection. A waiter sampled before a collection that
 * listed every waiter of its database, and did not list it, waits no more: its sample would
 * otherwise pass for current until it goes stale.
 */
export function sampledWaiters(view: RuleView): SampledWaiter[] {
  const completeAtMs = new Map<string, number>();
  for (const s of view.latest(SESSIONS)) {
    if (listsEveryWaiter(s.value)) completeAtMs.set(`${s.target}\u0000${s.labels.datname ?? ''}`, s.tsMs);
  }
  return view.latest(SESSION_WAIT).flatMap((s) => {
    const pid = Number(s.labels.pid);
    if (!Number.isInteger(pid) || s.labels.pid === '') return [];
    if (s.tsMs < (completeAtMs.get(`${s.target}\u0000${s.labels.datname ?? ''}`) ?? -Infinity)) return [];
    return [{
      target: s.target, pid, datname: s.labels.datname ?? '', mode: s.labels.mode ?? '', relname: s.labels.relname ?? '',
      blockingPids: (s.labels.blocking_pids ?? '').split(',').filter((p) => p !== '').map(Number).filter(Number.isInteger),
      waitSeconds: s.value, query: s.labels.query ?? '', tsMs: s.tsMs,
    }];
  });
}

/**
 * When the newest collection of a database that listed every waiter was taken (null: none is
 * fresh, or it had more waiters than are reported one by one). A pid it does not list was not
 * waiting then; a wait that began after it is not in it at all.
 */
export function completeCollectionAtMs(view: RuleView, target: string, datname: string): number | null {
  const newest = view.latest(SESSIONS, { target, labels: { datname } })[0];
  return newest && listsEveryWaiter(newest.value) ? newest.tsMs : null;
}

/** Whether pg_lock_waits collections of `target` are fresh: without them only the log speaks. */
export function lockWaitsSampled(view: RuleView, target: string): boolean {
  return view.latest(SESSIONS, { target }).length > 0;
}

/** A collection with this many waiters reported each of them one by one. */
function listsEveryWaiter(count: number | null | undefined): boolean {
  return count !== undefined && count !== null && count <= LOCK_WAIT_SESSIONS_REPORTED;
}
