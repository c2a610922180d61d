/**
 * The log report (issue #26): what the database was doing, from its log alone. Each section
 * (queries, errors, sessions, checkpoints, temp files, maintenance, locks) is a fold over events
 * whose state is plain JSON, so that the same state serves three callers:
 * - `pgvigil analyze -j N`: each range's worker folds the events it parses and sends its state
 *   with its result; the merge puts the ranges' states together in file order;
 * - the daemon: events fold into one state per target and minute, stored as JSON, so that
 *   `pgvigil report --from --to` merges stored minutes instead of re-reading logs;
 * - tests: fold a recorded log, compare the result with a golden file.
 *
 * Owns: the contract. Never: a section's own logic (one file per section beside this one).
 */
import type { AnyLogEvent } from '../../domain/index.js';

/** Bounds every section keeps to, whatever the size of the logs. */
export interface ReportLimits {
  /** Distinct keys (fingerprints, SQLSTATEs, tables, users) a state keeps; later ones are counted under "other". */
  maxKeys: number;
  /** Entries in each ranked list of a result. */
  topN: number;
}

export const DEFAULT_REPORT_LIMITS: ReportLimits = { maxKeys: 5_000, topN: 20 };

/**
 * One section of the report. `State` is JSON (objects, arrays, numbers, strings, null: no Map, no
 * class, no undefined), bounded by `limits.maxKeys`, and its `merge` is associative, so minutes
 * and ranges can be put together in any grouping as long as their order is kept.
 */
export interface ReportSection<State, Result> {
  /** The section's key in `analyze --json` and in the store: snake_case. */
  readonly key: string;
  empty(): State;
  /** Folds one event into `state` (mutated); events come in log order within a range or minute. */
  add(state: State, event: AnyLogEvent, limits: ReportLimits): void;
  /** `earlier` followed by `later` (both may be mutated or returned); the inputs are not used after. */
  merge(earlier: State, later: State, limits: ReportLimits): State;
  /** What the report shows: ranked, percentiles computed, capped at `limits.topN`. */
  result(state: State, limits: ReportLimits): Result;
}

/**
 * Counts per minute, the histograms of every section: minute start (epoch ms, as a string key,
 * so the state stays JSON) to counter name to value. Bounded by the log's span, not its size.
 */
export type PerMinute = Record<string, Record<string, number>>;

export const MINUTE_MS = 60_000;

/** Adds `amount` to `counter` in the minute of `tsMs`. */
export function countInMinute(perMinute: PerMinute, tsMs: number, counter: string, amount = 1): void {
  const counters = countersInMinute(perMinute, tsMs);
  counters[counter] = (counters[counter] ?? 0) + amount;
}

/** The last minute's key: most events fall in the minute of the one before them. */
let lastMinuteMs = NaN;
let lastMinuteKey = '';

/** The key of the minute of `tsMs` in a PerMinute (or in anything else kept per minute). */
export function minuteKey(tsMs: number): string {
  if (!(tsMs >= lastMinuteMs && tsMs < lastMinuteMs + MINUTE_MS)) {
    lastMinuteMs = Math.floor(tsMs / MINUTE_MS) * MINUTE_MS;
    lastMinuteKey = String(lastMinuteMs);
  }
  return lastMinuteKey;
}

/** The counters of the minute of `tsMs` (created empty), for a section that adds several per event. */
export function countersInMinute(perMinute: PerMinute, tsMs: number): Record<string, number> {
  return (perMinute[minuteKey(tsMs)] ??= {});
}

/** `later`'s minutes added into `earlier` (returned). */
export function mergePerMinute(earlier: PerMinute, later: PerMinute): PerMinute {
  for (const [minute, counters] of Object.entries(later)) {
    const into = (earlier[minute] ??= {});
    for (const [counter, value] of Object.entries(counters)) into[counter] = (into[counter] ?? 0) + value;
  }
  return earlier;
}

/** One row of a section's histogram: the minute (ISO 8601 UTC) and its counters, 0 where none. */
export type MinuteRow = { minute: string } & Record<string, number | string>;

/** The minutes in time order, each with every counter named in `counters` (0 when absent). */
export function perMinuteRows(perMinute: PerMinute, counters: readonly string[]): MinuteRow[] {
  return Object.keys(perMinute).map(Number).sort((a, b) => a - b).map((minuteMs) => {
    const row: MinuteRow = { minute: new Date(minuteMs).toISOString() };
    for (const counter of counters) row[counter] = perMinute[String(minuteMs)]![counter] ?? 0;
    return row;
  });
}
