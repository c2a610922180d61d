/**
 * A Clock that tests step by hand. Timers fire in order of due time as `advance()` passes them.
 * `jumpWallClock()` moves only the wall clock, as NTP or an operator does: timers, like Node's,
 * run on the monotonic clock and are not moved.
 */
import { DateTime } from 'luxon';
import type { Clock } from '../../src/domain/clock.js';

interface Timer {
  dueMs: number;
  fn: () => void;
  everyMs: number | null;
  cancelled: boolean;
}

export class ManualClock implements Clock {
  private timers: Timer[] = [];
  /** nowMs() - monotonic time: changed only by jumpWallClock. */
  private wallOffsetMs = 0;

  /** Both the wall clock and the monotonic clock start at currentMs. */
  constructor(private currentMs: number = Date.UTC(2026, 0, 1)) {}

  nowMs(): number {
    return this.currentMs + this.wallOffsetMs;
  }

  monotonicMs(): number {
    return this.currentMs;
  }

  now(): DateTime {
    return DateTime.fromMillis(this.nowMs());
  }

  /** The wall clock jumps by deltaMs (negative: backwards); no timer fires or moves. */
  jumpWallClock(deltaMs: number): void {
    this.wallOffsetMs += deltaMs;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = this.add(ms, resolve, null);
      signal?.addEventListener('abort', () => { timer.cancelled = true; resolve(); }, { once: true });
    });
  }

  setInterval(fn: () => void, ms: number): { cancel(): void } {
    const timer = this.add(ms, fn, ms);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Moves time forward, firing every timer that falls due on the way, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.currentMs + ms;
    for (;;) {
      const next = this.timers.filter((t) => !t.cancelled && t.dueMs <= target).sort((a, b) => a.dueMs - b.dueMs)[0];
      if (!next) break;
      this.currentMs = next.dueMs;
      if (next.everyMs === null) next.cancelled = true;
      else next.dueMs += next.everyMs;
      next.fn();
      await Promise.resolve();
    }
    this.timers = this.timers.filter((t) => !t.cancelled);
    this.currentMs = target;
  }

  private add(ms: number, fn: () => void, everyMs: number | null): Timer {
    const timer: Timer = { dueMs: this.currentMs + ms, fn, everyMs, cancelled: false };
    this.timers.push(timer);
    return timer;
  }
}
