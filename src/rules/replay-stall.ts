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
 * So: a conflict wait still open names the conflict, with the standby process the DETAIL names
 * (and its statement, when its cancel logged one); a table-dropping command is then at most the
 * probable owner of a lock conflict, never the cause. Only once no wait is open, and replay still
 * stands still (its samples say so: the log cannot), is the unlink named: certain when the
 * standby says which record replay is inside of (PG 19) or the wait ended on a commit listing
 * dropped files, probable when only a table-dropping command logged on a server of the same
 * cluster shortly before points at it. Otherwise what is known (paused, the startup wait event).
 * A standby with no replay samples (`pgvigil analyze --rules`, or a log read without polling) is
 * judged by its log alone (replay-stall-log.ts), which never shows an unlink.
 *
 * On a delayed standby (recovery_min_apply_delay, apply-delay.ts) replay stands still before each
 * commit until the delay has passed: that much standing still is the setting, so a stall is
 * `minStallSeconds` beyond the delay. Replay still waiting on RecoveryApplyDelay past that means
 * the commit times are ahead of the standby's clock (the primary's clock runs ahead).
 */
import type { Evidence, RecoveryConflictReason } from '../domain/index.js';
import { applyDelayOf } from './apply-delay.js';
import { type LatestSample, type RuleEvent, type RuleView } from './rule-view.js';
import { CLOCK_SKEW_MS, conflictCause, dropBefore, loggedStalls, OPEN_WAIT_MAX_MS, openWait, streamingDelaySeconds, waitStartMs } from './replay-stall-log.js';
import { formatBytes, formatDuration, formatTime } from './summary-format.js';

export const STANDING_STILL = 'pg_standby_replay_standing_still_seconds';
export const PENDING = 'pg_standby_replay_pending_bytes';
export const PAUSED = 'pg_standby_replay_paused';
export const STARTUP_WAIT = 'pg_standby_startup_wait_event';
export const INSIDE_RECORD = 'pg_stat_recovery_in_record_bytes';
const REPLAY_LSN = 'pg_standby_replay_lsn_bytes';

type Wait = RuleEvent<'recovery_conflict_wait'>;

export interface StallOptions {
  /** Replay standing still at least this long is a stall. */
  minStallSeconds: number;
  /** How long before the stall began a table-dropping command is taken as its cause. */
  ddlLookbackMs: number;
}

export const STALL_DEFAULTS: StallOptions = { minStallSeconds: 10, ddlLookbackMs: 15 * 60_000 };

export type StallCause =
  | { kind: 'paused' }
  /** `drop`: a lock conflict's probable owner, when a table-dropping command was logged in the cluster before the wait. */
  | { kind: 'conflict'; wait: Wait; drop: RuleEvent<'ddl'> | null; cancels: Array<RuleEvent<'recovery_conflict'>> }
  | { kind: 'conflict_sampled'; waitEventType: string; waitEvent: string }
  /** Log only, without log_recovery_conflict_waits: standby queries cancelled, so replay waited on them. */
  | { kind: 'conflict_cancelled'; cancels: Array<RuleEvent<'recovery_conflict'>>; delaySeconds: number | null }
  /**
   * Replay stood still after any conflict wait ended. `certain`: the standby showed replay inside
   * one record (PG 19) or the wait ended on a commit listing dropped files; otherwise only a
   * table-dropping command logged in the cluster points at the unlink (probable).
   */
  | { kind: 'unlink'; drop: RuleEvent<'ddl'> | null; afterWait: Wait | null; insideRecord: boolean; certain: boolean }
  | { kind: 'inside_record' }
  /** Waiting on recovery_min_apply_delay for longer than the delay. */
  | { kind: 'apply_delay_overrun'; delaySeconds: number }
  | { kind: 'unknown'; waitEventType: string | null; waitEvent: string | null };

