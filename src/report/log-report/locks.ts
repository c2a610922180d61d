/**
 * The locks section: lock waits per relation (log_lock_waits: who waited, who held the lock, the
 * longest wait, and how waits ended: acquired, timed out, deadlocked), deadlocks with their whole
 * cycle, and statements cancelled or sessions terminated, by cause; with per-minute counts.
 *
 * Before PG 19 a lock timeout names no lock: it is put on the relation its process was logged
 * waiting for (the `still waiting` line after deadlock_timeout) when that wait is at most
 * 10 minutes old and has not ended. That wait may be in an earlier range or minute than the
 * timeout: it stays open in the state and pairs on merge (pairing.ts).
 */
import type { AnyLogEvent, DeadlockDetails, LockWaitDetails, LogEvent } from '../../domain/index.js';
import { lockObjectName } from '../../domain/index.js';
import { addCount, cappedEntry, emptyCappedMap, maxOf, mergeCappedMap, mergeCounts, rankCounts, type CappedMap } from './figures.js';
import { lockedRelation } from './lock-relation.js';
import { closePair, emptyPairing, forgetSettled, mergePairing, openPair, settleLeading, type PairingCallbacks, type PairingState } from './pairing.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportLimits, type ReportSection } from './section.js';

/** A lock timeout takes the lock of a wait logged at most this long before it. */
const TIMEOUT_PAIRS_WITHIN_MS = 10 * 60_000;
/** Waiting and holding PIDs kept per relation: enough to name who was involved, bounded. */
const MAX_PIDS_PER_RELATION = 10;
/** The relation of a lock timeout with no lock in it (before PG 19) and no logged wait before it. */
export const TIMEOUT_LOCK_NOT_LOGGED = '(lock timeout: PostgreSQL < 19 names no lock, and no wait was logged)';

interface RelationWaits {
  /** Lock-wait lines by phase: waiting, acquired, detected_deadlock, avoided_deadlock, failed, could_not_obtain. */
  phases: Record<string, number>;
  timed_out: number;
  longest_wait_ms: number | null;
  lock_modes: Record<string, number>;
  /** Waiting PID to the statement it ran (null when not logged), the first MAX_PIDS_PER_RELATION. */
  waiters: Record<string, string | null>;
  /** PIDs holding the lock (DETAIL `Process holding the lock`), the first MAX_PIDS_PER_RELATION. */
  blockers: number[];
}

export interface DeadlockCycle {
  at: string;
  database: string | null;
  /** The process whose statement was cancelled to break the cycle. */
  pid: number | null;
  statement: string | null;
  /** In cycle order: each waits for the next. */
  processes: Array<{ pid: number; lock_mode: string | null; lock: string | null; blocked_by_pid: number | null; statement: string | null }>;
  relations: string[];
}

interface WaitStart {
  relation: string;
  ts_ms: number;
}

/** What ends a logged wait: a timeout (to be put on the wait's relation) or any other outcome. */
type WaitEnd = { timeout: true; ts_ms: number } | { timeout: false };

export interface LocksState {
  relations: CappedMap<RelationWaits>;
  other: RelationWaits;
  /** Keyed by target and PID: the wait each process is in, for the lock timeout that may follow. */
  waits: PairingState<WaitStart, WaitEnd>;
  deadlocks: { count: number; by_relation: Record<string, number>; cycles: DeadlockCycle[] };
  /** Cause to count, and to how many of them terminated the session (FATAL) rather than the statement. */
  cancellations: Record<string, { count: number; terminated: number }>;
  per_minute: PerMinute;
}

export type RelationWaitsResult = {
  relation: string;
  waits: number;
  acquired: number;
  timed_out: number;
  deadlocked: number;
  could_not_obtain: number;
  longest_wait_ms: number | null;
  lock_modes: Array<{ mode: string; count: number }>;
  waiters: Array<{ pid: number; statement: string | null }>;
  /** Holders of the lock; a holder's statement when it was itself logged waiting in this log. */
  blockers: Array<{ pid: number; statement: string | null }>;
};

