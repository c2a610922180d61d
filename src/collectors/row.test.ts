import { describe, expect, it } from 'vitest';
import { bool, flag, label, msToSeconds, num, requiredNum, RowError, text } from './row.js';

describe('row readers', () => {
  const row = { int8: '9007199254740993', f: 1.5, n: null, t: 'x', b: true, ms: 1500, bad: 'abc', empty: '' };

  it('reads numbers as node-postgres returns them (int8 and numeric as strings), NULL as null', () => {
    expect(num(row, 'int8')).toBe(9007199254740992);
    expect(num(row, 'f')).toBe(1.5);
    expect(num(row, 'n')).toBeNull();
    expect(msToSeconds(row, 'ms')).toBe(1.5);
    expect(msToSeconds(row, 'n')).toBeNull();
    expect(flag(row, 'b')).toBe(1);
    expect(flag(row, 'n')).toBeNull();
    expect(label(row, 'n')).toBe('');
    expect(text(row, 't')).toBe('x');
    expect(bool(row, 'b')).toBe(true);
  });

  it('rejects a missing column, a wrong type or a NULL key with a bad_row error naming the column', () => {
    expect(() => num(row, 'absent')).toThrow(/column absent missing/);
    expect(() => num(row, 'bad')).toThrow(RowError);
    expect(() => num(row, 'empty')).toThrow(/expected a number/);
    expect(() => bool(row, 't')).toThrow(/expected a boolean/);
    expect(() => requiredNum(row, 'n')).toThrow(/column n is NULL/);
    try {
      num(row, 'bad');
    } catch (err) {
      expect((err as RowError).code).toBe('bad_row');
    }
  });
});
