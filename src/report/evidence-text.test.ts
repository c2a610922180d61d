import { describe, expect, it } from 'vitest';
import { citedSeriesText, shownFacts } from './evidence-text.js';

describe('evidence as a reader sees it', () => {
  it('leaves out facts that are not known and keeps false and zero', () => {
    expect(shownFacts({ lag_seconds: 15, cause: null, walreceiver_down: false, pending: 0 }))
      .toEqual([['lag_seconds', '15'], ['walreceiver_down', 'false'], ['pending', '0']]);
  });

  it('writes a cited series in PromQL notation, braces only with labels, three decimals at most', () => {
    const at = (ts: string) => `@${ts}`;
    expect(citedSeriesText({ name: 'pg_standby_replay_delay_seconds', labels: {}, value: 14.509195, ts: 't1' }, at))
      .toBe('pg_standby_replay_delay_seconds = 14.509 at @t1');
    expect(citedSeriesText({ name: 'pg_slot_retained_bytes', labels: { slot_name: 's1', datname: 'app' }, value: 12763928, ts: 't2' }, at))
      .toBe('pg_slot_retained_bytes{slot_name="s1",datname="app"} = 12763928 at @t2');
    expect(citedSeriesText({ name: 'x', labels: {}, value: null, ts: 't3' }, at)).toBe('x = NULL at @t3');
  });
});
