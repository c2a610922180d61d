import { describe, expect, it } from 'vitest';
import { DEFAULTS, invalidIndexLeft } from './invalid-index-left.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// The collector polls every database once a minute: the default 5 min is five steps.
const MINUTE = 60_000;
const every = { stepMs: MINUTE };
const rule = invalidIndexLeft();

interface IndexSpec {
  schema?: string;
  table?: string;
  index?: string;
  /** indisready in every sample: 1 maintained on every write, 0 its build failed first. */
  ready?: number;
  sizeBytes?: number;
}

/**
 * One invalid index as pg_invalid_indexes samples it: `left` is pg_invalid_indexes_left_behind
 * per poll (1 nothing works on it, 0 a build runs on its table, `_` not listed: dropped or valid);
 * `runs` the polls of its database (one value per poll, listed indexes or not), `left`'s length
 * by default.
 */
function invalidIndex(left: string, o: IndexSpec & { runs?: string } = {}): SeriesData[] {
  const labels = `datname="shop",schemaname="${o.schema ?? 'public'}",relname="${o.table ?? 'orders'}",indexrelname="${o.index ?? 'orders_amount_unique'}"`;
  const listed = left.trim().split(/\s+/);
  return [
    seriesOf(`pg_invalid_indexes_left_behind{${labels}}`, left, every),
    seriesOf(`pg_invalid_indexes_ready{${labels}}`, listed.map((v) => (v === '_' ? '_' : String(o.ready ?? 0))).join(' '), every),
    seriesOf(`pg_invalid_indexes_size_bytes{${labels}}`, listed.map((v) => (v === '_' ? '_' : String(o.sizeBytes ?? 0))).join(' '), every),
    seriesOf('pg_invalid_indexes_indexes{datname="shop"}', o.runs ?? listed.map(() => '1').join(' '), every),
  ];
}

const evaluateAt = (series: SeriesData[], step: number) =>
  rule.evaluate(new MemoryRuleView({ series, staleAfterMs: 2 * MINUTE }).at(T0 + step * MINUTE), T0 + step * MINUTE);
const summaries = (series: SeriesData[], step: number) => evaluateAt(series, step).map((f) => f.summary);

