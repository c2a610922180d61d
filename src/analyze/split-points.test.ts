import { describe, expect, it } from 'vitest';
import { entryStartTest, firstEntryStart } from './split-points.js';

const TS = '2026-10-14 03:12:45.123 UTC';

describe('entryStartTest', () => {
  it('stderr: a prefixed severity starts an entry; a prefixed DETAIL, a continuation or garbage does not', () => {
    const starts = entryStartTest({ format: 'stderr', prefix: '%m [%p] ' })!;
    expect(starts(`${TS} [7] LOG:  checkpoint starting: time`)).toBe(true);
    expect(starts(`${TS} [7] ERROR:  boom`)).toBe(true);
    expect(starts(`${TS} [7] DETAIL:  Key (id)=(1) already exists.`)).toBe(false);
    expect(starts(`${TS} [7] STATEMENT:  SELECT 1`)).toBe(false);
    expect(starts('\tpages: 0 removed, 207 remain')).toBe(false);
    expect(starts('garbage')).toBe(false);
  });

  it('csvlog: a line that starts with log_time and a comma; jsonlog: a line that starts an object', () => {
    expect(entryStartTest({ format: 'csvlog' })!(`${TS},"app"`)).toBe(true);
    expect(entryStartTest({ format: 'csvlog' })!('a continued, quoted message')).toBe(false);
    expect(entryStartTest({ format: 'jsonlog' })!('{"timestamp":"x"}')).toBe(true);
    expect(entryStartTest({ format: 'jsonlog' })!(' {')).toBe(false);
  });

  it('syslog-headed stderr is not cut', () => {
    expect(entryStartTest({ format: 'stderr', prefix: '', syslog: true })).toBeNull();
  });
});

describe('firstEntryStart', () => {
  const starts = entryStartTest({ format: 'stderr', prefix: '%m [%p] ' })!;

  it('skips the line the window starts in, continuations and field lines, and returns the next entry start', () => {
    const text = `ial line\n\tcontinued\n${TS} [7] DETAIL:  d\n${TS} [8] LOG:  next\n${TS} [9] LOG:  after\n`;
    expect(firstEntryStart(Buffer.from(text), starts)).toBe(text.indexOf(`${TS} [8]`));
  });

  it('counts a line that starts right after the first byte (the byte before the split point is a newline)', () => {
    const text = `\n${TS} [8] LOG:  at the split point\n`;
    expect(firstEntryStart(Buffer.from(text), starts)).toBe(1);
  });

  it('returns null when the only candidate is cut by the end of the window', () => {
    expect(firstEntryStart(Buffer.from(`x\n\tcontinued\n${TS} [8] LOG:  cut`), starts)).toBeNull();
  });
});
