import { describe, expect, it } from 'vitest';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { replicaLagOverLbLimit, DEFAULTS } from './replica-lag-over-lb-limit.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData, TargetInfo } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { ddlDetails, recoveryWaitDetails } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = replicaLagOverLbLimit(DEFAULTS);
const CLUSTER: TargetInfo[] = [{ name: 'primary', cluster: 'orders' }, { name: 'standby1', cluster: 'orders' }];

/**
 * A watched standby as its collector samples it: receive and replay LSN per step, and what follows
 * from them (pending bytes); `delay` is now() - the last replayed commit, which the rule must not
 * take for lag; `still` how long replay stood still (for the cause analysis).
 */
function standby(receive: string, replay: string, o: { delay?: string; still?: string; stepMs?: number } = {}): SeriesData[] {
  const replayed = replay.split(' ');
  const pending = receive.split(' ').map((r, i) => (r === 'null' || replayed[i] === 'null' ? 'null' : String(Number(r) - Number(replayed[i])))).join(' ');
  const on = { target: 'standby1', ...(o.stepMs !== undefined && { stepMs: o.stepMs }) };
  return [
    seriesOf('pg_standby_receive_lsn_bytes', receive, on),
    seriesOf('pg_standby_replay_lsn_bytes', replay, on),
    seriesOf('pg_standby_replay_pending_bytes', pending, on),
    seriesOf('pg_standby_replay_delay_seconds', o.delay ?? receive.split(' ').map(() => '1').join(' '), on),
    seriesOf('pg_standby_replay_standing_still_seconds', o.still ?? receive.split(' ').map(() => '0').join(' '), on),
  ];
}

/** Receive LSN growing 1 MB a step from 1 MB, for `steps` steps: '1e6 2e6 3e6 ...'. */
const growing = (steps: number, from = 1) => Array.from({ length: steps }, (_, i) => `${(from + i) * 1e6}`).join(' ');
/** One value `steps` times. */
const flat = (value: string | number, steps: number) => Array<string>(steps).fill(String(value)).join(' ');

const evaluate = (series: SeriesData[], step: number, events: RuleEvent[] = [], targets = CLUSTER) =>
  rule.evaluate(new MemoryRuleView({ series, events, targets, staleAfterMs: STEP }).at(at(step)), at(step));

