import { describe, expect, it } from 'vitest';
import { count, counted, countOrDash, seconds, table } from './text-format.js';

describe('report text format', () => {
  it('says one of a thing in the singular', () => {
    expect([counted(0, 'run'), counted(1, 'run'), counted(1_234, 'run'), counted(1, 'entry', 'entries'), counted(2, 'entry', 'entries')])
      .toEqual(['0 runs', '1 run', '1,234 runs', '1 entry', '2 entries']);
  });

  it('groups thousands as en-US does, whole numbers grouped without ICU included', () => {
    const numbers = [0, 7, 999, 1_000, 12_345, 123_456, 1_234_567, 1_000_000_000, Number.MAX_SAFE_INTEGER, -1_234, 1_234.5678, 2 ** 60];
    expect(numbers.map(count)).toEqual(numbers.map((n) => n.toLocaleString('en-US')));
  });

  it('writes seconds one way, zero included, and an unmeasured value as a dash', () => {
    expect([seconds(0), seconds(0.04), seconds(12), seconds(null), countOrDash(null), countOrDash(2_000)]).toEqual(['0.00', '0.04', '12.00', '-', '-', '2,000']);
  });

  it('aligns columns under headers with a gap, text left and numbers right', () => {
    const rows = [{ name: 'postgres.public.orders', runs: 7 }, { name: 'a', runs: 12_345 }];
    expect(table([
      { header: 'table', align: 'left', cell: (r: typeof rows[number]) => r.name },
      { header: 'runs', align: 'right', cell: (r: typeof rows[number]) => r.runs.toLocaleString('en-US') },
      { header: 'max dead not removable', align: 'right', cell: () => '0' },
    ], rows)).toEqual([
      'table                     runs  max dead not removable',
      'postgres.public.orders       7                       0',
      'a                       12,345                       0',
    ]);
  });
});
