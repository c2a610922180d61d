/**
 * Clock: the only way pgvigil code learns the time or waits. Production uses systemClock;
 * tests use ManualClock (test/helpers/manual-clock.ts) and step it.
 */
import { DateTime } from 'luxon';

export interface Clock {
  /** Wall-clock time: what timestamps are made of. It can jump (NTP, an operator, a VM resumed). */
  nowMs(): number;
  /**
   * Milliseconds on a clock that never jumps, from an arbitrary origin: for measuring how long
   * something lasted (hold-downs), never for a time of day.
   */
  monotonicMs(): number;
  now(): DateTime;
  /** Resolves after `ms`, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  setInterval(fn: () => void, ms: number): { cancel(): void };
}

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  now: () => DateTime.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        resolve();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
  setInterval: (fn, ms) => {
    const handle = setInterval(fn, ms);
    handle.unref?.();
    return { cancel: () => clearInterval(handle) };
  },
};
