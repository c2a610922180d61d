/**
 * Duration percentiles that merge: a histogram of logarithmic buckets (the DDSketch idea), each
 * bucket 2% wide, so any quantile read from it is within 1% of a duration that was logged. Plain
 * JSON (bucket index to count), merged by adding counts: exact in any grouping, which the
 * report's ranges and stored minutes need. A statement's durations span a few hundred buckets at
 * most (1 µs to 1 h is ~1,100).
 *
 * Owns: the buckets. Never: what the durations are of.
 */

/** Bucket index (as a string key) to count; durations of 0 µs under ZERO_KEY. */
export type DurationSketch = Record<string, number>;

const RELATIVE_ERROR = 0.01;
const GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR);
const LN_GAMMA = Math.log(GAMMA);
const ZERO_KEY = 'z';

export function addDuration(sketch: DurationSketch, durationUs: number): void {
  if (durationUs <= 0) {
    sketch[ZERO_KEY] = (sketch[ZERO_KEY] ?? 0) + 1;
    return;
  }
  // Keyed by the number: the same property as its string (JS keys are strings), without making
  // the string for every statement of a log.
  const index = Math.ceil(Math.log(durationUs) / LN_GAMMA);
  sketch[index] = (sketch[index] ?? 0) + 1;
}

/** `later`'s counts added into `earlier` (returned). */
export function mergeSketches(earlier: DurationSketch, later: DurationSketch): DurationSketch {
  for (const [key, n] of Object.entries(later)) earlier[key] = (earlier[key] ?? 0) + n;
  return earlier;
}

/**
 * The durations (µs) at the quantiles `qs` (0..1, ascending), by nearest rank; null for an empty
 * sketch. A bucket reads as the value whose relative error to both its edges is RELATIVE_ERROR.
 */
export function quantilesUs(sketch: DurationSketch, qs: readonly number[]): Array<number | null> {
  const buckets = Object.entries(sketch).map(([key, n]) => ({ index: key === ZERO_KEY ? -Infinity : Number(key), n })).sort((a, b) => a.index - b.index);
  const total = buckets.reduce((sum, b) => sum + b.n, 0);
  if (total === 0) return qs.map(() => null);
  const out: Array<number | null> = [];
  let seen = 0;
  let b = 0;
  for (const q of qs) {
    const rank = Math.max(1, Math.ceil(q * total));
    while (seen + buckets[b]!.n < rank) seen += buckets[b++]!.n;
    const index = buckets[b]!.index;
    out.push(index === -Infinity ? 0 : (2 * GAMMA ** index) / (GAMMA + 1));
  }
  return out;
}

/**
 * A sketch with the exact extremes of its durations, which bound what it reads: a single
 * duration reads as itself, and the max is the logged one, not its bucket's value.
 */
export interface DurationDistribution {
  /** null until a duration is recorded. */
  min_us: number | null;
  max_us: number;
  sketch: DurationSketch;
}

export function emptyDistribution(): DurationDistribution {
  return { min_us: null, max_us: 0, sketch: {} };
}

export function addToDistribution(distribution: DurationDistribution, durationUs: number): void {
  if (durationUs > distribution.max_us) distribution.max_us = durationUs;
  if (distribution.min_us === null || durationUs < distribution.min_us) distribution.min_us = durationUs;
  addDuration(distribution.sketch, durationUs);
}

/** `later` added into `earlier` (returned). */
export function mergeDistributions(earlier: DurationDistribution, later: DurationDistribution): DurationDistribution {
  earlier.max_us = Math.max(earlier.max_us, later.max_us);
  if (later.min_us !== null) earlier.min_us = Math.min(earlier.min_us ?? later.min_us, later.min_us);
  mergeSketches(earlier.sketch, later.sketch);
  return earlier;
}

/** A type, not an interface: it is spread into the report's rows, which charts read by counter name. */
export type Percentiles = {
  /** Within 1% of a logged duration, never outside the logged ones. */
  p50_ms: number | null;
  p95_ms: number | null;
  max_ms: number | null;
};

/** The distribution's p50, p95 and max in ms (rounded to the µs); all null when it holds no duration. */
export function percentilesMs(distribution: DurationDistribution): Percentiles {
  const { min_us: minUs, max_us: maxUs } = distribution;
  if (minUs === null) return { p50_ms: null, p95_ms: null, max_ms: null };
  const [p50, p95] = quantilesUs(distribution.sketch, [0.5, 0.95]).map((us) => round3(Math.min(Math.max(us ?? minUs, minUs), maxUs) / 1000));
  return { p50_ms: p50!, p95_ms: p95!, max_ms: maxUs / 1000 };
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}
