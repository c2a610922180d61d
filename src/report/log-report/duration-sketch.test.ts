import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addDuration, mergeSketches, quantilesUs, type DurationSketch } from './duration-sketch.js';

const durations = fc.array(fc.integer({ min: 0, max: 3_600_000_000 }), { minLength: 1, maxLength: 300 });

function sketchOf(values: readonly number[]): DurationSketch {
  const sketch: DurationSketch = {};
  for (const value of values) addDuration(sketch, value);
  return sketch;
}

/** The nearest-rank quantile of the values themselves. */
function exactQuantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

describe('duration sketch', () => {
  it('reads every quantile within 1% of the exact one', () => {
    fc.assert(fc.property(durations, fc.double({ min: 0, max: 1, noNaN: true }), (values, q) => {
      const [estimate] = quantilesUs(sketchOf(values), [q]);
      const exact = exactQuantile(values, q);
      expect(Math.abs(estimate! - exact)).toBeLessThanOrEqual(exact * 0.01 + 1e-9);
    }));
  });

  it('merges to the sketch of all the values, in any split', () => {
    fc.assert(fc.property(durations, fc.nat(), (values, cut) => {
      const at = cut % (values.length + 1);
      expect(mergeSketches(sketchOf(values.slice(0, at)), sketchOf(values.slice(at)))).toEqual(sketchOf(values));
    }));
  });

  it('has no quantile when empty', () => {
    expect(quantilesUs({}, [0.5, 0.95])).toEqual([null, null]);
  });
});