export interface ReplayStall {
  target: string;
  /** null when only the log speaks and it cannot say (an unlink logs nothing; a cancel says only "up to the delay"). */
  standingStillSeconds: number | null;
  /** When replay last moved (as far as known). */
  sinceMs: number;
  pendingBytes: number | null;
  /** recovery_min_apply_delay when sampled and above 0: standing still up to it was not the stall. */
  applyDelaySeconds: number | null;
  cause: StallCause;
  series: Evidence['series'];
}

export function replayStalls(view: RuleView, options: StallOptions): ReplayStall[] {
  const stalls: ReplayStall[] = [];
  const sampled = new Set<string>();
  for (const s of view.latest(STANDING_STILL)) {
    sampled.add(s.target);
    const delay = applyDelayOf(view, s.target);
    if (s.value === null || s.value < options.minStallSeconds + (delay?.seconds ?? 0)) continue;
    const stall = analyse(view, s.target, s.value, s.tsMs, options);
    if (delay) {
      stall.applyDelaySeconds = delay.seconds;
      stall.series.push(delay.cited);
      if (stall.cause.kind === 'unknown' && stall.cause.waitEvent === 'RecoveryApplyDelay') stall.cause = { kind: 'apply_delay_overrun', delaySeconds: delay.seconds };
    }
    stalls.push(stall);
  }
  return [...stalls, ...loggedStalls(view, options, sampled)];
}

/**
 * Replay waiting on a standby query for less than max_standby_streaming_delay is the server doing
 * what it was set to do: it cancels the query at the delay and replay goes on (a report of 12 s on
 * a standby holds replay 12 s, every day). Past the delay, or with no delay (-1: it waits for
 * ever), the wait is a stall. Only replay-stalled is quiet within the delay: the lag it causes is
 * still lag, and replica-lag-over-lb-limit names this wait as its cause.
 */
export function withinConflictDelay(view: RuleView, stall: ReplayStall): boolean {
  // From the log alone (no samples) the setting is unknown: a logged wait is judged as before.
  if (stall.series.length === 0 || (stall.cause.kind !== 'conflict' && stall.cause.kind !== 'conflict_sampled')) return false;
  const delaySeconds = streamingDelaySeconds(view, stall.target);
  return delaySeconds !== null && stall.standingStillSeconds !== null && stall.standingStillSeconds < delaySeconds;
}

/** The latest sample among several series of one name (one per label set): the newest is "now". */
function newest(samples: LatestSample[]): LatestSample | undefined {
  return samples.reduce<LatestSample | undefined>((a, b) => (a === undefined || b.tsMs > a.tsMs ? b : a), undefined);
}

function analyse(view: RuleView, target: string, standingStillSeconds: number, tsMs: number, o: StallOptions): ReplayStall {
  const sinceMs = tsMs - standingStillSeconds * 1000;
  const pending = view.latest(PENDING, { target })[0] ?? null;
  const series: Evidence['series'] = [{ name: STANDING_STILL, labels: {}, value: standingStillSeconds, tsMs }];
  if (pending) series.push({ name: PENDING, labels: {}, value: pending.value, tsMs: pending.tsMs });
  return { target, standingStillSeconds, sinceMs, pendingBytes: pending?.value ?? null, applyDelaySeconds: null, cause: causeOf(view, target, sinceMs, o), series };
}

