/**
 * What a soak's samples say about a leak, without I/O: per figure its first and last values, the
 * medians of the second and last thirds of the run, and the trend over those two thirds. The first
 * third is warm-up (caches, pools, the store filling up to its retention) and is not judged: a
 * leak shows as the last third sitting above the second, which noise around a flat line does not.
 */
import { median } from './measure.js';

export interface Trend {
  first: number;
  last: number;
  /** Median of the second third of the samples. */
  middle: number;
  /** Median of the last third. */
  end: number;
  /** end / middle. */
  growth: number;
  /** Least-squares slope over the last two thirds, per hour. */
  perHour: number;
}

/** A run of samples: t in seconds since the start, value in the figure's unit. */
export interface Point {
  t: number;
  value: number;
}

/** Needs at least 6 points (two in each third). */
export function trendOf(points: readonly Point[]): Trend {
  if (points.length < 6) throw new Error(`a trend needs at least 6 samples, got ${points.length}`);
  const third = Math.floor(points.length / 3);
  const second = points.slice(third, 2 * third);
  const last = points.slice(2 * third);
  const middle = median(second.map((p) => p.value));
  const end = median(last.map((p) => p.value));
  return {
    first: points[0]!.value,
    last: points.at(-1)!.value,
    middle,
    end,
    growth: middle === 0 ? (end === 0 ? 1 : Infinity) : end / middle,
    perHour: slope(points.slice(third)) * 3600,
  };
}

function slope(points: readonly Point[]): number {
  const n = points.length;
  const meanT = points.reduce((s, p) => s + p.t, 0) / n;
  const meanV = points.reduce((s, p) => s + p.value, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - meanT) * (p.value - meanV);
    den += (p.t - meanT) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** One line for a report: "rss 81.2 -> 84.0 MB (medians 82.1 then 82.4, x1.00, +1.1 MB/h)". */
export function describeTrend(name: string, trend: Trend, unit: { name: string; scale: number; digits?: number }): string {
  const f = (v: number) => (v / unit.scale).toFixed(unit.digits ?? 1);
  const sign = trend.perHour >= 0 ? '+' : '-';
  return `${name} ${f(trend.first)} -> ${f(trend.last)} ${unit.name} (medians of the 2nd and last thirds ${f(trend.middle)} then ${f(trend.end)},` +
    ` x${trend.growth.toFixed(2)}, ${sign}${f(Math.abs(trend.perHour))} ${unit.name}/h)`;
}
