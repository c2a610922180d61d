import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData, TargetInfo } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { standbyDisconnected, DEFAULTS } from './standby-disconnected.js';

// Steps of 30 s: the default sustain (3 min) is six of them. The rule runs at its defaults.
const STEP = 30_000;
const SUSTAIN_STEPS = DEFAULTS.sustainMs / STEP;
const at = (step: number) => T0 + step * STEP;
const rule = standbyDisconnected();
const onStandby = { target: 'standby1', stepMs: STEP };
const onPrimary = { stepMs: STEP };

/** `first` for `n` steps, then `then` for `m`: '1 1 0 0 0'. */
const run = (first: string, n: number, then: string, m: number) => [...Array<string>(n).fill(first), ...Array<string>(m).fill(then)].join(' ');
/** Up at step 0, then down or gone for `steps` steps; evaluated at the last. */
const downFor = (steps: number) => run('1', 1, '0', steps);
const goneFor = (steps: number) => run('1', 1, '_', steps);

const up = (values: string) => seriesOf('pg_stat_wal_receiver_up', values, onStandby);
const sender = (values: string) => seriesOf('pg_stat_wal_receiver_info{status="streaming",sender_host="10.0.0.1",sender_port="5432",slot_name="s1"}', values, onStandby);
const received = (values: string) => seriesOf('pg_standby_receive_lsn_bytes', values, onStandby);
const silent = (seconds: number, settings: { timeout?: number; interval?: number } = {}) => [
  up('1'), seriesOf('pg_stat_wal_receiver_silent_seconds', String(seconds), onStandby),
  ...(settings.timeout === undefined ? [] : [seriesOf('pg_settings_wal_receiver_timeout_seconds', String(settings.timeout), onStandby)]),
  ...(settings.interval === undefined ? [] : [seriesOf('pg_settings_wal_receiver_status_interval_seconds', String(settings.interval), onStandby)]),
];

interface Walsender {
  application_name: string;
  state?: string;
  kind?: 'physical' | 'logical';
  pid?: string;
  /** The walsender's replay_lsn: null for pg_basebackup and pg_receivewal, which replay nothing. */
  replay?: string;
}

/** A walsender row (info and replay_lsn) on the primary, present where `values` has a sample. */
function walsender(values: string, w: Walsender): SeriesData[] {
  const kind = w.kind ?? 'physical';
  const row = `application_name="${w.application_name}",client_addr="10.0.0.2",kind="${kind}"`;
  return [
    seriesOf(`pg_stat_replication_info{${row},pid="${w.pid ?? '3001'}",state="${w.state ?? 'streaming'}",sync_state="async",slot_name=""}`, values, onPrimary),
    seriesOf(`pg_stat_replication_replay_lsn_bytes{${row}}`, values.replace(/1/g, w.replay ?? '5e6'), onPrimary),
  ];
}
const standbyRow = { application_name: 'standby1' };

const evaluateLast = (series: SeriesData[], targets?: TargetInfo[]) => {
  const last = Math.max(...series.map((s) => s.points[s.points.length - 1]!.tsMs), ...series.map((s) => s.points[0]!.tsMs + (s.points.length - 1) * STEP));
  return rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP, ...(targets && { targets }) }).at(last), last);
};
/** Evaluated `steps` steps after the first sample (series with gaps end early). */
const evaluateAt = (series: SeriesData[], step: number, targets?: TargetInfo[]) =>
  rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP, ...(targets && { targets }) }).at(at(step)), at(step));

