import { describe, expect, it } from 'vitest';
import { basisOf, type AutovacuumDetails } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { parallelAutovacuumStarved, DEFAULTS } from './parallel-autovacuum-starved.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails } from './test-events.js';

const MIN = 60_000;
const rule = parallelAutovacuumStarved(DEFAULTS);

function run(minute: number, table: string, d: Partial<AutovacuumDetails>): RuleEvent<'autovacuum'> {
  return eventOf('autovacuum', autovacuumDetails({ database: 'vahiddb', table, ...d }), { tsMs: T0 + minute * MIN });
}
const starved = (minute: number, table = 'person') => run(minute, table, { parallel_workers_planned: 3, parallel_workers_launched: 1 });
const full = (minute: number, table = 'person') => run(minute, table, { parallel_workers_planned: 3, parallel_workers_launched: 3 });

const evaluate = (events: RuleEvent[], minute = 30) => rule.evaluate(new MemoryRuleView({ events }).at(T0 + minute * MIN), T0 + minute * MIN);

describe('parallel-autovacuum-starved', () => {
  const cases: Array<[string, RuleEvent[], boolean]> = [
    ['fires: two runs launched 1 of 3 planned workers', [starved(5), full(10), starved(20, 'orders')], true],
    ['fires: the index cleanup phase came up short', [
      run(5, 'events', { parallel_cleanup_workers_planned: 2, parallel_cleanup_workers_launched: 0 }),
      run(6, 'events', { parallel_cleanup_workers_planned: 2, parallel_cleanup_workers_launched: 1 }),
    ], true],
    ['quiet: once is not repeatedly', [starved(5), full(10)], false],
    ['quiet: every run got its workers', [full(5), full(10), full(20)], false],
    ['quiet: two index scans launched 6 "in total" for 3 planned per pass', [
      run(5, 'big', { index_scans: 2, parallel_workers_planned: 3, parallel_workers_launched: 6 }),
      run(9, 'big', { index_scans: 2, parallel_workers_planned: 3, parallel_workers_launched: 6 }),
    ], false],
    ['quiet: no parallel vacuum planned at all (PG 13-18, or autovacuum_max_parallel_workers = 0)', [run(5, 'a', {}), run(6, 'b', {})], false],
    ['quiet: the starved runs are older than the hour', [starved(-40), starved(-35)], false],
  ];
  for (const [name, events, fires] of cases) {
    it(name, () => expect(evaluate(events).length).toBe(fires ? 1 : 0));
  }

  it('names the worst table, the counts and the pools to look at', () => {
    const events = [starved(5), full(10), run(20, 'orders', { parallel_workers_planned: 4, parallel_workers_launched: 0 })];
    const [finding] = evaluate(events);
    expect(finding?.summary).toBe(
      'autovacuum got fewer parallel workers than it planned in 2 of 3 parallel runs in the last 60 min ' +
      '(worst: vahiddb.public.orders, index vacuum: 4 planned, 0 launched): the max_parallel_workers / max_worker_processes pool is exhausted ' +
      '(its size is not sampled: pgvigil run reads max_parallel_workers and max_worker_processes from pg_settings)',
    );
    expect(finding?.evidence.eventIds).toEqual([events[0]!.id, events[2]!.id]);
  });

  it('names the pool sizes when pg_settings is sampled', () => {
    const sampled = { startMs: T0 + 29 * MIN };
    const limits = [
      seriesOf('pg_settings_max_parallel_workers', '2', sampled),
      seriesOf('pg_settings_max_worker_processes', '8', sampled),
      seriesOf('pg_settings_autovacuum_max_parallel_workers', '4', sampled),
    ];
    const now = T0 + 30 * MIN;
    const [finding] = rule.evaluate(new MemoryRuleView({ events: [starved(5), starved(20)], series: limits }).at(now), now);
    expect(finding?.summary).toMatch(/pool is exhausted \(max_parallel_workers = 2, max_worker_processes = 8, autovacuum_max_parallel_workers = 4\)$/);
    expect(finding?.evidence.facts).toMatchObject({ max_parallel_workers: 2, max_worker_processes: 8 });
    // The samples are cited, so the alert's basis is log+samples; from the log alone it is log.
    expect(finding?.evidence.series.map((s) => [s.name, s.value])).toEqual([
      ['pg_settings_max_parallel_workers', 2], ['pg_settings_max_worker_processes', 8], ['pg_settings_autovacuum_max_parallel_workers', 4],
    ]);
    expect(basisOf(finding!.evidence)).toBe('log+samples');
    expect(basisOf(evaluate([starved(5), starved(20)])[0]!.evidence)).toBe('log');
  });

  it('fires once and resolves when the starved runs leave the window', () => {
    const events = [starved(0), starved(10)];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ events }), instants(0, 9, 10 * MIN)), T0, 10 * MIN);
    expect(steps).toEqual([['fire', 'parallel-autovacuum-starved/primary', 1], ['resolve', 'parallel-autovacuum-starved/primary', 7]]);
  });
});
