import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData, TargetInfo } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { standbyDisconnected, DEFAULTS } from './standby-disconnected.js';

const at = (step: number) => T0 + step * STEP;
// 10 s of sustain: two 5 s steps.
const rule = standbyDisconnected({ ...DEFAULTS, sustainMs: 10_000 });
const onStandby = { target: 'standby1' };

const up = (values: string) => seriesOf('pg_stat_wal_receiver_up', values, onStandby);
const sender = (values: string) => seriesOf('pg_stat_wal_receiver_info{status="streaming",sender_host="10.0.0.1",sender_port="5432",slot_name="s1"}', values, onStandby);
const received = (values: string) => seriesOf('pg_standby_receive_lsn_bytes', values, onStandby);
const walsender = (values: string, state = 'streaming', pid = '3001') =>
  seriesOf(`pg_stat_replication_info{application_name="standby1",client_addr="10.0.0.2",pid="${pid}",state="${state}",sync_state="async"}`, values);
const evaluate = (series: SeriesData[], step = 4, targets?: TargetInfo[]) =>
  rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP, ...(targets && { targets }) }).at(at(step)), at(step));

describe('standby-disconnected', () => {
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['fires: the walreceiver has been down for 15 s, no WAL arrived',
      [up('1 0 0 0 0'), sender('1 _ _ _ _'), received('500 500 500 500 500')],
      /^standby standby1 has no walreceiver for 15 s \(it streamed from 10\.0\.0\.1:5432 until 00:00:00 UTC\); no WAL has arrived since: it replays only what it already has$/],
    ['fires: down, WAL comes from the archive', [up('1 0 0 0 0'), received('0 0 16777216 16777216 33554432')], /; 32 MB of WAL arrived since, from the archive \(restore_command\) only$/],
    ['fires: down; WAL streamed before the first sample without a walreceiver is not the archive\'s', [up('1 0 0 0 0'), received('0 120 120 120 120')],
      /; no WAL has arrived since: it replays only what it already has$/],
    ['quiet: down for 5 s only (a reconnect)', [up('1 1 1 0 0')], null],
    ['quiet: never streamed while watched (archive recovery)', [up('0 0 0 0 0')], null],
    ['fires: connected but silent for 60 s', [up('1 1 1 1 1'), seriesOf('pg_stat_wal_receiver_last_msg_receipt_timestamp_seconds', `_ _ _ _ ${(at(4) - 60_000) / 1000}`, onStandby)],
      /^standby standby1's walreceiver has received nothing, not even a keepalive, for 60 s/],
    ['quiet: connected, last message 59 s ago', [up('1 1 1 1 1'), seriesOf('pg_stat_wal_receiver_last_msg_receipt_timestamp_seconds', `_ _ _ _ ${(at(4) - 59_000) / 1000}`, onStandby)], null],
    ['fires on the primary: a streaming walsender gone for 15 s', [walsender('1 1 _ _ _')],
      /^standby standby1 \(10\.0\.0\.2\) has not been connected to primary for 15 s \(last seen streaming at 00:00:05 UTC in pg_stat_replication\)$/],
    ['quiet on the primary: gone 5 s ago', [walsender('1 1 1 1 _')], null],
    ['quiet on the primary: a base backup that ended', [walsender('1 1 _ _ _', 'backup')], null],
    ['quiet on the primary: it reconnected with a new pid', [walsender('1 1 _ _ _'), walsender('_ _ _ 1 1', 'streaming', '3002')], null],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    });
  }

  it('leaves the primary\'s view out when the standby is watched itself (its walreceiver says more)', () => {
    const targets = [{ name: 'primary', cluster: 'c1' }, { name: 'standby1', cluster: 'c1' }];
    const findings = evaluate([walsender('1 1 _ _ _'), up('1 0 0 0 0')], 4, targets);
    expect(findings.map((f) => f.dedupKey)).toEqual(['standby-disconnected/standby1/walreceiver']);
  });

  it('fires once while down, resolves when the walreceiver streams again', () => {
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series: [up('1 0 0 0 0 0 1 1')], staleAfterMs: STEP }), instants(0, 7)));
    expect(steps).toEqual([['fire', 'standby-disconnected/standby1/walreceiver', 3], ['resolve', 'standby-disconnected/standby1/walreceiver', 6]]);
  });
});