function causeOf(view: RuleView, target: string, sinceMs: number, o: StallOptions): StallCause {
  if (view.latest(PAUSED, { target })[0]?.value === 1) return { kind: 'paused' };
  // Only waits that began once replay had stopped can explain this stall. Standing still counts
  // from pgvigil's first sample after it started: a wait that began before, while replay's
  // position has not changed since, is still this stall's (pgvigil restarted during it).
  const waits = view.events('recovery_conflict_wait', { sinceMs: view.nowMs - OPEN_WAIT_MAX_MS, target })
    .filter((w) => waitStartMs(w) >= sinceMs - CLOCK_SKEW_MS || !replayMovedSince(view, target, waitStartMs(w)));
  const open = openWait(view, waits);
  if (open) return conflictCause(view, open, o);
  const wait = newest(view.latest(STARTUP_WAIT, { target }));
  const waitEventType = wait?.labels.wait_event_type || null;
  const waitEvent = wait?.labels.wait_event || null;
  if (waitEventType === 'Lock' || waitEventType === 'BufferPin' || waitEvent?.startsWith('RecoveryConflict')) {
    return { kind: 'conflict_sampled', waitEventType: waitEventType ?? '', waitEvent: waitEvent ?? '' };
  }
  // PG 19+: how far replay is inside the record it is replaying; not sampled before 19.
  const inRecord = view.latest(INSIDE_RECORD, { target })[0];
  const insideRecord = (inRecord?.value ?? 0) > 0;
  // A conflict that ended on a commit dropping relation files: replay went on to unlink them.
  const afterWait = waits.filter((w) => w.details.redo_description?.includes('rels:') ?? false).pop() ?? null;
  const drop = dropBefore(view, target, sinceMs, o);
  // Replay between records (PG 19 says so) is not inside a commit's unlinks, whatever was dropped.
  const betweenRecords = inRecord !== undefined && inRecord.value === 0;
  if ((drop || afterWait) && !betweenRecords) return { kind: 'unlink', drop, afterWait, insideRecord, certain: insideRecord || afterWait !== null };
  if (insideRecord) return { kind: 'inside_record' };
  return { kind: 'unknown', waitEventType, waitEvent };
}

/** Replay's position changed after `ms`, as far as its samples show; true without two samples since (not known to stand still). */
function replayMovedSince(view: RuleView, target: string, ms: number): boolean {
  const points = view.series(REPLAY_LSN, { sinceMs: ms + CLOCK_SKEW_MS, target })[0]?.points ?? [];
  if (points.length < 2) return true;
  return points.some((p) => p.value === null || p.value !== points[0]!.value);
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
      const statements = [...new Set(cause.cancels.filter((c) => c.pid !== null && pids.includes(c.pid)).map((c) => c.details.statement).filter((t) => t !== null))];
      const running = statements.length === 0 ? '' : ` (${statements.map((t) => JSON.stringify(clip(t))).join(', ')})`;
      const who = pids.length === 0 ? 'a standby query' : `standby ${pids.length === 1 ? 'query pid' : 'queries pids'} ${pids.join(', ')}${running}`;
      const how = d.reason ? CONFLICT_WAITS[d.reason] : 'on';
      const reason = d.reason ? `recovery conflict on ${CONFLICT_NAMES[d.reason]}` : 'recovery conflict';
      const owner = cause.drop ? `, probably for ${describeDrop(cause.drop)}` : '';
      return `replay waiting ${how} ${who} (${reason}${owner})`;
    }
    case 'conflict_sampled':
      return `replay waiting on a recovery conflict (startup process waits on ${cause.waitEventType}/${cause.waitEvent})`;
    case 'conflict_cancelled': {
      const last = cause.cancels[cause.cancels.length - 1]!;
      const pids = [...new Set(cause.cancels.map((c) => c.pid).filter((p) => p !== null))];
      const reasons = [...new Set(cause.cancels.map((c) => c.details.reason).filter((r) => r !== null))];
      const delay = cause.delaySeconds === null ? 'max_standby_streaming_delay, 30 s by default' : `max_standby_streaming_delay = ${cause.delaySeconds} s`;
      return `replay waited on a recovery conflict${reasons.length > 0 ? ` on ${reasons.map((r) => CONFLICT_NAMES[r]).join(', ')}` : ''} ` +
        `until ${formatTime(last.tsMs)}, when it ${pids.length > 1 ? `cancelled standby queries pids ${pids.join(', ')}` : `cancelled standby query pid ${pids[0] ?? '?'}`} ` +
        `(for up to ${delay}; log_recovery_conflict_waits = on would log when the wait began)`;
    }
    case 'unlink':
      return `replay stalled ${describeUnlink(cause)}`;
    case 'inside_record':
      return 'replay stuck inside one WAL record with no recovery conflict (unlinking a dropped table\'s files looks like this)';
    case 'apply_delay_overrun':
      return `replay waits on recovery_min_apply_delay (${formatDuration(cause.delaySeconds * 1000)}) for longer than the delay: ` +
        'the commit times are ahead of the standby\'s clock (is the primary\'s clock ahead?)';
    case 'unknown':
      return cause.waitEventType
        ? `cause unknown (startup process waits on ${cause.waitEventType}/${cause.waitEvent ?? ''})`
        : 'cause unknown (no recovery conflict logged, no table dropped)';
  }
}