export interface LocksResult {
  lock_waits: { waits: number; timed_out: number; longest_wait_ms: number | null; relations_total: number; by_relation: RelationWaitsResult[]; other: RelationWaitsResult | null };
  deadlocks: { count: number; by_relation: Array<{ relation: string; count: number }>; cycles: DeadlockCycle[] };
  cancellations: { total: number; by_cause: Array<{ cause: string; count: number; terminated: number }> };
  per_minute: MinuteRow[];
}

const MINUTE_COUNTERS = ['lock_waits', 'lock_timeouts', 'deadlocks', 'cancellations'] as const;

function emptyRelation(): RelationWaits {
  return { phases: {}, timed_out: 0, longest_wait_ms: null, lock_modes: {}, waiters: {}, blockers: [] };
}

function mergeRelation(into: RelationWaits, from: RelationWaits): void {
  mergeCounts(into.phases, from.phases);
  into.timed_out += from.timed_out;
  into.longest_wait_ms = maxOf(into.longest_wait_ms, from.longest_wait_ms);
  mergeCounts(into.lock_modes, from.lock_modes);
  for (const [pid, statement] of Object.entries(from.waiters)) addWaiter(into, Number(pid), statement);
  for (const pid of from.blockers) addBlocker(into, pid);
}

function addWaiter(row: RelationWaits, pid: number, statement: string | null): void {
  const known = row.waiters[pid];
  if (known !== undefined) {
    if (known === null) row.waiters[pid] = statement;
  } else if (Object.keys(row.waiters).length < MAX_PIDS_PER_RELATION) {
    row.waiters[pid] = statement;
  }
}

function addBlocker(row: RelationWaits, pid: number): void {
  if (!row.blockers.includes(pid) && row.blockers.length < MAX_PIDS_PER_RELATION) row.blockers.push(pid);
}

function relationRow(state: LocksState, relation: string, limits: ReportLimits): RelationWaits {
  return cappedEntry(state.relations, relation, limits.maxKeys, emptyRelation) ?? state.other;
}

/** Timeouts found by `add` and by `merge` go alike to the relation of the wait they end. */
function waitCallbacks(state: LocksState, limits: ReportLimits): PairingCallbacks<WaitStart, WaitEnd> {
  return {
    onPaired: (start, end) => {
      if (!end.timeout) return;
      const relation = start !== null && end.ts_ms - start.ts_ms <= TIMEOUT_PAIRS_WITHIN_MS ? start.relation : TIMEOUT_LOCK_NOT_LOGGED;
      relationRow(state, relation, limits).timed_out++;
    },
    onAbandoned: () => undefined,
  };
}

function waitKey(event: AnyLogEvent, pid: number): string {
  return `${event.target}\u0000${pid}`;
}

function addLockWait(state: LocksState, event: LogEvent<'lock_wait'>, limits: ReportLimits): void {
  const d: LockWaitDetails = event.details;
  const relation = lockedRelation(d.lock_object, d.context);
  const row = relationRow(state, relation, limits);
  addCount(row.phases, d.phase);
  addCount(row.lock_modes, d.lock_mode);
  row.longest_wait_ms = maxOf(row.longest_wait_ms, d.wait_ms);
  addWaiter(row, d.waiting_pid, d.statement);
  for (const pid of d.holder_pids ?? []) addBlocker(row, pid);
  const key = waitKey(event, d.waiting_pid);
  const on = waitCallbacks(state, limits);
  if (d.phase === 'waiting') {
    openPair(state.waits, key, { relation, ts_ms: event.tsMs }, on);
    countInMinute(state.per_minute, event.tsMs, 'lock_waits');
  } else {
    closePair(state.waits, key, { timeout: false }, on);
  }
  forgetSettled(state.waits, limits.maxKeys);
}

