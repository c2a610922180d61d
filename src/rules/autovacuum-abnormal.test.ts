import { describe, expect, it } from 'vitest';
import type { AutovacuumDetails } from '../domain/index.js';
import { autovacuumAbnormal, DEFAULTS } from './autovacuum-abnormal.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails } from './test-events.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const rule = autovacuumAbnormal(DEFAULTS);

const run = (minute: number, elapsedS: number, d: Partial<AutovacuumDetails> = {}) =>
  eventOf('autovacuum', autovacuumDetails({ database: 'shop', table: 'orders', elapsed_s: elapsedS, ...d }), { tsMs: T0 + minute * MINUTE });
// Four usual runs of 60-90 s in the last hours.
const usual = [run(-600, 60), run(-480, 90), run(-360, 70), run(-240, 80)];
const usualAggressive = [run(-590, 60, { aggressive: true }), run(-470, 90, { aggressive: true }), run(-350, 70, { aggressive: true }), run(-230, 80, { aggressive: true })];

// pg_stat_user_tables every 10 min.
const TABLE = 'datname="shop",schemaname="public",relname="events"';
const every10 = { stepMs: 10 * MINUTE, startMs: T0 - HOUR };
const every5 = { stepMs: 5 * MINUTE, startMs: T0 - HOUR };
const table = (name: string, values: string) => seriesOf(`pg_stat_user_tables_${name}{${TABLE}}`, values, every10);
const evaluate = (o: { events?: RuleEvent[]; series?: SeriesData[] }, minute = 0) =>
  rule.evaluate(new MemoryRuleView({ ...o, staleAfterMs: 10 * MINUTE }).at(T0 + minute * MINUTE), T0 + minute * MINUTE);

describe('autovacuum-abnormal: a run far slower than the table\'s own', () => {
  const cases: Array<[string, RuleEvent[], RegExp | null]> = [
    ['fires: 6 min against a median of 75 s', [...usual, run(-1, 375)],
      /^autovacuum of shop\.public\.orders took 6 min, 5× its median of 75 s over its last 4 runs$/],
    ['quiet: 4.9× the median', [...usual, run(-1, 367)], null],
    ['quiet: 10× a median of 5 s is still under a minute', [run(-600, 5), run(-480, 5), run(-360, 5), run(-1, 50)], null],
    ['quiet: only two earlier runs to compare with', [run(-480, 60), run(-360, 60), run(-1, 600)], null],
    ['quiet: the slow run ended more than an hour ago', [...usual, run(-61, 600)], null],
    ['says why: aggressive, several index passes, most of it asleep in the cost delay',
      [...usualAggressive, run(-1, 1200, { aggressive: true, wraparound: true, index_scans: 3, delay_time_ms: 900_000 })],
      /took 20 min, 16× its median of 75 s over its last 4 aggressive runs: an aggressive run to prevent wraparound \(it scans every page not yet frozen\); 3 index passes: .*; 75% of it asleep in the cost delay/],
    ['quiet: the scheduled anti-wraparound run of a big table, 16× its ordinary runs (it scans every page not yet frozen)',
      [...usual, run(-1, 1200, { aggressive: true, wraparound: true })], null],
    ['quiet: an aggressive run with fewer than 3 aggressive runs before it', [...usual, ...usualAggressive.slice(2), run(-1, 1200, { aggressive: true })], null],
    ['fires: an ordinary run against ordinary runs only, the aggressive ones left aside',
      [...usual, ...usualAggressive.map((e) => ({ ...e, details: { ...e.details, elapsed_s: 3000 } })), run(-1, 375)], /took 6 min, 5× its median of 75 s over its last 4 runs$/],
  ];
  for (const [name, events, summary] of cases) {
    it(name, () => {
      const findings = evaluate({ events });
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    });
  }

  it('one alert per table for repeated slow runs, resolved an hour after the last', () => {
    const events = [...usual, run(0, 600), run(20, 700)];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ events }), instants(0, 9, 10 * MINUTE), { refireMinIntervalMs: 10 * HOUR }), T0, 10 * MINUTE);
    const key = 'autovacuum-abnormal/primary/shop.public.orders/slow';
    expect(steps).toEqual([['fire', key, 0], ['resolve', key, 9]]);
  });
});

