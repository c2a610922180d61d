import { describe, expect, it } from 'vitest';
import { RateLimit } from './rate-limit.js';

describe('RateLimit', () => {
  it('allows perMinute sends in any 60 s window, bursts included', () => {
    const limit = new RateLimit();
    expect([0, 10, 20].map((t) => limit.take('k', 3, t))).toEqual([0, 0, 0]);
    expect(limit.take('k', 3, 30)).toBe(59_970);
    expect(limit.take('k', 3, 59_999)).toBe(1);
    expect(limit.take('k', 3, 60_000)).toBe(0);
    expect(limit.take('k', 3, 60_001)).toBe(9);
  });

  it('keeps keys apart', () => {
    const limit = new RateLimit();
    expect(limit.take('a', 1, 0)).toBe(0);
    expect(limit.take('b', 1, 0)).toBe(0);
    expect(limit.take('a', 1, 1)).toBe(59_999);
  });
});