describe('standby-disconnected at its defaults', () => {
  describe('seen from the standby: its walreceiver', () => {
    const cases: Array<[string, SeriesData[], RegExp | null]> = [
      ['fires: down for 3 min, no WAL arrived', [up(downFor(SUSTAIN_STEPS + 1)), sender(run('1', 1, '_', SUSTAIN_STEPS + 1)), received(run('500', SUSTAIN_STEPS + 2, '', 0))],
        /^standby standby1 has no walreceiver for 3 min \(it streamed from 10\.0\.0\.1:5432 until 00:00:00 UTC\); no WAL has arrived since: it replays only what it already has$/],
      ['fires: down, WAL comes from the archive', [up(downFor(SUSTAIN_STEPS + 1)), received(`0 0 ${run('16777216', SUSTAIN_STEPS - 1, '33554432', 1)}`)],
        /; 32 MB of WAL arrived since, from the archive \(restore_command\) only$/],
      ['fires: down; WAL streamed before the first sample without a walreceiver is not the archive\'s', [up(downFor(SUSTAIN_STEPS + 1)), received(`0 ${run('120', SUSTAIN_STEPS + 1, '', 0)}`)],
        /; no WAL has arrived since: it replays only what it already has$/],
      ['quiet (near miss): down for one step less than the sustain (a planned restart of either side)', [up(downFor(SUSTAIN_STEPS))], null],
      ['quiet: never streamed while watched (archive recovery)', [up(run('0', SUSTAIN_STEPS + 2, '', 0))], null],
    ];
    for (const [name, series, summary] of cases) {
      it(name, () => {
        const findings = evaluateLast(series);
        if (summary === null) expect(findings).toEqual([]);
        else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
      });
    }
  });

  describe('seen from the standby: silence, by the standby\'s own clock, against its wal_receiver_timeout', () => {
    const cases: Array<[string, SeriesData[], boolean]> = [
      ['fires: silent for 71 s, past wal_receiver_timeout (60 s) and one status interval (10 s)', silent(71, { timeout: 60, interval: 10 }), true],
      ['quiet (near miss): silent for 69 s', silent(69, { timeout: 60, interval: 10 }), false],
      ['fires: settings not sampled: their defaults (60 s + 10 s)', silent(DEFAULTS.silentSeconds + 11), true],
      ['quiet: a wal_receiver_timeout of 5 min allows 2 min of silence', silent(120, { timeout: 300, interval: 10 }), false],
      ['quiet: wal_receiver_timeout = 0: an idle primary sends nothing, silence tells nothing', silent(600, { timeout: 0, interval: 10 }), false],
      ['quiet: pgvigil\'s clock 2 min ahead of the server\'s: the last message was 5 s ago by the server', [
        ...silent(5),
        seriesOf('pg_stat_wal_receiver_last_msg_receipt_timestamp_seconds', String((T0 - 125_000) / 1000), onStandby),
      ], false],
    ];
    for (const [name, series, fires] of cases) {
      it(name, () => expect(evaluateAt(series, 0).map((f) => f.dedupKey)).toEqual(fires ? ['standby-disconnected/standby1/walreceiver'] : []));
    }

    it('says how long and against which limit', () => {
      const [finding] = evaluateAt(silent(95, { timeout: 60, interval: 10 }), 0);
      expect(finding?.summary).toBe('standby standby1\'s walreceiver has received nothing, not even a keepalive, for 95 s: the connection is dead or the primary is stuck');
      expect(finding?.evidence.facts).toMatchObject({ silent_seconds: 95, limit_seconds: 70 });
    });
  });

  describe('seen from the primary: walsenders of standbys that replay', () => {
    // Last seen at step 0, evaluated SUSTAIN_STEPS + 1 steps later unless said otherwise.
    const cases: Array<[string, SeriesData[], RegExp | null, number?]> = [
      ['fires: a standby\'s walsender gone for 3 min', walsender(goneFor(SUSTAIN_STEPS), standbyRow),
        /^standby standby1 \(10\.0\.0\.2\) has not been connected to primary for 3 min \(last seen streaming at 00:00:00 UTC in pg_stat_replication\)$/, SUSTAIN_STEPS],
      ['quiet (near miss): gone for one step less than the sustain (a planned standby restart)', walsender(goneFor(SUSTAIN_STEPS - 1), standbyRow), null, SUSTAIN_STEPS - 1],
      ['quiet: a base backup that ended', walsender(goneFor(SUSTAIN_STEPS + 1), { ...standbyRow, state: 'backup' }), null],
      ['quiet: pg_basebackup -X stream\'s WAL stream ended (streaming, no replay position)',
        walsender(goneFor(SUSTAIN_STEPS + 1), { application_name: 'pg_basebackup', replay: 'null' }), null],
      ['quiet: pg_receivewal stopped (streaming, no replay position)', walsender(goneFor(SUSTAIN_STEPS + 1), { application_name: 'pg_receivewal', replay: 'null' }), null],
      ['quiet: a logical subscription disabled for maintenance', walsender(goneFor(SUSTAIN_STEPS + 1), { application_name: 'facts_sub', kind: 'logical' }), null],
      ['quiet: it reconnected with a new pid', [...walsender(goneFor(SUSTAIN_STEPS + 1), standbyRow),
        ...walsender(`_ _ ${run('1', SUSTAIN_STEPS, '', 0)}`, { ...standbyRow, pid: '3002' })], null],
    ];
    for (const [name, series, summary, step = SUSTAIN_STEPS + 1] of cases) {
      it(name, () => {
        const findings = evaluateAt(series, step);
        if (summary === null) expect(findings).toEqual([]);
        else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
      });
    }
  });

  it('leaves the primary\'s view out when the standby is watched itself (its walreceiver says more)', () => {
    const targets = [{ name: 'primary', cluster: 'c1' }, { name: 'standby1', cluster: 'c1' }];
    const findings = evaluateAt([...walsender(goneFor(SUSTAIN_STEPS + 1), standbyRow), up(downFor(SUSTAIN_STEPS + 1))], SUSTAIN_STEPS + 1, targets);
    expect(findings.map((f) => f.dedupKey)).toEqual(['standby-disconnected/standby1/walreceiver']);
  });

  it('fires once while down, resolves when the walreceiver streams again', () => {
    const view = new MemoryRuleView({ series: [up(`${downFor(SUSTAIN_STEPS + 2)} 1 1`)], staleAfterMs: STEP });
    const steps = transitionSteps(timeline([rule], view, instants(0, SUSTAIN_STEPS + 5, STEP)), T0, STEP);
    expect(steps).toEqual([
      ['fire', 'standby-disconnected/standby1/walreceiver', SUSTAIN_STEPS + 1],
      ['resolve', 'standby-disconnected/standby1/walreceiver', SUSTAIN_STEPS + 3],
    ]);
  });
});