describe('replica-lag-over-lb-limit', () => {
  // Replay stuck at 1 MB from step 0 while WAL arrives: at step n the WAL past it has waited (n - 1) steps of 5 s.
  const stuck = (steps: number) => standby(growing(steps), flat(1e6, steps));
  const cases: Array<[string, SeriesData[], number, boolean]> = [
    ['fires: unreplayed WAL waiting 65 s and 70 s (every sample of the 5 s window past 60 s)', stuck(16), 15, true],
    ['quiet (near miss): waiting 55 s and 60 s (not past the limit)', stuck(14), 13, false],
    ['quiet: an idle primary: the last replayed commit is 10 min old, nothing received waits',
      standby(flat(5e6, 9), flat(5e6, 9), { delay: '560 565 570 575 580 585 590 595 600' }), 8, false],
    ['quiet: a bulk load in one transaction: WAL streams with no commit, replay one sample behind receipt',
      standby(growing(9, 2), growing(9, 1), { delay: '60 65 70 75 80 85 90 95 100' }), 8, false],
    ['quiet: a position unknown (NULL) is no lag', standby(`${growing(14)} null null`, flat(1e6, 16)), 15, false],
  ];
  for (const [name, series, step, fires] of cases) {
    it(name, () => expect(evaluate(series, step).map((f) => f.dedupKey)).toEqual(fires ? ['replica-lag-over-lb-limit/standby1'] : []));
  }

  it('says how long, and cites the receive and replay positions', () => {
    const [finding] = evaluate(stuck(16), 15);
    expect(finding?.summary).toBe(
      'standby1 is 70 s behind the primary, past the 60 s at which load balancers drop it: cause unknown (no recovery conflict logged, no table dropped)',
    );
    expect(finding?.evidence.series.slice(0, 2).map((s) => [s.name, s.value])).toEqual([['pg_standby_receive_lsn_bytes', 16e6], ['pg_standby_replay_lsn_bytes', 1e6]]);
  });

  it('names the cause when replay is stalled on an unlink', () => {
    const drop = eventOf('ddl', ddlDetails('DROP TABLE', 'build_logs'), { tsMs: at(-12), target: 'primary', pid: 7 });
    const still = `${flat(0, 2)} ${Array.from({ length: 14 }, (_, i) => (i + 1) * 5).join(' ')}`;
    const [finding] = evaluate(standby(growing(16), flat(1e6, 16), { still }), 15, [drop]);
    expect(finding?.summary).toBe(
      'standby1 is 70 s behind the primary, past the 60 s at which load balancers drop it: ' +
      'replay stalled probably on unlink of build_logs (DROP TABLE on primary at 23:59:00 UTC): ' +
      'the unlink logs nothing; PG 19\'s pg_stat_recovery (replay inside one record) would make it certain',
    );
    expect(finding?.severity ?? rule.severity).toBe('error');
    expect(finding?.evidence.eventIds).toEqual([drop.id]);
  });

  describe('from the primary, when the standby itself is not watched', () => {
    const row = (labels: string, lag: string, replay = '5e6') => [
      seriesOf(`pg_stat_replication_replay_lag_seconds{${labels}}`, lag, { target: 'primary' }),
      seriesOf(`pg_stat_replication_replay_lsn_bytes{${labels}}`, lag.split(' ').map(() => replay).join(' '), { target: 'primary' }),
    ];
    const primary = (values: string) => row('application_name="s1",client_addr="10.0.0.5",kind="physical"', values);
    const alone: TargetInfo[] = [{ name: 'primary', cluster: null }];

    it('fires on replay_lag past the limit', () => {
      const [finding] = evaluate(primary('10 20 30 70 75'), 4, [], alone);
      expect(finding?.summary).toBe('standby s1 (10.0.0.5) is 75 s behind the primary, past the 60 s at which load balancers drop it');
      expect(finding?.dedupKey).toBe('replica-lag-over-lb-limit/primary/s1/10.0.0.5');
    });

    it('stays quiet when replay_lag is NULL (caught up and idle)', () => {
      expect(evaluate(primary('10 20 30 null null'), 4, [], alone)).toEqual([]);
    });

    it('defers to the standby\'s own samples when the standby is watched', () => {
      const series = [...primary('10 20 30 70 75'), ...standby(flat(5e6, 5), flat(5e6, 5))];
      expect(evaluate(series, 4)).toEqual([]);
    });

    const notReplicas: Array<[string, SeriesData[]]> = [
      ['a logical subscriber', row('application_name="facts_sub",client_addr="10.0.0.7",kind="logical"', '10 20 30 70 75')],
      ['pg_receivewal (no replay position)', row('application_name="pg_receivewal",client_addr="10.0.0.8",kind="physical"', '10 20 30 70 75', 'null')],
    ];
    for (const [name, series] of notReplicas) {
      it(`quiet: ${name} is no read replica, whatever its replay_lag`, () => expect(evaluate(series, 4, [], alone)).toEqual([]));
    }
  });

  describe('a cluster with a watched standby and one pgvigil does not watch', () => {
    const rows = (s1: string, s2: string) => [
      seriesOf('pg_stat_replication_replay_lag_seconds{application_name="standby1",client_addr="10.0.0.5",kind="physical"}', s1, { target: 'primary' }),
      seriesOf('pg_stat_replication_replay_lsn_bytes{application_name="standby1",client_addr="10.0.0.5",kind="physical"}', flat(5e6, 5), { target: 'primary' }),
      seriesOf('pg_stat_replication_replay_lag_seconds{application_name="s2",client_addr="10.0.0.6",kind="physical"}', s2, { target: 'primary' }),
      seriesOf('pg_stat_replication_replay_lsn_bytes{application_name="s2",client_addr="10.0.0.6",kind="physical"}', flat(5e6, 5), { target: 'primary' }),
    ];
    const receiving = seriesOf('pg_stat_wal_receiver_up', '1 1 1 1 1', { target: 'standby1' });
    const caughtUp = standby(flat(5e6, 5), flat(5e6, 5));

    it('the unwatched standby far behind fires from the primary\'s row', () => {
      const findings = evaluate([...rows('1 1 1 1 1', '10 20 30 70 75'), ...caughtUp, receiving], 4);
      expect(findings.map((f) => f.dedupKey)).toEqual(['replica-lag-over-lb-limit/primary/s2/10.0.0.6']);
    });

    it('the watched standby\'s row (its application_name is its target name) is left to its own samples', () => {
      expect(evaluate([...rows('10 20 30 70 75', '1 1 1 1 1'), ...caughtUp, receiving], 4)).toEqual([]);
    });

    it('a watched standby behind, unnamed (application_name walreceiver) beside a subscriber: one alert, from its own samples', () => {
      const series = [
        ...stuck(16), seriesOf('pg_stat_wal_receiver_up', flat(1, 16), { target: 'standby1' }),
        seriesOf('pg_stat_replication_replay_lag_seconds{application_name="walreceiver",client_addr="10.0.0.5",kind="physical"}', `${flat(1, 11)} 65 70 75 80 85`, { target: 'primary' }),
        seriesOf('pg_stat_replication_replay_lsn_bytes{application_name="walreceiver",client_addr="10.0.0.5",kind="physical"}', flat(1e6, 16), { target: 'primary' }),
        seriesOf('pg_stat_replication_replay_lag_seconds{application_name="facts_sub",client_addr="10.0.0.1",kind="logical"}', flat(1, 16), { target: 'primary' }),
        seriesOf('pg_stat_replication_replay_lsn_bytes{application_name="facts_sub",client_addr="10.0.0.1",kind="logical"}', flat(16e6, 16), { target: 'primary' }),
      ];
      expect(evaluate(series, 15).map((f) => f.dedupKey)).toEqual(['replica-lag-over-lb-limit/standby1']);
    });
  });

  it('a watched standby whose walreceiver is down has nothing waiting: standby-disconnected speaks for it', () => {
    const down = seriesOf('pg_stat_wal_receiver_up', '1 0 0 0 0', { target: 'standby1' });
    expect(evaluate([...standby(flat(5e6, 5), flat(5e6, 5), { delay: '10 20 30 70 75' }), down], 4)).toEqual([]);
  });

  it('from the standby\'s log alone: a conflict wait past the limit is a lower bound of the lag', () => {
    const wait = (step: number, phase: 'waiting' | 'finished', waitMs: number) => eventOf('recovery_conflict_wait',
      recoveryWaitDetails({ phase, reason: 'snapshot', wait_ms: waitMs, conflicting_pids: [52311] }), { tsMs: at(step), target: 'standby1', pid: 4011 });
    const events = [wait(1, 'waiting', 1000), wait(20, 'finished', 96_000)];
    const view = new MemoryRuleView({ events, targets: CLUSTER, staleAfterMs: STEP });
    // Waiting since step 1 - 1 s: 56 s at step 12 (quiet), 61 s at step 13.
    expect(transitionSteps(timeline([rule], view, instants(0, 22)))).toEqual([
      ['fire', 'replica-lag-over-lb-limit/standby1', 13], ['resolve', 'replica-lag-over-lb-limit/standby1', 20],
    ]);
    const [finding] = rule.evaluate(view.at(at(16)), at(16));
    expect(finding?.summary).toBe(
      'standby1 is at least 76 s behind the primary, past the 60 s at which load balancers drop it: ' +
      'replay waiting for rows still visible to standby query pid 52311 (recovery conflict on snapshot)',
    );
    expect(finding?.evidence.series).toEqual([]);
  });


  it('names a conflict wait still within max_standby_streaming_delay as the cause (replay-stalled is quiet then; the lag is real)', () => {
    const tenSeconds = replicaLagOverLbLimit({ ...DEFAULTS, limitSeconds: 10 });
    const wait = eventOf('recovery_conflict_wait', recoveryWaitDetails({ phase: 'waiting', reason: 'lock', wait_ms: 1000, conflicting_pids: [52311] }),
      { tsMs: at(1) + 1000, target: 'standby1', pid: 4011 });
    const series = [
      ...standby(growing(6), flat(1e6, 6), { still: '0 0 5 10 15 20' }),
      seriesOf('pg_settings_max_standby_streaming_delay_seconds', flat(30, 6), { target: 'standby1' }),
    ];
    const [finding] = tenSeconds.evaluate(new MemoryRuleView({ series, events: [wait], targets: CLUSTER, staleAfterMs: STEP }).at(at(5)), at(5));
    expect(finding?.summary).toBe(
      'standby1 is 20 s behind the primary, past the 10 s at which load balancers drop it: replay waiting on a lock held by standby query pid 52311 (recovery conflict on lock)',
    );
  });
  describe('a delayed standby (recovery_min_apply_delay = 1 h): only the lag beyond the delay counts', () => {
    // Steps of a minute; WAL arrives 1 MB a minute and replay follows `behindMinutes` later.
    const MINUTE = 60_000;
    const STEPS = 80;
    const delayed = (behindMinutes: number) => [
      ...standby(growing(STEPS), Array.from({ length: STEPS }, (_, i) => `${Math.max(1, i + 1 - behindMinutes) * 1e6}`).join(' '), { stepMs: MINUTE }),
      seriesOf('pg_settings_recovery_min_apply_delay_seconds', flat(3600, STEPS), { target: 'standby1', stepMs: MINUTE }),
    ];
    const evaluateDelayed = (behindMinutes: number) => {
      const nowMs = T0 + (STEPS - 1) * MINUTE;
      return rule.evaluate(new MemoryRuleView({ series: delayed(behindMinutes), targets: CLUSTER, staleAfterMs: MINUTE }).at(nowMs), nowMs);
    };
    // The WAL past replay arrived `behindMinutes - 1` minutes ago (the lower bound).
    const cases: Array<[string, number, boolean]> = [
      ['quiet: 1 h behind, the delay at work', 61, false],
      ['quiet (near miss): 60 s beyond the delay', 62, false],
      ['fires: 2 min beyond the delay', 63, true],
    ];
    for (const [name, behindMinutes, fires] of cases) {
      it(name, () => expect(evaluateDelayed(behindMinutes).length).toBe(fires ? 1 : 0));
    }

    it('says how far beyond the delay, and cites the setting', () => {
      const [finding] = evaluateDelayed(63);
      expect(finding?.summary).toBe(
        'standby1 is 62 min behind the primary, 2 min beyond its recovery_min_apply_delay of 60 min, past the 60 s at which load balancers drop it',
      );
      expect(finding?.evidence.facts).toMatchObject({ lag_seconds: 3720, recovery_min_apply_delay_seconds: 3600 });
      expect(finding?.evidence.series.map((s) => s.name)).toContain('pg_settings_recovery_min_apply_delay_seconds');
    });
  });

  it('fires once while the replica stays behind and resolves when it catches up', () => {
    const series = standby(growing(20), `${flat(1e6, 16)} ${growing(4, 17)}`);
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series, targets: CLUSTER, staleAfterMs: STEP }), instants(0, 19)));
    expect(steps).toEqual([['fire', 'replica-lag-over-lb-limit/standby1', 15], ['resolve', 'replica-lag-over-lb-limit/standby1', 16]]);
  });
});
