import { describe, expect, it } from 'vitest';
import { isCi } from '../helpers/ci.js';
import { describeSkips, skipReason } from './skip-summary.js';

describe('isCi', () => {
  it.each(['true', '1', 'yes', 'TRUE', 'on', 'github'])('counts CI=%s as CI', (value) => {
    expect(isCi({ CI: value })).toBe(true);
  });

  it.each(['', '0', 'false', 'no', 'off', ' False '])('does not count CI=%j', (value) => {
    expect(isCi({ CI: value })).toBe(false);
  });

  it('does not count an unset CI', () => {
    expect(isCi({})).toBe(false);
  });
});

describe('the skip summary', () => {
  it('takes the reason from ctx.skip, then from the reason a gate put in the name, then from the flag', () => {
    expect(skipReason({ fullName: 'a > b [skipped: pgbadger missing]', note: 'load 9 on 2 cores', mode: 'run' })).toBe('load 9 on 2 cores');
    expect(skipReason({ fullName: 'suite [skipped: pgbadger missing (no pgbadger on PATH)] > renders', note: undefined, mode: 'skip' }))
      .toBe('pgbadger missing (no pgbadger on PATH)');
    expect(skipReason({ fullName: 'plain', note: undefined, mode: 'skip' })).toBe('skip flag without a reason');
    expect(skipReason({ fullName: 'later', note: undefined, mode: 'todo' })).toBe('todo');
  });

  it('counts the skipped tests and groups them by reason, most frequent first', () => {
    const skip = (fullName: string, note?: string) => ({ fullName, note, mode: note ? 'run' : 'skip' });
    expect(describeSkips([
      skip('x [skipped: chromium missing] > one'), skip('x [skipped: chromium missing] > two'), skip('soak > event loop', 'load 9.1 on 2 cores'),
    ])).toEqual(['Skipped: 3 tests, by reason:', '      2  chromium missing', '      1  load 9.1 on 2 cores']);
    expect(describeSkips([])).toEqual(['Skipped: none']);
  });

  it('names the tests skipped without a reason (those of a suite whose beforeAll failed)', () => {
    expect(describeSkips([{ fullName: 'a normal day > pages nobody', note: undefined, mode: 'run' }])).toEqual([
      'Skipped: 1 test, by reason:', '      1  run flag without a reason', '         without a reason: a normal day > pages nobody',
    ]);
  });
});
