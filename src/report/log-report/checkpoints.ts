/**
 * The checkpoints section: one checkpoint per `complete` line, paired with the `starting` line
 * before it for its reason (what requested it; 13-18 print the flags on the start only), with
 * restartpoints (a standby's) apart, the warnings that checkpoints came too close together, and
 * per-minute counts and buffers.
 *
 * A start whose complete falls in a later range or minute is kept open in the state and paired on
 * merge (pairing.ts); a start followed by another start, or by the end of the log, is a checkpoint
 * that never completed (a crash or an immediate shutdown cut it short), counted as `unfinished`.
 */
import type { CheckpointDetails, LogEvent } from '../../domain/index.js';
import { addCount, maxOf, mergeCounts, minOf, msToSeconds, rankCounts, secondsToMs, sumOf } from './figures.js';
import { closePair, emptyPairing, mergePairing, openPair, settleLeading, type PairingCallbacks, type PairingState } from './pairing.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportLimits, type ReportSection } from './section.js';

/**
 * Flags that say how a checkpoint runs, not why: 13-18 `immediate`, `wait`, `flush-all`; PG 19+:
 * `fast`, `flush-unlogged`. The first other flag, in the order PostgreSQL prints them (shutdown,
 * end-of-recovery, force, wal, time), is its reason.
 */
const MODE_FLAGS = new Set(['immediate', 'fast', 'wait', 'flush-all', 'flush-unlogged']);

/** The by_reason key of a checkpoint whose flags were not logged (its start is not in the log). */
export const REASON_NOT_LOGGED = '(start not logged)';

export function checkpointReason(flags: readonly string[] | null): string {
  if (flags === null) return REASON_NOT_LOGGED;
  return flags.find((flag) => !MODE_FLAGS.has(flag)) ?? flags.join(' ');
}

interface Start {
  ts_ms: number;
  restartpoint: boolean;
  flags: string[] | null;
}

/** A completed checkpoint or restartpoint; times in integer ms, null where the line lacks them. */
interface Completed {
  completed_ms: number;
  restartpoint: boolean;
  /** PG 19+ repeats the flags on the complete line. */
  flags: string[] | null;
  buffers_written: number | null;
  write_ms: number | null;
  sync_ms: number | null;
  total_ms: number | null;
  distance_kb: number | null;
  estimate_kb: number | null;
  wal_files_added: number | null;
  wal_files_removed: number | null;
  wal_files_recycled: number | null;
}

/** A checkpoint as the result lists it. */
export interface CheckpointRow {
  started_at: string | null;
  completed_at: string;
  restartpoint: boolean;
  reason: string;
  flags: string[] | null;
  buffers_written: number | null;
  write_s: number | null;
  sync_s: number | null;
  total_s: number | null;
  distance_kb: number | null;
  estimate_kb: number | null;
  wal_files_added: number | null;
  wal_files_removed: number | null;
  wal_files_recycled: number | null;
}

interface Totals {
  count: number;
  unfinished: number;
  by_reason: Record<string, number>;
  buffers_written: number | null;
  write_ms: number | null;
  sync_ms: number | null;
  total_ms: number | null;
  max_total_ms: number | null;
  distance_kb: number | null;
  max_distance_kb: number | null;
  wal_files_added: number | null;
  wal_files_removed: number | null;
  wal_files_recycled: number | null;
}

export interface CheckpointsState {
  checkpoints: Totals;
  restartpoints: Totals;
  too_frequent: { count: number; min_seconds_apart: number | null };
  /** The slowest checkpoints (by total time), at most limits.topN, slowest first. */
  slowest: Array<{ start: Start | null; end: Completed }>;
  /** Keyed by target and checkpoint/restartpoint: one checkpointer per server. */
  pairing: PairingState<Start, Completed>;
  per_minute: PerMinute;
}

export interface CheckpointTotals {
  count: number;
  /** Started and never completed (the next start or the end of the log came first). */
  unfinished: number;
  by_reason: Array<{ reason: string; count: number }>;
  buffers_written: number | null;
  write_s: number | null;
  sync_s: number | null;
  total_s: number | null;
  max_total_s: number | null;
  distance_kb: number | null;
  max_distance_kb: number | null;
  wal_files_added: number | null;
  wal_files_removed: number | null;
  wal_files_recycled: number | null;
}

