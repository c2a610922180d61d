/**
 * Why a standby's replay stands still while received WAL waits: the analysis shared by
 * replay-stalled-on-unlink, replay-stalled and replica-lag-over-lb-limit.
 *
 * Facts (seed 003_e3cc2138bb41931f.txt, pg-messages.md §2, §13.10):
 * - a DROP TABLE / TRUNCATE replayed on a standby first takes the relation's ACCESS EXCLUSIVE lock:
 *   a standby query reading the table makes replay wait (recovery conflict; the query is cancelled
 *   after max_standby_streaming_delay, 30 s by default), logged with log_recovery_conflict_waits;
 * - then the startup process unlinks the files while replay stands still (about 17 ms per 1 GB
 *   segment cold plus 34 ms per cached GB: minutes for terabytes); nothing is logged, and in PG 19
 *   pg_stat_recovery shows replay_end_lsn ahead of last_replayed_end_lsn (inside one record).
 * So: a conflict wait still open names the conflict; otherwise a table-dropping command logged on
 * a server of the same cluster shortly before (or a finished conflict wait whose record dropped
 * relation files) names the unlink; otherwise what is known (paused, the startup wait event).
 */
import type { Evidence, RecoveryConflictReason } from '../domain/index.js';
import { clusterOf, type RuleEvent, type RuleView } from './rule-view.js';
import { formatBytes, formatDuration, formatTime } from './summary-format.js';

export const STANDING_STILL = 'pg_standby_replay_standing_still_seconds';
export const PENDING = 'pg_standby_replay_pending_bytes';
export const PAUSED = 'pg_standby_replay_paused';
export const STARTUP_WAIT = 'pg_standby_startup_wait_event';
export const INSIDE_RECORD = 'pg_stat_recovery_in_record_bytes';

/** Tolerated difference between the primary's log clock and the standby's samples. */
const CLOCK_SKEW_MS = 5_000;

/** Commands whose commit makes replay unlink relation files. */
const UNLINKING = new Set(['DROP TABLE', 'TRUNCATE', 'VACUUM FULL', 'CLUSTER', 'REPACK']);

export interface StallOptions {
  /** Replay standing still at least this long is a stall. */
  minStallSeconds: number;
  /** How long before the stall began a table-dropping command is taken as its cause. */
  ddlLookbackMs: number;
}

export const STALL_DEFAULTS: StallOptions = { minStallSeconds: 10, ddlLookbackMs: 15 * 60_000 };

export type StallCause =
  | { kind: 'paused' }
  | { kind: 'conflict'; wait: RuleEvent<'recovery_conflict_wait'>; drop: RuleEvent<'ddl'> | null }
  | { kind: 'conflict_sampled'; waitEventType: string; waitEvent: string }
  | { kind: 'unlink'; drop: RuleEvent<'ddl'> | null; afterWait: RuleEvent<'recovery_conflict_wait'> | null; insideRecord: boolean }
  | { kind: 'inside_record' }
  | { kind: 'unknown'; waitEventType: string | null; waitEvent: string | null };

export interface ReplayStall {
  target: string;
  standingStillSeconds: number;
  /** When replay last moved. */
  sinceMs: number;
  pendingBytes: number | null;
  cause: StallCause;
  series: Evidence['series'];
}

export function replayStalls(view: RuleView, options: StallOptions): ReplayStall[] {
  const stalls: ReplayStall[] = [];
  for (const s of view.latest(STANDING_STILL)) {
    if (s.value === null || s.value < options.minStallSeconds) continue;
    const stall = analyse(view, s.target, s.value, s.tsMs, options);
    stalls.push(stall);
  }
  return stalls;
}

function analyse(view: RuleView, target: string, standingStillSeconds: number, tsMs: number, o: StallOptions): ReplayStall {
  const sinceMs = tsMs - standingStillSeconds * 1000;
  const pending = view.latest(PENDING, { target })[0] ?? null;
  const series: Evidence['series'] = [{ name: STANDING_STILL, labels: {}, value: standingStillSeconds, tsMs }];
  if (pending) series.push({ name: PENDING, labels: {}, value: pending.value, tsMs: pending.tsMs });
  return { target, standingStillSeconds, sinceMs, pendingBytes: pending?.value ?? null, cause: causeOf(view, target, sinceMs, o), series };
}

function causeOf(view: RuleView, target: string, sinceMs: number, o: StallOptions): StallCause {
  if (view.latest(PAUSED, { target })[0]?.value === 1) return { kind: 'paused' };
  const lookbackMs = sinceMs - o.ddlLookbackMs;
  const waits = view.events('recovery_conflict_wait', { sinceMs: lookbackMs, target });
  const open = openWait(waits, sinceMs);
  // The primary logs the statement when it starts; its commit, replayed here, comes later.
  const drop = view.events('ddl', { sinceMs: lookbackMs, target: clusterOf(view, target) })
    .filter((e) => UNLINKING.has(e.details.command) && e.tsMs <= sinceMs + CLOCK_SKEW_MS).pop() ?? null;
  if (open) return { kind: 'conflict', wait: open, drop };
  const wait = view.latest(STARTUP_WAIT, { target })[0];
  const waitEventType = wait?.labels.wait_event_type || null;
  const waitEvent = wait?.labels.wait_event || null;
  if (waitEventType === 'Lock' || waitEventType === 'BufferPin' || waitEvent?.startsWith('RecoveryConflict')) {
    return { kind: 'conflict_sampled', waitEventType: waitEventType ?? '', waitEvent: waitEvent ?? '' };
  }
  const insideRecord = (view.latest(INSIDE_RECORD, { target })[0]?.value ?? 0) > 0;
  // A conflict that ended on a commit dropping relation files: replay went on to unlink them.
  const afterWait = waits.filter((w) => w.details.redo_description?.includes('rels:') ?? false).pop() ?? null;
  if (drop || afterWait) return { kind: 'unlink', drop, afterWait, insideRecord };
  if (insideRecord) return { kind: 'inside_record' };
  return { kind: 'unknown', waitEventType, waitEvent };
}

