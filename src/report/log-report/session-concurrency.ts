/**
 * Concurrent sessions from the log: +1 at each `connection authorized` line, -1 at each
 * `disconnection` line and at each login refused after its authorized line (it never became a
 * session and writes no disconnection line). Per minute the state keeps the net change and the
 * highest and lowest running count within the minute, relative to the minute's start: these
 * merge exactly (a maximum prefix sum), so the peak is the same however the log was split.
 *
 * The running count starts at 0 where the log starts, so sessions open before it are not seen
 * until they end: their disconnections take the count below 0. The lowest count reached says how
 * many of them there were at least, and is added back to every minute (the baseline): a session
 * open before the log and closed in it counts from the log's start. Sessions open before the log
 * and still open at its end are not seen at all. Sessions of backends that died without a
 * disconnection line (a crash) stay counted.
 *
 * Owns: the arithmetic. Never: which lines open or close a session (sessions.ts).
 */

const MINUTE_MS = 60_000;

interface MinuteSwing {
  net: number;
  /** Highest running count within the minute, relative to its start (0 or more). */
  high: number;
  /** Lowest, relative to its start (0 or less). */
  low: number;
}

/** Minute start (epoch ms, as a string key) to its swing. */
export type Concurrency = Record<string, MinuteSwing>;

/** A session opened (+1) or closed (-1) at `tsMs`; events come in log order. */
export function sessionDelta(concurrency: Concurrency, tsMs: number, delta: 1 | -1): void {
  const swing = (concurrency[String(Math.floor(tsMs / MINUTE_MS) * MINUTE_MS)] ??= { net: 0, high: 0, low: 0 });
  swing.net += delta;
  swing.high = Math.max(swing.high, swing.net);
  swing.low = Math.min(swing.low, swing.net);
}

/** `later`'s minutes after `earlier`'s (returned); a minute both have: earlier's part came first. */
export function mergeConcurrency(earlier: Concurrency, later: Concurrency): Concurrency {
  for (const [minute, after] of Object.entries(later)) {
    const before = earlier[minute];
    earlier[minute] = before === undefined ? after : {
      net: before.net + after.net,
      high: Math.max(before.high, before.net + after.high),
      low: Math.min(before.low, before.net + after.low),
    };
  }
  return earlier;
}

export interface ConcurrencyFigures {
  /** Per minute (epoch ms), the most sessions open at once in it, baseline included. */
  peakPerMinute: Map<number, number>;
  /** The highest of them and its first minute; null when no session line was folded. */
  peak: { count: number; minuteMs: number } | null;
  /** Sessions seen to close that opened before the log started (at least). */
  openedBeforeLog: number;
}

/** The figures, with a peak for each of `alsoMinutes` too (minutes of other counters: the count carried into them). */
export function concurrencyFigures(concurrency: Concurrency, alsoMinutes: readonly string[] = []): ConcurrencyFigures {
  const minutes = [...new Set([...Object.keys(concurrency), ...alsoMinutes])].map(Number).sort((a, b) => a - b);
  let level = 0;
  let lowest = 0;
  const relativePeaks: Array<[number, number]> = [];
  for (const minute of minutes) {
    const swing = concurrency[String(minute)] ?? { net: 0, high: 0, low: 0 };
    relativePeaks.push([minute, level + swing.high]);
    lowest = Math.min(lowest, level + swing.low);
    level += swing.net;
  }
  const baseline = -lowest;
  const peakPerMinute = new Map(relativePeaks.map(([minute, relative]) => [minute, relative + baseline]));
  let peak: ConcurrencyFigures['peak'] = null;
  for (const [minuteMs, count] of peakPerMinute) {
    if (concurrency[String(minuteMs)] !== undefined && (peak === null || count > peak.count)) peak = { count, minuteMs };
  }
  return { peakPerMinute, peak, openedBeforeLog: baseline };
}
