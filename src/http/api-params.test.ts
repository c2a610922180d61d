import { describe, expect, it } from 'vitest';
import { BadRequest, parseDuration, parseLabels, parseTime } from './api-params.js';

const NOW = Date.UTC(2026, 9, 14, 3, 0, 0);

describe('parseTime', () => {
  it.each([
    [undefined, 42],
    ['1760410800000', 1_760_410_800_000],
    ['now', NOW],
    ['now-90s', NOW - 90_000],
    ['now-2h', NOW - 7_200_000],
    ['2026-10-14T03:12:45Z', Date.UTC(2026, 9, 14, 3, 12, 45)],
    ['2026-10-14T05:12:45+02:00', Date.UTC(2026, 9, 14, 3, 12, 45)],
  ])('%s', (value, expected) => {
    expect(parseTime('from', value, 42, NOW)).toBe(expected);
  });

  // Past the JS Date range (8.64e15 ms) a time cannot be printed: these were 500s.
  it.each(['yesterday', 'now+1h', '2026-13-01', '-5', '', '8640000000000001', '9'.repeat(400), 'now-99999999999999999999d'])('rejects %j naming the parameter', (value) => {
    expect(() => parseTime('from', value, 0, NOW)).toThrow(BadRequest);
    expect(() => parseTime('from', value, 0, NOW)).toThrow(/^from=/);
  });
});

describe('parseDuration', () => {
  it.each([['1500', 1500], ['30s', 30_000], ['5m', 300_000], ['1d', 86_400_000]])('%s', (value, expected) => {
    expect(parseDuration('step', value)).toBe(expected);
  });

  it('rejects what is not a duration', () => {
    expect(() => parseDuration('step', '1.5s')).toThrow(/^step="1.5s" is not a duration/);
  });
});

describe('parseLabels', () => {
  it('reads name=value pairs and JSON objects', () => {
    expect(parseLabels('datname=shop,relname=orders')).toEqual({ datname: 'shop', relname: 'orders' });
    expect(parseLabels('{"relname":"a,b"}')).toEqual({ relname: 'a,b' });
    expect(parseLabels(undefined)).toEqual({});
    expect(parseLabels('x=')).toEqual({ x: '' });
  });

  it.each(['datname', '=shop', '{"a":1}', '{nope', '["a"]'])('rejects %j', (value) => {
    expect(() => parseLabels(value)).toThrow(BadRequest);
  });
});
