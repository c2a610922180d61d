import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { pgRepackLeftovers, DEFAULTS } from './pg-repack-leftovers.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// The collector polls once a minute.
const MINUTE = 60_000;
const rule = pgRepackLeftovers(DEFAULTS);
const every = { stepMs: MINUTE };

const OBJECT = 'datname="shop",schemaname="public",relname="orders",for_table="public.orders"';
const trigger = (values: string) => seriesOf(`pg_repack_leftovers_object_left_behind{${OBJECT},kind="trigger",trigger_name="repack_trigger"}`, values, every);
const logTable = (values: string) => seriesOf(
  'pg_repack_leftovers_object_left_behind{datname="shop",kind="log_table",schemaname="repack",relname="log_16402",trigger_name="",for_table="public.orders"}', values, every,
);
const table = (counter: string, values: string) => seriesOf(`pg_stat_user_tables_${counter}{datname="shop",schemaname="public",relname="orders"}`, values, every);
const evaluate = (series: SeriesData[], step = 3) => rule.evaluate(new MemoryRuleView({ series }).at(T0 + step * MINUTE), T0 + step * MINUTE);

describe('pg-repack-leftovers', () => {
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['fires: trigger and log table left for two minutes', [trigger('_ 1 1 1'), logTable('_ 1 1 1')],
      /^pg_repack left trigger repack_trigger, log table repack\.log_16402 on shop\.public\.orders after its client died: its trigger copies every insert, update and delete into repack\.log_16402, so every write is done twice and the log is never read again$/],
    ['quiet: left for less than two minutes (a run starting up)', [trigger('_ _ 1 1'), logTable('_ _ 1 1')], null],
    ['quiet: a live pg_repack holds the table (0 = in use)', [trigger('0 0 0 0'), logTable('0 0 0 0')], null],
    ['fires: only the work table is left, no trigger', [seriesOf(
      'pg_repack_leftovers_object_left_behind{datname="shop",kind="work_table",schemaname="repack",relname="table_16402",trigger_name="",for_table="public.orders"}', '1 1 1 1', every)],
      /left work table repack\.table_16402 on shop\.public\.orders after its client died: nothing copies writes any more, but the next pg_repack .* refuses to start/],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    });
  }

  it('quiet on a standby: it sees the objects but not the lock of a pg_repack running on the primary', () => {
    const onStandby = (s: SeriesData): SeriesData => ({ ...s, target: 'standby1' });
    expect(evaluate([trigger('1 1 1 1'), seriesOf('pg_standby_replay_lsn_bytes', '_ _ _ 1000', every)].map(onStandby))).toEqual([]);
  });

  it('quiet: the objects are gone (not sampled for three polls)', () => expect(evaluate([trigger('1 1 1 _ _ _ _')], 6)).toEqual([]));

  it('says what the trigger costs: the table\'s write rate, and the log table\'s size', () => {
    const [finding] = evaluate([
      trigger('1 1 1 1'), logTable('1 1 1 1'),
      table('n_tup_ins_total', '0 6000 12000 18000'), table('n_tup_upd_total', '0 60000 120000 180000'), table('n_tup_del_total', '0 0 0 0'),
      seriesOf('pg_stat_user_tables_n_live_tup{datname="shop",schemaname="repack",relname="log_16402"}', '1 1 1 2500000', every),
      seriesOf('pg_total_relation_size_bytes{datname="shop",schemaname="repack",relname="log_16402"}', `_ _ _ ${300 * 1024 ** 2}`, every),
    ]);
    expect(finding?.summary).toMatch(/so every write is done twice \(1,100 rows\/s over the last 10 min\) and the log is never read again; the log table holds 2,500,000 rows, 300 MB$/);
    expect(finding?.evidence.facts.writes_per_second).toBe(1100);
  });

  it('keeps one alert per table for as long as the objects stay (through a missed poll), resolves when they are dropped', () => {
    const series = [trigger('1 1 1 _ 1 _ _ _ _ _'), logTable('1 1 1 _ 1 _ _ _ _ _')];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series }), instants(0, 9, MINUTE)), T0, MINUTE);
    const key = 'pg-repack-leftovers/primary/shop/public.orders';
    expect(steps).toEqual([['fire', key, 2], ['resolve', key, 8]]);
  });
});
