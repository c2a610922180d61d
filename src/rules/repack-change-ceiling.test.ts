import { describe, expect, it } from 'vitest';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { repackChangeCeiling, DEFAULTS } from './repack-change-ceiling.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails } from './test-events.js';

const rule = repackChangeCeiling(DEFAULTS);
const TEN_MIN = 600_000;
const FIVE_MIN = 300_000;
const TABLE = 'datname="shop",schemaname="public",relname="events"';

describe('repack-change-ceiling while a REPACK runs', () => {
  // 30,000 updates+deletes/s on shop.public.events; REPACK runs from step 0 to step 6 (10 min steps).
  const every10 = { stepMs: TEN_MIN };
  const running = (slotSteps: string) => new MemoryRuleView({
    staleAfterMs: 5 * 60_000,
    series: [
      seriesOf('pg_replication_slots_info{slot_name="pg_repack_900",owner="repack",database="shop",owner_pid="899"}', slotSteps, every10),
      seriesOf(`pg_stat_progress_repack_info{${TABLE},pid="899",command="REPACK",phase="writing new heap",index_name=""}`, slotSteps, every10),
      seriesOf(`pg_stat_user_tables_n_tup_upd_total{${TABLE}}`, '0 12e6 24e6 36e6 48e6 60e6 72e6 84e6', every10),
      seriesOf(`pg_stat_user_tables_n_tup_del_total{${TABLE}}`, '0 6e6 12e6 18e6 24e6 30e6 36e6 42e6', every10),
      seriesOf(`pg_stat_user_tables_changes_per_second{${TABLE}}`, '30000 30000 30000 30000 30000 30000 30000 30000', every10),
      // An unrelated table in another schema with the same name must not be taken for it.
      seriesOf('pg_stat_user_tables_n_tup_upd_total{datname="shop",schemaname="archive",relname="events"}', '0 0 0 0 0 0 0 0', every10),
    ],
  });

  it('stays quiet at 34% with 38 min left, warns at 51%, escalates to error past 90%, resolves when the run ends', () => {
    const transitions = timeline([rule], running('1 1 1 1 1 1 1 _'), instants(0, 7, TEN_MIN), { refireMinIntervalMs: 0 });
    expect(transitionSteps(transitions, T0, TEN_MIN)).toEqual([
      ['fire', 'repack-change-ceiling/primary/running/shop/public/events', 3],
      ['fire', 'repack-change-ceiling/primary/running/shop/public/events', 4],
      ['fire', 'repack-change-ceiling/primary/running/shop/public/events', 5],
      ['fire', 'repack-change-ceiling/primary/running/shop/public/events', 6],
      ['resolve', 'repack-change-ceiling/primary/running/shop/public/events', 7],
    ]);
    expect(transitions.map((t) => t.severity)).toEqual(['warning', 'warning', 'warning', 'error', undefined]);
    expect(transitions[0]?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.public.events has piled up 54,000,000 of the 104,857,600 concurrent updates+deletes ' +
      'it can hold (51%) in 30 min; at 30,000 changes/s it fails in 28 min and throws the run away',
    );
  });

  it('pages once while the summary changes every evaluation (updates are rate-limited)', () => {
    const transitions = timeline([rule], running('1 1 1 1 1 1 1 _'), instants(0, 7, TEN_MIN), { refireMinIntervalMs: 3_600_000 });
    expect(transitions.map((t) => [t.action, t.severity])).toEqual([['fire', 'warning'], ['fire', 'error'], ['resolve', undefined]]);
  });

  it('counts a retried REPACK from its own start, not from the first attempt\'s', () => {
    // Attempt 1 (session 899, slot pg_repack_900) runs steps 0-1 and fails; the same session retries
    // at step 3 (slot pg_repack_910). The stored xact_start series of the table holds both starts.
    const retry = new MemoryRuleView({
      staleAfterMs: 5 * 60_000,
      series: [
        seriesOf('pg_replication_slots_info{slot_name="pg_repack_900",owner="repack",database="shop",owner_pid="899"}', '1 1 _ _ _ _ _ _', every10),
        seriesOf('pg_replication_slots_info{slot_name="pg_repack_910",owner="repack",database="shop",owner_pid="899"}', '_ _ _ 1 1 1 1 1', every10),
        seriesOf(`pg_stat_progress_repack_info{${TABLE},pid="899",command="REPACK",phase="catch-up",index_name=""}`, '1 1 _ 1 1 1 1 1', every10),
        seriesOf(`pg_stat_progress_repack_xact_start_timestamp_seconds{${TABLE}}`, `${T0 / 1000} ${T0 / 1000} _ ${(T0 + 3 * TEN_MIN) / 1000} ${(T0 + 3 * TEN_MIN) / 1000} ${(T0 + 3 * TEN_MIN) / 1000} ${(T0 + 3 * TEN_MIN) / 1000} ${(T0 + 3 * TEN_MIN) / 1000}`, every10),
        seriesOf(`pg_stat_user_tables_n_tup_upd_total{${TABLE}}`, '0 12e6 24e6 36e6 48e6 60e6 72e6 84e6', every10),
        seriesOf(`pg_stat_user_tables_n_tup_del_total{${TABLE}}`, '0 6e6 12e6 18e6 24e6 30e6 36e6 42e6', every10),
        seriesOf(`pg_stat_user_tables_changes_per_second{${TABLE}}`, '30000 30000 30000 30000 30000 30000 30000 30000', every10),
      ],
    });
    const now = T0 + 6 * TEN_MIN;
    const findings = rule.evaluate(retry.at(now), now);
    expect(findings[0]?.evidence.facts.changes_since_start).toBe(54_000_000);
  });

  it('counts from the start of the run, not from the first sample of the table', () => {
    // The run started at step 2: 36M changes had happened before it and do not count.
    const findings = rule.evaluate(running('_ _ 1 1 1 1 1 _').at(T0 + 5 * TEN_MIN), T0 + 5 * TEN_MIN);
    expect(findings[0]?.evidence.facts.changes_since_start).toBe(54_000_000);
  });
});

