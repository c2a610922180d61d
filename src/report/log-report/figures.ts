/**
 * Arithmetic the sections share, kept exact under merge: figures PostgreSQL prints in seconds
 * with 2 or 3 decimals are kept as integer milliseconds (float sums depend on their grouping, and
 * merges group them differently), and a figure a version does not print stays null, never 0.
 */

/** a + b where a null is "not printed": null only when both are. */
export function sumOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : a + b;
}

/** The larger of a and b, ignoring nulls; null only when both are. */
export function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.max(a, b);
}

/** The smaller of a and b, ignoring nulls; null only when both are. */
export function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

/** Seconds as printed (`0.011`) to integer milliseconds; null stays null. */
export function secondsToMs(seconds: number | null): number | null {
  return seconds === null ? null : Math.round(seconds * 1000);
}

/** Integer milliseconds back to seconds for a result. */
export function msToSeconds(ms: number | null): number | null {
  return ms === null ? null : ms / 1000;
}

/** Adds `amount` to `counts[key]`. */
export function addCount(counts: Record<string, number>, key: string, amount = 1): void {
  counts[key] = (counts[key] ?? 0) + amount;
}

/** `later`'s counts added into `earlier` (returned). */
export function mergeCounts(earlier: Record<string, number>, later: Record<string, number>): Record<string, number> {
  for (const [key, value] of Object.entries(later)) addCount(earlier, key, value);
  return earlier;
}

/** Counts as rows, most first, ties by key, for a result. */
export function rankCounts<K extends string>(counts: Record<string, number>, keyName: K): Array<Record<K, string> & { count: number }> {
  return Object.entries(counts)
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, count]) => ({ [keyName]: key, count }) as Record<K, string> & { count: number });
}

/** A JSON map capped at a number of distinct keys; `size` saves counting them on every miss. */
export interface CappedMap<V> {
  entries: Record<string, V>;
  size: number;
}

export function emptyCappedMap<V>(): CappedMap<V> {
  return { entries: {}, size: 0 };
}

/**
 * The entry for `key`: created with `make` while under `maxKeys`; undefined once over it (the
 * caller counts that event under its "other").
 */
export function cappedEntry<V>(map: CappedMap<V>, key: string, maxKeys: number, make: () => V): V | undefined {
  const known = map.entries[key];
  if (known !== undefined) return known;
  if (map.size >= maxKeys) return undefined;
  map.size++;
  return (map.entries[key] = make());
}

/**
 * `later`'s entries merged into `earlier` (returned): a key both have is merged with `mergeValue`,
 * a new one joins while under `maxKeys`, the rest go to `onOverflow` (the caller's "other").
 */
export function mergeCappedMap<V>(
  earlier: CappedMap<V>, later: CappedMap<V>, maxKeys: number,
  mergeValue: (into: V, from: V) => void, onOverflow: (value: V) => void,
): CappedMap<V> {
  for (const [key, value] of Object.entries(later.entries)) {
    const into = earlier.entries[key];
    if (into !== undefined) mergeValue(into, value);
    else if (earlier.size < maxKeys) {
      earlier.entries[key] = value;
      earlier.size++;
    } else onOverflow(value);
  }
  return earlier;
}
