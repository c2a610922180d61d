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

/** A watched standby: replay delay per step, and whether WAL waits (pending bytes > 0). */
function standby(delay: string, pending: string, still = '0 0 0 0 0 0 0 0'): SeriesData[] {
  return [
    seriesOf('pg_standby_replay_delay_seconds', delay, { target: 'standby1' }),
    seriesOf('pg_standby_replay_pending_bytes', pending, { target: 'standby1' }),
    seriesOf('pg_standby_replay_standing_still_seconds', still, { target: 'standby1' }),
  ];
}

const evaluate = (series: SeriesData[], step: number, events: RuleEvent[] = [], targets = CLUSTER) =>
  rule.evaluate(new MemoryRuleView({ series, events, targets, staleAfterMs: STEP }).at(at(step)), at(step));

describe('replica-lag-over-lb-limit', () => {
  const cases: Array<[string, SeriesData[], boolean]> = [
    ['fires: 70 s and 75 s behind with WAL waiting', standby('10 20 30 70 75', '0 1e6 1e6 1e6 1e6'), true],
    ['quiet: 59 s behind (under the 60 s limit)', standby('10 20 30 58 59', '0 1e6 1e6 1e6 1e6'), false],
    ['quiet: a single late sample (not sustained)', standby('10 20 30 30 75', '0 1e6 1e6 1e6 1e6'), false],
    ['quiet: an idle primary: the last replayed commit is old but nothing waits to be replayed', standby('100 200 300 400 500', '0 0 0 0 0'), false],
    ['fires: standing still counts as behind even when the pending figure is unknown', standby('10 20 30 70 75', 'null null null null null', '0 5 10 15 20'), true],
  ];
  for (const [name, series, fires] of cases) {
    it(name, () => expect(evaluate(series, 4).length).toBe(fires ? 1 : 0));
  }

  it('names the cause when replay is stalled on an unlink', () => {
    const drop = eventOf('ddl', ddlDetails('DROP TABLE', 'build_logs'), { tsMs: at(-12), target: 'primary', pid: 7 });
    const [finding] = evaluate(standby('10 20 30 70 75', '0 1e6 1e6 1e6 1e6', '0 0 0 65 70'), 4, [drop]);
    expect(finding?.summary).toBe(
      'standby1 is 75 s behind the primary, past the 60 s at which load balancers drop it: ' +
      'replay stalled probably on unlink of build_logs (DROP TABLE on primary at 23:59:00 UTC): ' +
      "the unlink logs nothing; PG 19's pg_stat_recovery (replay inside one record) would make it certain",
    );
    expect(finding?.severity ?? rule.severity).toBe('error');
    expect(finding?.evidence.eventIds).toEqual([drop.id]);
  });

  describe('from the primary, when the standby itself is not watched', () => {
    const primary = (values: string) => [
      seriesOf('pg_stat_replication_replay_lag_seconds{application_name="s1",client_addr="10.0.0.5"}', values, { target: 'primary' }),
    ];
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
      const series = [...primary('10 20 30 70 75'), ...standby('1 1 1 1 1', '0 0 0 0 0')];
      expect(evaluate(series, 4)).toEqual([]);
    });
  });

  describe('a cluster with a watched standby and one pgvigil does not watch', () => {
    const rows = (s1: string, s2: string) => [
      seriesOf('pg_stat_replication_replay_lag_seconds{application_name="standby1",client_addr="10.0.0.5"}', s1, { target: 'primary' }),
      seriesOf('pg_stat_replication_replay_lag_seconds{application_name="s2",client_addr="10.0.0.6"}', s2, { target: 'primary' }),
    ];
    const receiving = seriesOf('pg_stat_wal_receiver_up', '1 1 1 1 1', { target: 'standby1' });

    it('the unwatched standby far behind fires from the primary\'s row', () => {
      const findings = evaluate([...rows('1 1 1 1 1', '10 20 30 70 75'), ...standby('1 1 1 1 1', '0 0 0 0 0'), receiving], 4);
      expect(findings.map((f) => f.dedupKey)).toEqual(['replica-lag-over-lb-limit/primary/s2/10.0.0.6']);
    });

    it('the watched standby\'s row (its application_name is its target name) is left to its own samples', () => {
      expect(evaluate([...rows('10 20 30 70 75', '1 1 1 1 1'), ...standby('1 1 1 1 1', '0 0 0 0 0'), receiving], 4)).toEqual([]);
    });
  });

  describe('a watched standby whose walreceiver is down', () => {
    const down = seriesOf('pg_stat_wal_receiver_up', '1 0 0 0 0', { target: 'standby1' });

    it('is behind by the time since its last replayed commit: nothing arrives, so nothing is pending', () => {
      const [finding] = evaluate([...standby('10 20 30 70 75', '0 0 0 0 0'), down], 4);
      expect(finding?.summary).toBe(
        'standby1 is 75 s behind the primary, past the 60 s at which load balancers drop it: its walreceiver is down (no WAL arrives)',
      );
    });

    it('quiet while the walreceiver runs and nothing is pending (an idle primary)', () => {
      expect(evaluate([...standby('10 20 30 70 75', '0 0 0 0 0'), seriesOf('pg_stat_wal_receiver_up', '1 1 1 1 1', { target: 'standby1' })], 4)).toEqual([]);
    });
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

  describe('a delayed standby (recovery_min_apply_delay = 1 h): only the lag beyond the delay counts', () => {
    const delayed = (lag: string) => [...standby(lag, '1e6 1e6 1e6 1e6 1e6'), seriesOf('pg_settings_recovery_min_apply_delay_seconds', '3600 3600 3600 3600 3600', { target: 'standby1' })];
    const cases: Array<[string, string, boolean]> = [
      ['quiet: 1 h behind, the delay at work', '3600 3600 3600 3600 3600', false],
      ['quiet: 59 s beyond the delay', '3600 3620 3640 3659 3659', false],
      ['fires: 70 s beyond the delay, sustained', '3600 3620 3640 3670 3675', true],
    ];
    for (const [name, lag, fires] of cases) {
      it(name, () => expect(evaluate(delayed(lag), 4).length).toBe(fires ? 1 : 0));
    }

    it('says how far beyond the delay, and cites the setting', () => {
      const [finding] = evaluate(delayed('3600 3620 3640 3670 3675'), 4);
      expect(finding?.summary).toBe(
        'standby1 is 61 min behind the primary, 75 s beyond its recovery_min_apply_delay of 60 min, past the 60 s at which load balancers drop it',
      );
      expect(finding?.evidence.facts).toMatchObject({ lag_seconds: 3675, recovery_min_apply_delay_seconds: 3600 });
      expect(finding?.evidence.series.map((s) => s.name)).toContain('pg_settings_recovery_min_apply_delay_seconds');
    });
  });

  it('fires once while the replica stays behind and resolves when it catches up', () => {
    const series = standby('10 70 75 80 90 100 0 0 0', '1 1 1 1 1 1 0 0 0');
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series, targets: CLUSTER, staleAfterMs: STEP }), instants(0, 8)));
    expect(steps).toEqual([['fire', 'replica-lag-over-lb-limit/standby1', 2], ['resolve', 'replica-lag-over-lb-limit/standby1', 6]]);
  });
});
