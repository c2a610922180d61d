import { describe, expect, it } from 'vitest';
import { isKnownTimeZone, TimestampParser, TimeZoneConfigError } from './timestamp.js';
import { parseNumericZone } from './time-zone-abbreviations.js';

const utc = (iso: string): number => Date.parse(iso);

describe('TimestampParser.parse', () => {
  const cases: Array<{ text: string; timezone: string | null; want: number | string }> = [
    // %m as pg_strftime prints it for log_timezone = UTC, CET zones, zones without abbreviation
    { text: '2026-11-30 07:12:01.123 UTC', timezone: null, want: utc('2026-11-30T07:12:01.123Z') },
    { text: '2026-11-30 07:12:01.123 CET', timezone: null, want: utc('2026-11-30T06:12:01.123Z') },
    { text: '2026-07-30 07:12:01.123 CEST', timezone: null, want: utc('2026-07-30T05:12:01.123Z') },
    { text: '2026-11-30 07:12:01.123 +01', timezone: null, want: utc('2026-11-30T06:12:01.123Z') },
    { text: '2026-11-30 04:12:01.000 -03', timezone: null, want: utc('2026-11-30T07:12:01.000Z') },
    { text: '2026-11-30 12:57:01.009 +0545', timezone: null, want: utc('2026-11-30T07:12:01.009Z') },
    { text: '2026-11-29 21:12:01.500 HST', timezone: null, want: utc('2026-11-30T07:12:01.500Z') },
    // %t and %s: no milliseconds
    { text: '2026-11-30 07:12:01 GMT', timezone: null, want: utc('2026-11-30T07:12:01.000Z') },
    // 2028 is a leap year
    { text: '2028-02-29 00:00:00.000 UTC', timezone: null, want: utc('2028-02-29T00:00:00.000Z') },
    // the configured log_timezone resolves what the printed abbreviation cannot
    { text: '2026-11-30 12:42:01.123 IST', timezone: 'Asia/Kolkata', want: utc('2026-11-30T07:12:01.123Z') },
    { text: '2026-11-30 01:12:01.123 CST', timezone: 'America/Chicago', want: utc('2026-11-30T07:12:01.123Z') },
    { text: '2026-11-30 15:12:01.123 CST', timezone: 'Asia/Shanghai', want: utc('2026-11-30T07:12:01.123Z') },
    { text: '2026-11-30 07:12:01.123 XYZT', timezone: 'UTC+3', want: utc('2026-11-30T04:12:01.123Z') },
    // the hour repeated when clocks go back: the printed abbreviation picks the occurrence
    { text: '2026-11-01 01:30:00.000 CDT', timezone: 'America/Chicago', want: utc('2026-11-01T06:30:00.000Z') },
    { text: '2026-11-01 01:30:00.000 CST', timezone: 'America/Chicago', want: utc('2026-11-01T07:30:00.000Z') },
    { text: '2026-10-25 01:30:00.000 IST', timezone: 'Europe/Dublin', want: utc('2026-10-25T00:30:00.000Z') },
    { text: '2026-10-25 01:30:00.000 GMT', timezone: 'Europe/Dublin', want: utc('2026-10-25T01:30:00.000Z') },
    // strict: no rollover, no guessing
    { text: '2026-02-29 00:00:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-02-30 10:00:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-04-31 10:00:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-13-01 10:00:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 24:00:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:60:00.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:12:61.000 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:12:01.12x UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30T07:12:01.123 UTC', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:12:01.123', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:12:01.123 +25', timezone: null, want: 'unknown_time_zone' },
    { text: '', timezone: null, want: 'invalid_timestamp' },
    { text: '2026-11-30 07:12:01.123 XYZT', timezone: null, want: 'unknown_time_zone' },
    { text: '2026-11-30 07:12:01.123 CST', timezone: null, want: 'ambiguous_time_zone' },
    { text: '2026-11-30 07:12:01.123 IST', timezone: null, want: 'ambiguous_time_zone' },
    // skipped when clocks went forward (Chicago 2026-03-08 02:00 -> 03:00): cannot have been printed
    { text: '2026-03-08 02:30:00.000 CST', timezone: 'America/Chicago', want: 'nonexistent_local_time' },
  ];

  it.each(cases)('$text ($timezone)', ({ text, timezone, want }) => {
    const parser = new TimestampParser(timezone);
    const got = parser.parse(text);
    if (typeof want === 'number') {
      expect(got).toBe(want);
    } else {
      expect(got).toBeNaN();
      expect(parser.failure).toBe(want);
    }
  });

  it('gives the same results through its per-second and per-hour caches, across a DST change', () => {
    const cached = new TimestampParser('America/Chicago');
    const texts = [
      '2026-03-07 23:59:59.001 CST', '2026-03-07 23:59:59.999 CST', '2026-03-08 01:59:59.500 CST',
      '2026-03-08 03:00:00.000 CDT', '2026-03-08 03:00:00.250 CDT', '2026-03-08 12:00:00.000 CDT',
      '2026-03-08 12:59:59.000 CDT', '2026-03-08 12:00:00.000 UTC', '2026-03-08 12:00:00.001 CDT',
    ];
    const fresh = texts.map((t) => new TimestampParser('America/Chicago').parse(t));
    expect(texts.map((t) => cached.parse(t))).toEqual(fresh);
    expect(fresh.slice(0, 4)).toEqual([
      utc('2026-03-08T05:59:59.001Z'), utc('2026-03-08T05:59:59.999Z'), utc('2026-03-08T07:59:59.500Z'),
      utc('2026-03-08T08:00:00.000Z'),
    ]);
  });

  it('does not let a failed parse poison the cache', () => {
    const parser = new TimestampParser();
    expect(parser.parse('2026-11-30 07:12:01.123 UTC')).toBe(utc('2026-11-30T07:12:01.123Z'));
    expect(parser.parse('2026-11-30 07:12:01.123 XYZT')).toBeNaN();
    expect(parser.parse('2026-11-30 07:12:01.456 UTC')).toBe(utc('2026-11-30T07:12:01.456Z'));
  });
});

describe('TimestampParser.parseEpoch (%n)', () => {
  it.each([
    ['1796022721.123', 1796022721123],
    ['0.000', 0],
    ['1796022721', Number.NaN],
    ['1796022721.12', Number.NaN],
    ['17960x2721.123', Number.NaN],
  ])('%s', (text, want) => {
    expect(new TimestampParser().parseEpoch(text)).toBe(want);
  });
});

describe('TimestampParser configuration', () => {
  it('rejects a time zone luxon does not know, with the name in the message', () => {
    expect(() => new TimestampParser('Mars/Olympus_Mons')).toThrow(TimeZoneConfigError);
    expect(() => new TimestampParser('Mars/Olympus_Mons')).toThrow(/Mars\/Olympus_Mons/);
    expect([isKnownTimeZone('Europe/Paris'), isKnownTimeZone('UTC'), isKnownTimeZone('Mars/Olympus_Mons')]).toEqual([true, true, false]);
  });
});

describe('parseNumericZone', () => {
  it.each([
    ['+01', 60], ['-03', -180], ['+0545', 345], ['-0930', -570], ['+05:30', 330],
    ['UTC', null], ['+1', null], ['+123', null], ['+0560', null], ['+16', null],
  ])('%s', (text, want) => {
    expect(parseNumericZone(text)).toBe(want);
  });
});