describe('repack-change-ceiling advisory (no REPACK running, PG 19)', () => {
  const every5 = { stepMs: FIVE_MIN };
  const pg19 = eventOf('autovacuum', autovacuumDetails({ database: 'shop', table: 'events', dead_item_storage_mb: 4.5 }), { tsMs: T0 });
  // The collector's series is in seconds (pg-stat-user-tables.ts); the cases are written in hours.
  const UNTIL_CEILING = `pg_stat_user_tables_repack_seconds_until_ceiling{${TABLE}}`;
  const inSeconds = (hours: string) => hours.split(' ').map((h) => (Number.isNaN(Number(h)) ? h : String(Number(h) * 3600))).join(' ');
  const advisory = (hours: string, proof = [pg19]) => new MemoryRuleView({
    events: proof,
    staleAfterMs: 10 * 60_000,
    series: [seriesOf(UNTIL_CEILING, inSeconds(hours), every5)],
  });
  const now = T0 + 4 * FIVE_MIN;

  const cases: Array<[string, string, typeof pg19[], boolean]> = [
    ['fires: under 1 h for 15 min', '2 0.5 0.6 0.4 0.5', [pg19], true],
    ['quiet: one sample in the window at 1.2 h', '0.5 0.5 1.2 0.4 0.5', [pg19], false],
    ['quiet: no changes at all (NULL hours)', '0.5 0.5 null 0.4 0.5', [pg19], false],
    ['quiet: too few samples yet', '_ _ _ 0.4 0.5', [pg19], false],
    ['quiet: not proven PostgreSQL 19 (no REPACK there)', '2 0.5 0.6 0.4 0.5', [], false],
  ];
  it('takes the version from pg_settings when sampled', () => {
    const withVersion = (versionNum: string) => new MemoryRuleView({
      events: [pg19],
      series: [
        seriesOf(UNTIL_CEILING, inSeconds('2 0.5 0.6 0.4 0.5'), every5),
        seriesOf('pg_settings_server_version_num', versionNum, every5),
      ],
    });
    expect(rule.evaluate(withVersion('190000').at(now), now)).toHaveLength(1);
    expect(rule.evaluate(withVersion('180004').at(now), now)).toHaveLength(0);
  });
  for (const [name, hours, proof, fires] of cases) {
    it(name, () => {
      const findings = rule.evaluate(advisory(hours, proof).at(now), now);
      expect(findings.length).toBe(fires ? 1 : 0);
    });
  }

  it('says how long a REPACK could run and at what rate, as info', () => {
    const [finding] = rule.evaluate(advisory('2 0.5 0.6 0.4 0.5').at(now), now);
    expect(finding?.severity).toBe('info');
    expect(finding?.summary).toBe(
      'A REPACK (CONCURRENTLY) of shop.public.events could run only 30 min before hitting the 104,857,600-change ceiling: ' +
      'the table takes 58,254 updates+deletes/s (for 15 min)',
    );
  });
});