describe('invalid-index-left at its defaults', () => {
  it('fires after 5 min with nothing working on it, naming the index, its table, the likely origin and the statements to run', () => {
    const [finding] = evaluateAt(invalidIndex('1 1 1 1 1 1'), 5);
    expect(finding?.summary).toBe(
      'Invalid index public.orders_amount_unique on shop.public.orders for 5 min (since 00:00:00 UTC), probably left by a CREATE INDEX CONCURRENTLY ' +
      'that failed or was cancelled: the planner never uses it (not maintained either: its build failed before it was ready); ' +
      'a CREATE INDEX CONCURRENTLY of the same name fails ("already exists"), and with IF NOT EXISTS builds nothing. ' +
      'DROP INDEX CONCURRENTLY public.orders_amount_unique, then run the CREATE INDEX CONCURRENTLY again once what failed it is fixed ' +
      '(a unique index fails again on the same duplicate keys), or rebuild it with REINDEX INDEX CONCURRENTLY public.orders_amount_unique',
    );
    expect(finding?.severity).toBeUndefined();
    expect(rule.severity).toBe('warning');
    expect(finding?.dedupKey).toBe('invalid-index-left/primary/shop/public/orders_amount_unique');
    expect(finding?.labels).toEqual({ datname: 'shop', schemaname: 'public', relname: 'orders', indexrelname: 'orders_amount_unique' });
    expect(finding?.evidence.facts).toMatchObject({ origin: 'create_index_concurrently', ready: 0, invalid_since_ms: T0, table: 'public.orders' });
    expect(finding?.evidence.series.map((s) => s.name)).toEqual(['pg_invalid_indexes_left_behind', 'pg_invalid_indexes_ready', 'pg_invalid_indexes_size_bytes']);
  });

  it('says what a ready index costs: it is maintained on every write', () => {
    expect(summaries(invalidIndex('1 1 1 1 1 1', { ready: 1, sizeBytes: 25 * 1024 * 1024 }), 5)[0])
      .toContain(': the planner never uses it, yet it is maintained on every write (25 MB); a CREATE INDEX CONCURRENTLY');
  });

  it('names REINDEX CONCURRENTLY\'s copies by their suffixes, with only the DROP to run', () => {
    const [ccnew] = summaries(invalidIndex('1 1 1 1 1 1', { index: 'orders_pkey_ccnew1' }), 5);
    expect(ccnew).toMatch(/^Invalid index public\.orders_pkey_ccnew1 on shop\.public\.orders for 5 min \(since 00:00:00 UTC\), by its name the new copy a REINDEX CONCURRENTLY was building when it failed or was cancelled \(the index it rebuilt still serves\): the planner never uses it \([^)]*\)\. DROP INDEX CONCURRENTLY public\.orders_pkey_ccnew1$/);
    const [ccold] = summaries(invalidIndex('1 1 1 1 1 1', { index: 'orders_pkey_ccold', ready: 1 }), 5);
    expect(ccold).toMatch(/, by its name the old copy a REINDEX CONCURRENTLY swapped out and did not get to drop \(the rebuilt index serves under the old name\): .*\. DROP INDEX CONCURRENTLY public\.orders_pkey_ccold$/);
  });

  it('quotes names that need it in the statements', () => {
    const [summary] = summaries(invalidIndex('1 1 1 1 1 1', { schema: 'Sales', table: 'Orders', index: 'By Amount' }), 5);
    expect(summary).toContain('Invalid index Sales.By Amount on shop.Sales.Orders');
    expect(summary).toContain('DROP INDEX CONCURRENTLY "Sales"."By Amount", then');
  });

  const quiet: Array<[string, SeriesData[], number]> = [
    ['near miss: left for one poll less than 5 min', invalidIndex('_ _ 1 1 1 1 1'), 6],
    ['a CREATE INDEX CONCURRENTLY running on its table all along', invalidIndex('0 0 0 0 0 0 0 0 0 0'), 9],
    ['a build that ran until 3 min ago, then failed', invalidIndex('0 0 0 0 0 0 0 1 1 1 1'), 10],
    ['dropped: the last poll of its database no longer lists it', invalidIndex('1 1 1 1 1 1 1 _', { runs: '1 1 1 1 1 1 1 0' }), 7],
    ['its database not polled for 4 min (dropped)', invalidIndex('1 1 1 1 1 1 _ _ _ _'), 9],
  ];
  for (const [name, series, step] of quiet) it(`quiet: ${name}`, () => expect(evaluateAt(series, step)).toEqual([]));

  it('a missed poll does not restart the count', () => {
    expect(summaries(invalidIndex('1 1 _ 1 1 1', { runs: '1 1 _ 1 1 1' }), 5)).toHaveLength(1);
  });

  it('says "for more than" when the index was invalid before the samples it reads', () => {
    const lookbackSteps = DEFAULTS.lookbackMs / MINUTE;
    const [summary] = summaries(invalidIndex(Array(lookbackSteps + 20).fill('1').join(' ')), lookbackSteps + 19);
    expect(summary).toMatch(/^Invalid index public\.orders_amount_unique on shop\.public\.orders for more than 6 h, probably left/);
  });

  it('fires once while it lasts; resolves at the first poll without it, and when a REINDEX starts working on it', () => {
    const resolvedSteps = (series: SeriesData[], lastStep: number) => transitionSteps(
      timeline([rule], new MemoryRuleView({ series, staleAfterMs: 2 * MINUTE }), instants(0, lastStep, MINUTE), { refireMinIntervalMs: 3_600_000 }), T0, MINUTE);
    const key = 'invalid-index-left/primary/shop/public/orders_amount_unique';
    expect(resolvedSteps(invalidIndex('1 1 1 1 1 1 1 1 _ _', { runs: '1 1 1 1 1 1 1 1 0 0' }), 9)).toEqual([['fire', key, 5], ['resolve', key, 8]]);
    expect(resolvedSteps(invalidIndex('1 1 1 1 1 1 1 1 0 0'), 9)).toEqual([['fire', key, 5], ['resolve', key, 8]]);
  });

  it('judges each index and each server on its own', () => {
    const other = invalidIndex('1 1 1 1 1 1', { index: 'orders_note_idx' }).map((s) => ({ ...s, target: 'other' }));
    const findings = evaluateAt([...invalidIndex('1 1 1 1 1 1'), ...invalidIndex('_ _ 1 1 1 1', { index: 'orders_recent_idx' }), ...other], 5);
    expect(findings.map((f) => f.dedupKey)).toEqual([
      'invalid-index-left/primary/shop/public/orders_amount_unique', 'invalid-index-left/other/shop/public/orders_note_idx',
    ]);
  });
});