function addLockTimeout(state: LocksState, event: LogEvent<'lock_timeout'>, limits: ReportLimits): void {
  const d = event.details;
  countInMinute(state.per_minute, event.tsMs, 'lock_timeouts');
  const on = waitCallbacks(state, limits);
  if (event.pid === null) {
    relationRow(state, d.lock_object === null ? TIMEOUT_LOCK_NOT_LOGGED : lockedRelation(d.lock_object, d.context), limits).timed_out++;
    return;
  }
  const key = waitKey(event, event.pid);
  if (d.lock_object !== null) {
    // PG 19+ names the lock itself; the wait it ends, if logged, is over.
    relationRow(state, lockedRelation(d.lock_object, d.context), limits).timed_out++;
    closePair(state.waits, key, { timeout: false }, on);
  } else {
    closePair(state.waits, key, { timeout: true, ts_ms: event.tsMs }, on);
  }
  forgetSettled(state.waits, limits.maxKeys);
}

export function deadlockCycle(event: AnyLogEvent, d: DeadlockDetails): DeadlockCycle {
  const processes = d.processes.map((p) => ({
    pid: p.pid, lock_mode: p.lock_mode, lock: p.lock_object === null ? null : lockObjectName(p.lock_object),
    blocked_by_pid: p.blocked_by_pid, statement: p.query,
  }));
  const relations = new Set<string>();
  for (const p of d.processes) {
    if (p.lock_object?.relation_oid != null) relations.add(lockedRelation(p.lock_object, null));
  }
  // The cancelled process's CONTEXT names the table of a row-lock cycle.
  const fromContext = lockedRelation(null, d.context);
  if (relations.size === 0) relations.add(fromContext);
  return { at: new Date(event.tsMs).toISOString(), database: event.database, pid: d.pid, statement: d.statement, processes, relations: [...relations] };
}

/** The cause of a cancelled statement or terminated session, from the event; null when it is none. */
export function cancellationCause(event: AnyLogEvent): string | null {
  switch (event.kind) {
    case 'statement_timeout':
    case 'lock_timeout':
    case 'idle_in_transaction_timeout':
    case 'transaction_timeout':
    case 'deadlock':
      return event.kind;
    case 'recovery_conflict':
      return `recovery_conflict_${event.details.reason ?? 'unknown'}`;
    case 'generic':
      // Most of a busy log is generic LOG lines (durations, statements): no lookup of their text.
      // English messages only: a translated log's cancellations by hand are not recognised.
      return event.level === 'ERROR' || event.level === 'FATAL' ? GENERIC_CAUSES.get(event.message) ?? null : null;
    default:
      return null;
  }
}

/** Cancellations no classifier makes an event of (postgres.c ProcessInterrupts, 13-19). */
const GENERIC_CAUSES = new Map([
  // 57014: pg_cancel_backend(), or a client's cancel request (Ctrl-C in psql).
  ['canceling statement due to user request', 'user_request'],
  // 57P01: pg_terminate_backend(), or the server shutting down.
  ['terminating connection due to administrator command', 'administrator_command'],
  // 57014 in an autovacuum worker: a lock request that conflicts with its table lock cancels it.
  ['canceling autovacuum task', 'autovacuum_cancelled'],
]);

function addCancellation(state: LocksState, event: AnyLogEvent): void {
  const cause = cancellationCause(event);
  if (cause === null) return;
  const counts = (state.cancellations[cause] ??= { count: 0, terminated: 0 });
  counts.count++;
  if (event.level === 'FATAL') counts.terminated++;
  countInMinute(state.per_minute, event.tsMs, 'cancellations');
}