export interface CheckpointsResult {
  checkpoints: CheckpointTotals;
  restartpoints: CheckpointTotals;
  /** `checkpoints are occurring too frequently` warnings (WAL-triggered checkpoints closer than checkpoint_warning). */
  too_frequent: { count: number; min_seconds_apart: number | null };
  slowest: CheckpointRow[];
  per_minute: MinuteRow[];
}

const MINUTE_COUNTERS = ['checkpoints', 'restartpoints', 'buffers_written', 'too_frequent'] as const;

function emptyTotals(): Totals {
  return {
    count: 0, unfinished: 0, by_reason: {}, buffers_written: null, write_ms: null, sync_ms: null, total_ms: null,
    max_total_ms: null, distance_kb: null, max_distance_kb: null, wal_files_added: null, wal_files_removed: null, wal_files_recycled: null,
  };
}

function completed(event: LogEvent<'checkpoint'>, d: CheckpointDetails): Completed {
  return {
    completed_ms: event.tsMs, restartpoint: d.restartpoint, flags: d.reasons, buffers_written: d.buffers_written,
    write_ms: secondsToMs(d.write_s), sync_ms: secondsToMs(d.sync_s), total_ms: secondsToMs(d.total_s),
    distance_kb: d.distance_kb, estimate_kb: d.estimate_kb,
    wal_files_added: d.wal_files_added, wal_files_removed: d.wal_files_removed, wal_files_recycled: d.wal_files_recycled,
  };
}

/** Adds one completed checkpoint (or restartpoint) to `state`, with its start when logged. */
function countCheckpoint(state: CheckpointsState, start: Start | null, end: Completed, limits: ReportLimits): void {
  const t = end.restartpoint ? state.restartpoints : state.checkpoints;
  t.count++;
  addCount(t.by_reason, checkpointReason(start?.flags ?? end.flags));
  t.buffers_written = sumOf(t.buffers_written, end.buffers_written);
  t.write_ms = sumOf(t.write_ms, end.write_ms);
  t.sync_ms = sumOf(t.sync_ms, end.sync_ms);
  t.total_ms = sumOf(t.total_ms, end.total_ms);
  t.max_total_ms = maxOf(t.max_total_ms, end.total_ms);
  t.distance_kb = sumOf(t.distance_kb, end.distance_kb);
  t.max_distance_kb = maxOf(t.max_distance_kb, end.distance_kb);
  t.wal_files_added = sumOf(t.wal_files_added, end.wal_files_added);
  t.wal_files_removed = sumOf(t.wal_files_removed, end.wal_files_removed);
  t.wal_files_recycled = sumOf(t.wal_files_recycled, end.wal_files_recycled);
  state.slowest = keepSlowest([...state.slowest, { start, end }], limits.topN);
}

/** Slowest first; ties by completion time, so the order does not depend on the merge grouping. */
function keepSlowest(list: CheckpointsState['slowest'], topN: number): CheckpointsState['slowest'] {
  return list
    .sort((a, b) => (b.end.total_ms ?? -1) - (a.end.total_ms ?? -1) || a.end.completed_ms - b.end.completed_ms || Number(a.end.restartpoint) - Number(b.end.restartpoint))
    .slice(0, topN);
}

function totalsOf(state: CheckpointsState, restartpoint: boolean): Totals {
  return restartpoint ? state.restartpoints : state.checkpoints;
}

/** Pairs found by `add` and by `merge` count alike into `state`. */
function callbacks(state: CheckpointsState, limits: ReportLimits): PairingCallbacks<Start, Completed> {
  return {
    onPaired: (start, end) => countCheckpoint(state, start, end, limits),
    onAbandoned: (start) => totalsOf(state, start.restartpoint).unfinished++,
  };
}

function pairingKey(target: string, restartpoint: boolean): string {
  return `${target}\u0000${restartpoint ? 'restartpoint' : 'checkpoint'}`;
}