/** "on unlink of build_logs (DROP TABLE on primary at 12:00:00 UTC)", or "probably on ..." and what would make it certain. */
export function describeUnlink(cause: Extract<StallCause, { kind: 'unlink' }>): string {
  const what = cause.drop
    ? `unlink of ${cause.drop.details.relation ?? 'a dropped table'} (${cause.drop.details.command} on ${cause.drop.target} at ${formatTime(cause.drop.tsMs)})`
    : `unlink of dropped relation files (${relsOf(cause.afterWait)})`;
  return cause.certain
    ? `on ${what}`
    : `probably on ${what}: the unlink logs nothing; PG 19's pg_stat_recovery (replay inside one record) would make it certain`;
}

/** "DROP TABLE of build_logs on primary at 12:00:00 UTC". */
function describeDrop(drop: RuleEvent<'ddl'>): string {
  const of = drop.details.relation === null ? '' : ` of ${drop.details.relation}`;
  return `${drop.details.command}${of} on ${drop.target} at ${formatTime(drop.tsMs)}`;
}

/** A statement as quoted in a summary: its first line, at most STATEMENT_CHARS characters. */
function clip(statement: string): string {
  const line = statement.split('\n', 1)[0]!.trim();
  return line.length > STATEMENT_CHARS ? `${line.slice(0, STATEMENT_CHARS)}...` : line;
}

const STATEMENT_CHARS = 80;

function relsOf(wait: RuleEvent<'recovery_conflict_wait'> | null): string {
  const rels = /rels: ([^;]*)/.exec(wait?.details.redo_description ?? '')?.[1]?.trim();
  return rels ? `committed at ${wait?.details.redo_lsn ?? '?'}: ${rels}` : 'after a recovery conflict';
}

/** "for 45 s (1.2 GB of received WAL waiting)"; from the log alone, what it shows. */
export function describeStall(stall: ReplayStall): string {
  const waiting = stall.pendingBytes !== null ? ` (${formatBytes(stall.pendingBytes)} of received WAL waiting)` : '';
  const howLong = stall.standingStillSeconds === null
    ? 'for a time its log does not show'
    : `for ${formatDuration(stall.standingStillSeconds * 1000)}${stall.series.length === 0 ? ' (from its log)' : ''}`;
  const delay = stall.applyDelaySeconds === null ? '' : `, beyond its recovery_min_apply_delay of ${formatDuration(stall.applyDelaySeconds * 1000)}`;
  return `${howLong}${delay}${waiting}`;
}

export function causeEventIds(cause: StallCause): number[] {
  switch (cause.kind) {
    case 'conflict':
      return [...(cause.drop ? [cause.drop.id] : []), cause.wait.id, ...cause.cancels.map((c) => c.id)];
    case 'conflict_cancelled':
      return cause.cancels.map((c) => c.id);
    case 'unlink':
      return [...(cause.afterWait ? [cause.afterWait.id] : []), ...(cause.drop ? [cause.drop.id] : [])];
    default:
      return [];
  }
}