export const locksSection: ReportSection<LocksState, LocksResult> = {
  key: 'locks',

  empty: () => ({
    relations: emptyCappedMap(), other: emptyRelation(), waits: emptyPairing(),
    deadlocks: { count: 0, by_relation: {}, cycles: [] }, cancellations: {}, per_minute: {},
  }),

  add(state, event, limits) {
    addCancellation(state, event);
    if (event.kind === 'lock_wait') addLockWait(state, event, limits);
    else if (event.kind === 'lock_timeout') addLockTimeout(state, event, limits);
    else if (event.kind === 'deadlock') {
      const cycle = deadlockCycle(event, event.details);
      state.deadlocks.count++;
      for (const relation of cycle.relations) addCount(state.deadlocks.by_relation, relation);
      if (state.deadlocks.cycles.length < limits.topN) state.deadlocks.cycles.push(cycle);
      countInMinute(state.per_minute, event.tsMs, 'deadlocks');
    }
  },

  merge(earlier, later, limits) {
    mergeCappedMap(earlier.relations, later.relations, limits.maxKeys, mergeRelation, (overflow) => mergeRelation(earlier.other, overflow));
    mergeRelation(earlier.other, later.other);
    earlier.waits = mergePairing(earlier.waits, later.waits, waitCallbacks(earlier, limits));
    forgetSettled(earlier.waits, limits.maxKeys);
    earlier.deadlocks.count += later.deadlocks.count;
    mergeCounts(earlier.deadlocks.by_relation, later.deadlocks.by_relation);
    earlier.deadlocks.cycles = [...earlier.deadlocks.cycles, ...later.deadlocks.cycles].slice(0, limits.topN);
    for (const [cause, counts] of Object.entries(later.cancellations)) {
      const into = (earlier.cancellations[cause] ??= { count: 0, terminated: 0 });
      into.count += counts.count;
      into.terminated += counts.terminated;
    }
    earlier.per_minute = mergePerMinute(earlier.per_minute, later.per_minute);
    return earlier;
  },

  result(state, limits) {
    const settled: LocksState = structuredClone(state);
    // Nothing comes before the state now: a leading timeout had no logged wait.
    const on = waitCallbacks(settled, limits);
    settleLeading(settled.waits, (end) => on.onPaired(null, end));
    return {
      lock_waits: waitsResult(settled, limits),
      deadlocks: { count: settled.deadlocks.count, by_relation: rankCounts(settled.deadlocks.by_relation, 'relation').slice(0, limits.topN), cycles: settled.deadlocks.cycles },
      cancellations: {
        total: Object.values(settled.cancellations).reduce((n, c) => n + c.count, 0),
        by_cause: Object.entries(settled.cancellations)
          .map(([cause, c]) => ({ cause, ...c }))
          .sort((a, b) => b.count - a.count || (a.cause < b.cause ? -1 : 1)),
      },
      per_minute: perMinuteRows(settled.per_minute, MINUTE_COUNTERS),
    };
  },
};

function waitsResult(state: LocksState, limits: ReportLimits): LocksResult['lock_waits'] {
  const rows = [...Object.entries(state.relations.entries), ['(other)', state.other] as const];
  // A blocker's statement is known when it was itself logged waiting, on any relation.
  const statements = new Map<number, string>();
  for (const [, row] of rows) {
    for (const [pid, statement] of Object.entries(row.waiters)) if (statement !== null) statements.set(Number(pid), statement);
  }
  const relationResult = (relation: string, row: RelationWaits): RelationWaitsResult => ({
    relation,
    waits: row.phases.waiting ?? 0,
    acquired: row.phases.acquired ?? 0,
    timed_out: row.timed_out,
    deadlocked: row.phases.detected_deadlock ?? 0,
    could_not_obtain: row.phases.could_not_obtain ?? 0,
    longest_wait_ms: row.longest_wait_ms,
    lock_modes: rankCounts(row.lock_modes, 'mode'),
    waiters: Object.entries(row.waiters).map(([pid, statement]) => ({ pid: Number(pid), statement })),
    blockers: row.blockers.map((pid) => ({ pid, statement: statements.get(pid) ?? null })),
  });
  const byRelation = Object.entries(state.relations.entries).map(([relation, row]) => relationResult(relation, row))
    .sort((a, b) => b.waits + b.timed_out - (a.waits + a.timed_out) || (b.longest_wait_ms ?? 0) - (a.longest_wait_ms ?? 0) || (a.relation < b.relation ? -1 : 1));
  const other = Object.keys(state.other.phases).length > 0 || state.other.timed_out > 0 ? relationResult('(other)', state.other) : null;
  return {
    waits: rows.reduce((n, [, row]) => n + (row.phases.waiting ?? 0), 0),
    timed_out: rows.reduce((n, [, row]) => n + row.timed_out, 0),
    longest_wait_ms: rows.reduce<number | null>((max, [, row]) => maxOf(max, row.longest_wait_ms), null),
    relations_total: state.relations.size,
    by_relation: byRelation.slice(0, limits.topN),
    other,
  };
}