export const checkpointsSection: ReportSection<CheckpointsState, CheckpointsResult> = {
  key: 'checkpoints',

  empty: () => ({
    checkpoints: emptyTotals(), restartpoints: emptyTotals(), too_frequent: { count: 0, min_seconds_apart: null },
    slowest: [], pairing: emptyPairing(), per_minute: {},
  }),

  add(state, event, limits) {
    if (event.kind !== 'checkpoint') return;
    const d = event.details;
    if (d.phase === 'too_frequent') {
      state.too_frequent.count++;
      state.too_frequent.min_seconds_apart = minOf(state.too_frequent.min_seconds_apart, d.seconds_apart);
      countInMinute(state.per_minute, event.tsMs, 'too_frequent');
      return;
    }
    const key = pairingKey(event.target, d.restartpoint);
    const on = callbacks(state, limits);
    if (d.phase === 'starting') {
      openPair(state.pairing, key, { ts_ms: event.tsMs, restartpoint: d.restartpoint, flags: d.reasons }, on);
      return;
    }
    closePair(state.pairing, key, completed(event, d), on);
    countInMinute(state.per_minute, event.tsMs, d.restartpoint ? 'restartpoints' : 'checkpoints');
    if (d.buffers_written !== null) countInMinute(state.per_minute, event.tsMs, 'buffers_written', d.buffers_written);
  },

  merge(earlier, later, limits) {
    for (const which of ['checkpoints', 'restartpoints'] as const) mergeTotals(earlier[which], later[which]);
    earlier.too_frequent.count += later.too_frequent.count;
    earlier.too_frequent.min_seconds_apart = minOf(earlier.too_frequent.min_seconds_apart, later.too_frequent.min_seconds_apart);
    earlier.slowest = keepSlowest([...earlier.slowest, ...later.slowest], limits.topN);
    earlier.per_minute = mergePerMinute(earlier.per_minute, later.per_minute);
    earlier.pairing = mergePairing(earlier.pairing, later.pairing, callbacks(earlier, limits));
    return earlier;
  },

  result(state, limits) {
    const settled: CheckpointsState = structuredClone(state);
    // Nothing comes before the state now: a leading complete has no start, an open start no complete.
    settleLeading(settled.pairing, (end) => countCheckpoint(settled, null, end, limits));
    for (const start of Object.values(settled.pairing.open)) totalsOf(settled, start.restartpoint).unfinished++;
    return {
      checkpoints: totalsResult(settled.checkpoints),
      restartpoints: totalsResult(settled.restartpoints),
      too_frequent: { ...settled.too_frequent },
      slowest: settled.slowest.map(({ start, end }) => row(start, end)),
      per_minute: perMinuteRows(settled.per_minute, MINUTE_COUNTERS),
    };
  },
};

function mergeTotals(into: Totals, from: Totals): void {
  into.count += from.count;
  into.unfinished += from.unfinished;
  mergeCounts(into.by_reason, from.by_reason);
  for (const field of ['buffers_written', 'write_ms', 'sync_ms', 'total_ms', 'distance_kb', 'wal_files_added', 'wal_files_removed', 'wal_files_recycled'] as const) {
    into[field] = sumOf(into[field], from[field]);
  }
  into.max_total_ms = maxOf(into.max_total_ms, from.max_total_ms);
  into.max_distance_kb = maxOf(into.max_distance_kb, from.max_distance_kb);
}

function totalsResult(t: Totals): CheckpointTotals {
  return {
    count: t.count, unfinished: t.unfinished, by_reason: rankCounts(t.by_reason, 'reason'),
    buffers_written: t.buffers_written, write_s: msToSeconds(t.write_ms), sync_s: msToSeconds(t.sync_ms),
    total_s: msToSeconds(t.total_ms), max_total_s: msToSeconds(t.max_total_ms),
    distance_kb: t.distance_kb, max_distance_kb: t.max_distance_kb,
    wal_files_added: t.wal_files_added, wal_files_removed: t.wal_files_removed, wal_files_recycled: t.wal_files_recycled,
  };
}

function row(start: Start | null, end: Completed): CheckpointRow {
  return {
    started_at: start === null ? null : new Date(start.ts_ms).toISOString(),
    completed_at: new Date(end.completed_ms).toISOString(),
    restartpoint: end.restartpoint,
    reason: checkpointReason(start?.flags ?? end.flags),
    flags: start?.flags ?? end.flags,
    buffers_written: end.buffers_written,
    write_s: msToSeconds(end.write_ms), sync_s: msToSeconds(end.sync_ms), total_s: msToSeconds(end.total_ms),
    distance_kb: end.distance_kb, estimate_kb: end.estimate_kb,
    wal_files_added: end.wal_files_added, wal_files_removed: end.wal_files_removed, wal_files_recycled: end.wal_files_recycled,
  };
}