describe('autovacuum-abnormal: dead rows growing, autovacuum not coming', () => {
  const growing = table('n_dead_tup', '900000 950000 980000 1000000 1020000 1040000 1100000');
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['fires: 900,000 -> 1,100,000 dead rows in an hour, past its trigger point all along, autovacuum_count unchanged',
      [growing, table('autovacuum_count_total', '4 4 4 4 4 4 4'), table('n_live_tup', '_ _ _ _ _ _ 2000000'),
        table('last_autovacuum_timestamp_seconds', `_ _ _ _ _ _ ${(T0 - 5 * HOUR) / 1000}`)],
      /^autovacuum has not come to shop\.public\.events while its dead rows grew from 900,000 to 1,100,000 \(35% of its rows\) in 60 min, past its trigger point of 400,050; last autovacuumed 5 h ago: /],
    // 50 + 0.2 x 9,900,000 = 1,980,050: autovacuum is not due on this table yet.
    ['quiet: a big table under its own trigger point (threshold + scale factor x its rows)',
      [growing, table('autovacuum_count_total', '4 4 4 4 4 4 4'), table('n_live_tup', '_ _ _ _ _ _ 9900000')], null],
    ['quiet: the server\'s scale factor raised (pg_settings) puts the trigger point above the dead rows',
      [growing, table('n_live_tup', '_ _ _ _ _ _ 2000000'), seriesOf('pg_settings_autovacuum_vacuum_scale_factor', '_ _ _ _ _ _ 0.5', every10)], null],
    ['quiet: crossed the trigger point within the hour: autovacuum may be on its way',
      [table('n_dead_tup', '300000 _ _ _ _ _ 1100000'), table('n_live_tup', '_ _ _ _ _ _ 2000000')], null],
    ['quiet: 999,999 dead rows', [table('n_dead_tup', '800000 999999')], null],
    ['quiet: grew by 99,999 only', [table('n_dead_tup', '1000000 _ _ _ _ _ 1099999')], null],
    ['quiet: autovacuum ran (its count moved)', [growing, table('autovacuum_count_total', '4 4 4 5 5 5 5')], null],
    ['quiet: a vacuum of the table is running now', [growing, table('autovacuum_count_total', '4 4 4 4 4 4 4'),
      seriesOf(`pg_stat_progress_vacuum_heap_blocks{${TABLE}}`, '_ _ _ _ _ _ 1000', every10)], null],
    ['quiet: sampled for 20 min only', [table('n_dead_tup', '_ _ _ _ 1000000 1050000 1200000')], null],
    // Every 5 min: what the last tenth of the window (6 min) holds decides which tables are read.
    ['fires: the newest sample is null, the one 5 min before it counts',
      [seriesOf(`pg_stat_user_tables_n_dead_tup{${TABLE}}`, '900000 _ _ _ _ _ _ _ _ _ _ 1100000 null', every5)], /grew from 900,000 to 1,100,000 in 55 min, past its trigger point of 50;/],
    ['quiet: the newest sample fell under 1,000,000',
      [seriesOf(`pg_stat_user_tables_n_dead_tup{${TABLE}}`, '900000 _ _ _ _ _ _ _ _ _ _ 1100000 999999', every5)], null],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate({ series });
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    });
  }

  it('quiet when an autovacuum report for the table came in the window', () => {
    const report = eventOf('autovacuum', autovacuumDetails({ database: 'shop', table: 'events', elapsed_s: 3 }), { tsMs: T0 - 30 * MINUTE });
    expect(evaluate({ series: [growing], events: [report] })).toEqual([]);
  });
});
