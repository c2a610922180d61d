/**
 * Change rate per table (updates + deletes per second) from consecutive samples of
 * pg_stat_user_tables.n_tup_upd + n_tup_del, and from it PostgreSQL 19 REPACK (CONCURRENTLY)'s
 * budget (seed 000_ddfba2eacd9de59b.txt): REPACK keeps ~50 bytes per concurrently updated or
 * deleted row and fails once more than 104,857,600 of them pile up during one run, so
 *
 *   hours_until_ceiling = 104857600 / changes_per_sec / 3600
 *
 * is how long a REPACK of that table can run at the current rate (exported in seconds, the base
 * unit). Pure: the previous state is passed in and the next one returned.
 */
import { secondsUntilCeiling } from '../domain/repack-ceiling.js';

export interface ChangeCounter {
  /** n_tup_upd + n_tup_del */
  changes: number;
  tsMs: number;
}

/** Last counter per table key (e.g. relid). */
export type ChangeRateState = ReadonlyMap<string, ChangeCounter>;

export interface ChangeRate {
  changesPerSec: number;
  /** The seed's hours_until_ceiling x 3600; null while the table sees no updates or deletes (`nullif(..., 0)`). */
  secondsUntilCeiling: number | null;
}


/**
 * Rates for the tables present in both `prev` and `current`. A counter that went backwards
 * (stats reset, table truncated and recreated under the same key) gives no rate and restarts.
 * Entries not refreshed for `forgetAfterMs` are dropped, so tables that left the top-N or were
 * dropped do not pile up.
 */
export function deriveChangeRates(
  prev: ChangeRateState,
  current: ReadonlyMap<string, ChangeCounter>,
  forgetAfterMs: number,
): { state: ChangeRateState; rates: Map<string, ChangeRate> } {
  const rates = new Map<string, ChangeRate>();
  const state = new Map<string, ChangeCounter>();
  let latestMs = -Infinity;
  for (const [key, now] of current) {
    state.set(key, now);
    latestMs = Math.max(latestMs, now.tsMs);
    const before = prev.get(key);
    if (!before || now.tsMs <= before.tsMs || now.changes < before.changes) continue;
    const changesPerSec = (now.changes - before.changes) / ((now.tsMs - before.tsMs) / 1000);
    rates.set(key, { changesPerSec, secondsUntilCeiling: secondsUntilCeiling(changesPerSec) });
  }
  for (const [key, before] of prev) {
    if (!state.has(key) && latestMs - before.tsMs < forgetAfterMs) state.set(key, before);
  }
  return { state, rates };
}
