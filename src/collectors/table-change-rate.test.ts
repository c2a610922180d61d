import { describe, expect, it } from 'vitest';
import { REPACK_CEILING_CHANGES, secondsUntilCeiling } from '../domain/repack-ceiling.js';
import { deriveChangeRates, type ChangeCounter } from './table-change-rate.js';

const at = (entries: Array<[string, number, number]>): Map<string, ChangeCounter> =>
  new Map(entries.map(([key, changes, tsMs]) => [key, { changes, tsMs }]));

describe('deriveChangeRates', () => {
  it('gives updates + deletes per second between two samples, and the REPACK budget from it', () => {
    const first = deriveChangeRates(new Map(), at([['t', 1_000, 0]]), 60_000);
    expect(first.rates.size).toBe(0);
    const second = deriveChangeRates(first.state, at([['t', 31_000, 10_000]]), 60_000);
    expect(second.rates.get('t')).toEqual({ changesPerSec: 3_000, secondsUntilCeiling: REPACK_CEILING_CHANGES / 3_000 });
  });

  it('matches the seed: 29,000 changes/s leaves about one hour (hours_until_ceiling = 104857600 / rate / 3600)', () => {
    expect(secondsUntilCeiling(29_000)! / 3600).toBeCloseTo(1.004, 3);
  });

  it('reports no budget limit (null, not 0 or Infinity) while nothing changes', () => {
    const { rates } = deriveChangeRates(at([['t', 50, 0]]), at([['t', 50, 1_000]]), 60_000);
    expect(rates.get('t')).toEqual({ changesPerSec: 0, secondsUntilCeiling: null });
  });

  it('restarts after a counter went backwards (stats reset) instead of a negative rate', () => {
    const reset = deriveChangeRates(at([['t', 5_000, 0]]), at([['t', 10, 1_000]]), 60_000);
    expect(reset.rates.size).toBe(0);
    expect(reset.state.get('t')).toEqual({ changes: 10, tsMs: 1_000 });
  });

  it('rates over a longer window when a table skipped samples, and forgets it past the limit', () => {
    const kept = deriveChangeRates(at([['a', 0, 0], ['b', 0, 0]]), at([['a', 100, 10_000]]), 30_000);
    expect(kept.state.has('b')).toBe(true);
    const later = deriveChangeRates(kept.state, at([['a', 100, 40_000], ['b', 600, 20_000]]), 30_000);
    expect(later.rates.get('b')?.changesPerSec).toBe(30);
    const forgotten = deriveChangeRates(kept.state, at([['a', 100, 40_000]]), 30_000);
    expect(forgotten.state.has('b')).toBe(false);
  });
});
