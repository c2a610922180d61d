/**
 * Retry delays for the outbox: exponential with "equal jitter" (half fixed, half random), so a
 * receiver coming back is not hit by every pending row at the same instant, and a row never
 * retries sooner than half its step.
 */
export interface BackoffOptions {
  /** Delay after the first failed attempt (before jitter). */
  baseMs: number;
  /** Ceiling of the exponential step. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 2_000, maxMs: 5 * 60_000 };

/**
 * Delay before the next attempt after `attempts` failed ones (1 = the first failure).
 * `retryAfterMs` (a receiver's Retry-After) wins when longer, still capped by maxMs.
 * `random` returns [0, 1); tests pass a fixed one.
 */
export function retryDelayMs(
  attempts: number,
  options: BackoffOptions,
  random: () => number,
  retryAfterMs: number | null = null,
): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const stepMs = Math.min(options.maxMs, options.baseMs * 2 ** exponent);
  const jittered = stepMs / 2 + random() * (stepMs / 2);
  const wanted = retryAfterMs !== null && retryAfterMs > jittered ? retryAfterMs : jittered;
  return Math.round(Math.min(wanted, options.maxMs));
}
