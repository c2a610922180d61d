import { describe, expect, it } from 'vitest';
import { retryDelayMs } from './backoff.js';

const options = { baseMs: 2_000, maxMs: 300_000 };

describe('retryDelayMs', () => {
  it.each([
    [1, 0, 1_000], [1, 0.999, 1_999], [2, 0, 2_000], [3, 0.5, 6_000], [10, 0, 150_000], [10, 1, 300_000], [60, 0.5, 225_000],
  ])('attempt %i with random %f waits %i ms', (attempts, random, expected) => {
    expect(retryDelayMs(attempts, options, () => random)).toBe(expected);
  });

  it('honours a longer Retry-After, capped by maxMs', () => {
    expect(retryDelayMs(1, options, () => 0, 30_000)).toBe(30_000);
    expect(retryDelayMs(1, options, () => 0, 10_000_000)).toBe(300_000);
    expect(retryDelayMs(5, options, () => 0, 1_000)).toBe(16_000);
  });
});
