/**
 * What a standby's log alone says about its replay (no replay samples: `pgvigil analyze --rules`,
 * or a standby whose log pgvigil reads without polling it), and the log helpers the sampled
 * analysis in replay-stall.ts shares.
 *
 * - Exact: with log_recovery_conflict_waits (14+), `recovery still waiting after N ms: recovery
 *   conflict on ...` opens a stall that began N ms earlier, and `recovery finished waiting` (or a
 *   restart) ends it; the CONTEXT names the record, the DETAIL the standby queries in the way.
 * - Up to max_standby_streaming_delay: without that setting (or on 13), only the victims'
 *   `canceling statement due to conflict with recovery` lines show that replay waited, not since when.
 * - Never an unlink: it logs nothing, so whether replay stood still after a conflict wait ended
 *   needs the standby's replay samples; a wait that ended ends the stall the log shows.
 */
import type { RuleEvent, RuleView } from './rule-view.js';
import { clusterOf } from './rule-view.js';
import type { ReplayStall, StallCause, StallOptions } from './replay-stall.js';

type Wait = RuleEvent<'recovery_conflict_wait'>;

/** A logged wait with no end logged is forgotten after this long. */
export const OPEN_WAIT_MAX_MS = 30 * 60_000;
/** How long a stall the log reveals only once it is over stays news. */
const AFTER_THE_FACT_MS = 10 * 60_000;
const DELAY_SETTING = 'pg_settings_max_standby_streaming_delay_seconds';
const SETTINGS_MAX_AGE_MS = 10 * 60_000;
/** PostgreSQL's default max_standby_streaming_delay, when the setting was not sampled. */
const DEFAULT_STREAMING_DELAY_SECONDS = 30;

/**
 * How long replay may wait on a standby query by the server's own setting before it cancels the
 * query: max_standby_streaming_delay (30 s by default); null when it never cancels (-1).
 */
export function streamingDelaySeconds(view: RuleView, target: string): number | null {
  const sampled = view.latest(DELAY_SETTING, { target, maxAgeMs: SETTINGS_MAX_AGE_MS })[0]?.value;
  const seconds = sampled === undefined || sampled === null ? DEFAULT_STREAMING_DELAY_SECONDS : sampled;
  return seconds < 0 ? null : seconds;
}

/** Tolerated difference between the servers' log clocks and the standby's samples. */
export const CLOCK_SKEW_MS = 5_000;

/** Commands whose commit makes replay unlink relation files. */
const UNLINKING = new Set(['DROP TABLE', 'TRUNCATE', 'VACUUM FULL', 'CLUSTER', 'REPACK']);

/** The table-dropping command logged in `target`'s cluster that replay at `atMs` may be replaying. */
export function dropBefore(view: RuleView, target: string, atMs: number, o: StallOptions): RuleEvent<'ddl'> | null {
  // The primary logs the statement when it starts; its commit, replayed here, comes later.
  return view.events('ddl', { sinceMs: atMs - o.ddlLookbackMs, target: clusterOf(view, target) })
    .filter((e) => UNLINKING.has(e.details.command) && e.tsMs <= atMs + CLOCK_SKEW_MS).pop() ?? null;
}

/** When the startup process began to wait: the line is logged after deadlock_timeout, or at the end. */
export function waitStartMs(w: Wait): number {
  return w.tsMs - (w.details.wait_ms ?? 0);
}

/**
 * The latest `still waiting` of the startup process that nothing logged after it ended: a
 * `finished waiting`, or a restart of the server (its startup process is a new one).
 */
export function openWait(view: RuleView, waits: Wait[]): Wait | null {
  let open: Wait | null = null;
  for (const w of waits) {
    if (w.details.phase === 'waiting') open = w;
    else if (open && (w.pid === open.pid || w.pid === null)) open = null;
  }
  if (open && view.events('server_restart', { sinceMs: open.tsMs, target: open.target }).length > 0) return null;
  return open;
}

/** Standby queries cancelled or terminated for a recovery conflict while replay waited. */
export function cancelsDuring(view: RuleView, wait: Wait): Array<RuleEvent<'recovery_conflict'>> {
  return view.events('recovery_conflict', { sinceMs: waitStartMs(wait), target: wait.target });
}

/**
 * A wait still open: the conflict it names, with the cancels of its standby queries; for a lock
 * conflict, a table-dropping command logged in the cluster before it probably owns the lock
 * (replay takes a DROP's or TRUNCATE's ACCESS EXCLUSIVE lock before its commit).
 */
export function conflictCause(view: RuleView, wait: Wait, o: StallOptions): Extract<StallCause, { kind: 'conflict' }> {
  const onLock = wait.details.reason === 'lock' || wait.details.reason === null;
  const drop = onLock ? dropBefore(view, wait.target, waitStartMs(wait), o) : null;
  return { kind: 'conflict', wait, drop, cancels: cancelsDuring(view, wait) };
}

/** Stalls of the standbys in `view` that are not sampled, from their logs. */
export function loggedStalls(view: RuleView, o: StallOptions, sampled: ReadonlySet<string>): ReplayStall[] {
  const sinceMs = view.nowMs - OPEN_WAIT_MAX_MS;
  const targets = new Set([
    ...view.events('recovery_conflict_wait', { sinceMs }).map((e) => e.target),
    ...view.events('recovery_conflict', { sinceMs }).map((e) => e.target),
  ]);
  return [...targets].filter((t) => !sampled.has(t)).flatMap((target) => {
    const stall = loggedStall(view, target, sinceMs, o);
    return stall ? [stall] : [];
  });
}

function loggedStall(view: RuleView, target: string, sinceMs: number, o: StallOptions): ReplayStall | null {
  const nowMs = view.nowMs;
  const waits = view.events('recovery_conflict_wait', { sinceMs, target });
  const open = openWait(view, waits);
  if (open) {
    const startMs = waitStartMs(open);
    const seconds = (nowMs - startMs) / 1000;
    if (seconds < o.minStallSeconds) return null;
    return { target, standingStillSeconds: seconds, sinceMs: startMs, pendingBytes: null, applyDelaySeconds: null, cause: conflictCause(view, open, o), series: [] };
  }
  // Waits were logged, so the setting is on: cancels without a wait line are not replay's.
  if (waits.length > 0) return null;
  const recent = nowMs - AFTER_THE_FACT_MS;
  const cancels = view.events('recovery_conflict', { sinceMs: recent, target }).filter((c) => c.details.reason !== 'database');
  const last = cancels[cancels.length - 1];
  if (!last) return null;
  const delaySeconds = view.latest(DELAY_SETTING, { target, maxAgeMs: SETTINGS_MAX_AGE_MS })[0]?.value ?? null;
  const cause = { kind: 'conflict_cancelled' as const, cancels, delaySeconds };
  return { target, standingStillSeconds: null, sinceMs: last.tsMs - (delaySeconds ?? 30) * 1000, pendingBytes: null, applyDelaySeconds: null, cause, series: [] };
}