/** The latest `still waiting` of the startup process with no `finished` after it. */
function openWait(waits: Array<RuleEvent<'recovery_conflict_wait'>>, sinceMs: number): RuleEvent<'recovery_conflict_wait'> | null {
  let open: RuleEvent<'recovery_conflict_wait'> | null = null;
  for (const w of waits) {
    if (w.details.phase === 'waiting') open = w;
    else if (open && (w.pid === open.pid || w.pid === null)) open = null;
  }
  // A wait logged long before replay last moved cannot be what holds it now.
  return open && open.tsMs - (open.details.wait_ms ?? 0) <= sinceMs + 60_000 ? open : null;
}

/** get_recovery_conflict_desc() wording (§2.2). */
const CONFLICT_NAMES: Record<RecoveryConflictReason, string> = {
  lock: 'lock', snapshot: 'snapshot', bufferpin: 'buffer pin', tablespace: 'tablespace', logical_slot: 'replication slot',
  startup_deadlock: 'buffer deadlock', deadlock: 'deadlock', database: 'database',
};

const CONFLICT_WAITS: Record<RecoveryConflictReason, string> = {
  lock: 'on a lock held by',
  snapshot: 'for rows still visible to',
  bufferpin: 'for a buffer pin held by',
  tablespace: 'for a tablespace used by',
  logical_slot: 'for a logical slot used by',
  startup_deadlock: 'on a deadlock with',
  deadlock: 'on a deadlock with',
  database: 'for a database used by',
};

/** The cause as a clause: "replay waiting on a lock held by standby query pid 52311 (recovery conflict on lock)". */
export function describeCause(cause: StallCause): string {
  switch (cause.kind) {
    case 'paused':
      return 'replay is paused (pg_wal_replay_pause())';
    case 'conflict': {
      const d = cause.wait.details;
      const pids = d.conflicting_pids ?? [];
      const who = pids.length === 0 ? 'a standby query' : `standby ${pids.length === 1 ? 'query pid' : 'queries pids'} ${pids.join(', ')}`;
      const how = d.reason ? CONFLICT_WAITS[d.reason] : 'on';
      const reason = d.reason ? `recovery conflict on ${CONFLICT_NAMES[d.reason]}` : 'recovery conflict';
      const then = cause.drop ? `; ${describeDrop(cause.drop)} is next to replay` : '';
      return `replay waiting ${how} ${who} (${reason}${then})`;
    }
    case 'conflict_sampled':
      return `replay waiting on a recovery conflict (startup process waits on ${cause.waitEventType}/${cause.waitEvent})`;
    case 'unlink':
      return `replay stalled on ${describeUnlink(cause)}`;
    case 'inside_record':
      return 'replay stuck inside one WAL record with no recovery conflict (unlinking a dropped table\'s files looks like this)';
    case 'unknown':
      return cause.waitEventType
        ? `cause unknown (startup process waits on ${cause.waitEventType}/${cause.waitEvent ?? ''})`
        : 'cause unknown (no recovery conflict logged, no table dropped)';
  }
}

/** "unlink of build_logs (DROP TABLE on primary at 12:00:00 UTC)". */
export function describeUnlink(cause: Extract<StallCause, { kind: 'unlink' }>): string {
  return cause.drop
    ? `unlink of ${cause.drop.details.relation ?? 'a dropped table'} (${describeDrop(cause.drop)})`
    : `unlink of dropped relation files (${relsOf(cause.afterWait)})`;
}

function describeDrop(drop: RuleEvent<'ddl'>): string {
  return `${drop.details.command} on ${drop.target} at ${formatTime(drop.tsMs)}`;
}

function relsOf(wait: RuleEvent<'recovery_conflict_wait'> | null): string {
  const rels = /rels: ([^;]*)/.exec(wait?.details.redo_description ?? '')?.[1]?.trim();
  return rels ? `committed at ${wait?.details.redo_lsn ?? '?'}: ${rels}` : 'after a recovery conflict';
}

/** "for 45 s (1.2 GB of received WAL waiting)". */
export function describeStall(stall: ReplayStall): string {
  const waiting = stall.pendingBytes !== null ? ` (${formatBytes(stall.pendingBytes)} of received WAL waiting)` : '';
  return `for ${formatDuration(stall.standingStillSeconds * 1000)}${waiting}`;
}

export function causeEventIds(cause: StallCause): number[] {
  switch (cause.kind) {
    case 'conflict':
      return [...(cause.drop ? [cause.drop.id] : []), cause.wait.id];
    case 'unlink':
      return [...(cause.afterWait ? [cause.afterWait.id] : []), ...(cause.drop ? [cause.drop.id] : [])];
    default:
      return [];
  }
}
