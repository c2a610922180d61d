import { describe, expect, it } from 'vitest';
import { downSpell } from './down-spell.js';

const points = (values: Array<number | null>) => values.map((value, i) => ({ tsMs: i * 1000, value }));

describe('downSpell', () => {
  it('down since the first 0 after the last 1', () => {
    expect(downSpell(points([1, 0, 1, 1, 0, 0]))).toEqual({ lastUpMs: 3000, downSinceMs: 4000 });
  });
  it('never up: down since the first 0', () => {
    expect(downSpell(points([null, 0, 0]))).toEqual({ lastUpMs: undefined, downSinceMs: 1000 });
  });
  it('up now: no down spell', () => {
    expect(downSpell(points([0, 0, 1]))).toEqual({ lastUpMs: 2000, downSinceMs: undefined });
  });
});
