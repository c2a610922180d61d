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

/** What a soak may show and still be judged flat. */
export interface SoakLimits {
  /** Least-squares trend over the last two thirds, MB per hour. */
  rssMbPerHour: number;
  heapMbPerHour: number;
  storeMbPerHour: number;
  /** Open descriptors: the last third's median over the second's. */
  extraFds: number;
  /** Median of the per-window event-loop delay p99s. */
  lagP99Seconds: number;
}

/**
 * A leak of 4 kB a poll, at one poll of every collector each 2 s, is 7 MB an hour: the trends must
 * stay under about that. The heap's first 20 minutes are the rules' event cache filling
 * (docs/reliability.md), so its trend means something only when the warm-up third covers them.
 */
export const SOAK_LIMITS: SoakLimits = { rssMbPerHour: 8, heapMbPerHour: 6, storeMbPerHour: 3, extraFds: 0, lagP99Seconds: 0.1 };

export interface SoakFigures {
  rss: Trend;
  heapUsed: Trend;
  openFds: Trend;
  storeSize: Trend;
  lagP99Median: number;
  loadAverage: number;
  cores: number;
}

/** One verdict: ok is null when the figure could not be judged (and `says` why). */
export interface Verdict {
  figure: string;
  ok: boolean | null;
  says: string;
}

const MB_BYTES = 1_048_576;

export function judgeSoak(figures: SoakFigures, limits: SoakLimits = SOAK_LIMITS): Verdict[] {
  const trend = (figure: string, t: Trend, limitMbPerHour: number): Verdict => {
    const mbPerHour = t.perHour / MB_BYTES;
    return { figure, ok: mbPerHour <= limitMbPerHour, says: `${figure} ${mbPerHour >= 0 ? '+' : ''}${mbPerHour.toFixed(1)} MB/h (limit +${limitMbPerHour} MB/h)` };
  };
  return [
    trend('RSS', figures.rss, limits.rssMbPerHour),
    trend('heap used', figures.heapUsed, limits.heapMbPerHour),
    trend('store size', figures.storeSize, limits.storeMbPerHour),
    { figure: 'open fds', ok: figures.openFds.end <= figures.openFds.middle + limits.extraFds,
      says: `open fds ${figures.openFds.middle} then ${figures.openFds.end} (limit +${limits.extraFds})` },
    judgeLag(figures, limits),
  ];
}

/**
 * The event-loop delay is the daemon's own work only on a machine with cores to spare: on one
 * running several times as many processes as it has cores it mostly waits for a core, so it is
 * not judged there, and says so.
 */
export function judgeLag(figures: Pick<SoakFigures, 'lagP99Median' | 'loadAverage' | 'cores'>, limits: Pick<SoakLimits, 'lagP99Seconds'> = SOAK_LIMITS): Verdict {
  const measured = `event-loop delay p99 median ${(figures.lagP99Median * 1000).toFixed(0)} ms (limit ${limits.lagP99Seconds * 1000} ms)`;
  if (figures.loadAverage > 2 * figures.cores) {
    return { figure: 'event-loop delay', ok: null, says: `${measured} not judged: load average ${figures.loadAverage.toFixed(1)} on ${figures.cores} cores` };
  }
  return { figure: 'event-loop delay', ok: figures.lagP99Median < limits.lagP99Seconds, says: measured };
}
