import { describe, expect, it } from 'vitest';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

describe('series notation', () => {
  it('reads a name, labels and one value per step; null is a NULL sample, _ no sample', () => {
    const s = seriesOf('pg_stat_replication_replay_lag_seconds{application_name="s1", client_addr="10.0.0.5"}', '0 5e6 null _ -1.5', {
      target: 'primary', stepMs: 1000,
    });
    expect(s).toEqual({
      name: 'pg_stat_replication_replay_lag_seconds',
      target: 'primary',
      labels: { application_name: 's1', client_addr: '10.0.0.5' },
      points: [{ tsMs: T0, value: 0 }, { tsMs: T0 + 1000, value: 5e6 }, { tsMs: T0 + 2000, value: null }, { tsMs: T0 + 4000, value: -1.5 }],
    });
  });

  it('keeps commas and escaped quotes inside label values', () => {
    expect(seriesOf('x{query="SELECT a, b FROM \\"T\\"",state=""}', '1').labels).toEqual({ query: 'SELECT a, b FROM "T"', state: '' });
  });

  it('throws on a malformed notation, naming the culprit', () => {
    expect(() => seriesOf('x{a=1}', '1')).toThrow(/bad label "a=1"/);
    expect(() => seriesOf('1x', '1')).toThrow(/bad name/);
    expect(() => seriesOf('x', '1 two')).toThrow(/bad value "two" at step 1/);
  });
});
