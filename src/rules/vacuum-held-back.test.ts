import { describe, expect, it } from 'vitest';
import { basisOf } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails } from './test-events.js';
import { vacuumHeldBack, DEFAULTS } from './vacuum-held-back.js';
import { nextXidAtReport, xidPrecedes } from './vacuum-cutoffs.js';
import type { SeriesData } from './rule-view.js';

const at = (step: number) => T0 + step * STEP;

function vacuum(step: number, database: string, table: string, cutoff: number, dead: number, ageXids = 5000, schema = 'public') {
  return eventOf('autovacuum', autovacuumDetails({
    database, schema, table, removable_cutoff_xid: cutoff, removable_cutoff_age_xids: ageXids, tuples_dead_not_removable: dead,
  }), { tsMs: at(step), database, pid: 100 + step });
}
const catalog = (step: number, database: string, table: string, cutoff: number, dead: number) => vacuum(step, database, table, cutoff, dead, 5000, 'pg_catalog');

type Report = ReturnType<typeof vacuum>;
const view = (events: Report[], series: SeriesData[] = []) => new MemoryRuleView({ events, series, staleAfterMs: 2 * STEP });
const rule = vacuumHeldBack(DEFAULTS);
const evaluate = (events: Report[], series: SeriesData[] = [], step = 7) => rule.evaluate(view(events, series).at(at(step)), at(step));

describe('vacuum-held-back', () => {
  const cases: Array<{ name: string; events: Report[]; fires: boolean }> = [
    { name: 'fires: two databases report dead rows at one cutoff', events: [vacuum(2, 'shop', 'orders', 771, 100), vacuum(5, 'billing', 'invoices', 771, 20)], fires: true },
    { name: 'fires: one table, run after run at one cutoff', events: [vacuum(2, 'shop', 'orders', 771, 100), vacuum(5, 'shop', 'orders', 771, 300)], fires: true },
    { name: 'quiet: the cutoff advances between reports', events: [vacuum(2, 'shop', 'orders', 771, 100), vacuum(5, 'shop', 'orders', 802, 100)], fires: false },
    { name: 'quiet: a single report', events: [vacuum(2, 'shop', 'orders', 771, 100)], fires: false },
    { name: 'quiet: no dead rows held back', events: [vacuum(2, 'shop', 'orders', 771, 0), vacuum(5, 'billing', 'invoices', 771, 0)], fires: false },
    {
      name: 'quiet: a later report in one of the databases has a newer cutoff (the holder let go)',
      events: [vacuum(2, 'shop', 'orders', 771, 100), vacuum(4, 'shop', 'orders', 771, 100), vacuum(6, 'shop', 'orders', 900, 0)],
      fires: false,
    },
    {
      name: 'fires: a newer cutoff in another database does not release a hold in this one',
      events: [vacuum(2, 'shop', 'orders', 771, 100), vacuum(4, 'shop', 'orders', 771, 100), vacuum(6, 'billing', 'invoices', 900, 0)],
      fires: true,
    },
    {
      name: 'fires: only catalogs held, though user tables of the same databases vacuum at newer cutoffs',
      events: [catalog(2, 'shop', 'pg_attribute', 771, 900), catalog(4, 'billing', 'pg_class', 771, 90), vacuum(6, 'shop', 'orders', 950, 0)],
      fires: true,
    },
    {
      name: 'quiet: only catalogs held, then a catalog vacuums at a newer cutoff',
      events: [catalog(2, 'shop', 'pg_attribute', 771, 900), catalog(4, 'billing', 'pg_class', 771, 90), catalog(6, 'shop', 'pg_type', 950, 0)],
      fires: false,
    },
    { name: 'quiet: reports older than the lookback', events: [vacuum(-5000, 'shop', 'orders', 771, 100), vacuum(-4999, 'shop', 'orders', 771, 100)], fires: false },
  ];

  for (const c of cases) {
    it(c.name, () => {
      expect(evaluate(c.events).length).toBe(c.fires ? 1 : 0);
    });
  }

  it('leaves a hold that began with a sampled REPACK (CONCURRENTLY) run to repack-holds-vacuum', () => {
    const slot = (steps: string) => seriesOf('pg_replication_slots_info{slot_name="pg_repack_4243",slot_type="logical",owner="repack",plugin="pgrepack",database="shop",temporary="true",owner_pid="4242"}', steps);
    const during = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    expect(evaluate(during, [slot('_ _ 1 1 1 1 1 1')])).toEqual([]);
    // A hold seen well before the run started is someone else's.
    const before = [vacuum(-20, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    expect(evaluate(before, [slot('_ _ 1 1 1 1 1 1')])).toHaveLength(1);
    // The run has ended (its slot is stale) but no report shows the hold over yet: still the run's.
    expect(evaluate(during, [slot('_ _ 1 1 1 1')], 12)).toEqual([]);
    expect(evaluate(during, [], 12)).toHaveLength(1);
  });

  it('several databases: a server-wide holder, with the cutoff, its age, the tables and the growth; basis log', () => {
    const events = [vacuum(2, 'shop', 'orders', 771, 100), vacuum(4, 'billing', 'invoices', 771, 20), vacuum(6, 'shop', 'orders', 771, 400, 9000)];
    const [finding] = evaluate(events);
    expect(finding?.summary).toBe(
      'vacuum held back in 2 databases (billing, shop) since 00:00:10 UTC: removable cutoff stuck at XID 771 (9,000 XIDs old) ' +
      'in 2 tables, 420 dead rows not removable, up from 120; a server-wide holder (a replication slot, a standby\'s ' +
      'hot_standby_feedback, or a REPACK (CONCURRENTLY)); the holder is not in the log',
    );
    expect(finding?.evidence.eventIds).toEqual(events.map((e) => e.id));
    expect(finding?.evidence.facts).toMatchObject({
      removable_cutoff_xid: 771, removable_cutoff_age_xids: 9000, next_xid_at_report: 9771, held_databases: 'billing, shop',
      held_tables: 'billing.public.invoices, shop.public.orders', dead_tuples_not_removable: 420, holder_scope: 'cluster',
      autovacuum_pids: '102, 104, 106', would_be_certain_with: expect.stringContaining('pgvigil run'),
    });
    expect(basisOf(finding!.evidence)).toBe('log');
  });

  it('only system catalogs held: probably a logical slot\'s catalog_xmin', () => {
    const [finding] = evaluate([catalog(2, 'shop', 'pg_attribute', 771, 900), catalog(4, 'billing', 'pg_class', 771, 90)]);
    expect(finding?.summary).toMatch(/^vacuum held back in 2 databases \(billing, shop\) .*; only system catalogs are held: probably a logical replication slot's catalog_xmin \(a slot nobody consumes, or one far behind\); the holder is not in the log$/);
    expect(finding?.evidence.facts.holder_scope).toBe('catalog');
  });

  it('one database: probably a session or prepared transaction there', () => {
    const [finding] = evaluate([vacuum(2, 'shop', 'orders', 771, 100), vacuum(5, 'shop', 'orders', 771, 100)]);
    expect(finding?.summary).toMatch(/^vacuum held back in database shop since 00:00:10 UTC: .* 100 dead rows not removable; probably a session or prepared transaction in shop \(only this database reported it\); the holder is not in the log$/);
    expect(finding?.labels).toEqual({ scope: 'database', database: 'shop' });
  });

  it('with xmin horizon samples names the holder that fits the scope; basis log+samples', () => {
    const events = [vacuum(2, 'shop', 'orders', 771, 100), vacuum(5, 'shop', 'orders', 771, 100)];
    const series = [
      seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4242",datname="other",usename="app",state="idle in transaction"}', '_ _ _ _ 9e6 9e6 9e6 9e6'),
      seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4343",datname="shop",usename="app",state="idle in transaction"}', '_ _ _ _ 6000 6000 6000 6000'),
      seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_catalog_xmin",scope="catalog",name="sub1"}', '_ _ _ _ 8e6 8e6 8e6 8e6'),
    ];
    const [finding] = evaluate(events, series);
    expect(finding?.summary).toMatch(/; held by session pid 4343 \(app@shop, idle in transaction\), 6,000 XIDs old$/);
    expect(finding?.evidence.series).toHaveLength(1);
    expect(basisOf(finding!.evidence)).toBe('log+samples');
  });

  describe('names the holder by its sample at the reports, not its latest one', () => {
    const slot = (values: string) => seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_xmin",scope="cluster",owner="physical_standby",name="standby1_slot"}', values);
    const session = (values: string) => seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4242",datname="shop",usename="app",state="idle in transaction"}', values);
    // The standby's query holds XID 771 while two databases report it at ages 5000 and 5200.
    const held = [vacuum(2, 'shop', 'orders', 771, 100, 5000), vacuum(4, 'billing', 'invoices', 771, 20, 5200), vacuum(10, 'shop', 'orders', 950, 0, 40)];
    const named = /; held by physical slot standby1_slot \(a standby's hot_standby_feedback, or a slot nobody uses\), 5,\d{3} XIDs old$/;
    const lastSummary = (series: SeriesData[]) => timeline([rule], view(held, series), instants(0, 12), { refireMinIntervalMs: 0 })
      .filter((t) => t.action === 'fire').at(-1)?.summary;

    it('keeps the holder after it let go, until a report shows the hold over', () => {
      // At step 6 the standby's query ends: the slot's xmin is new, its age small.
      const transitions = timeline([rule], view(held, [slot('_ _ 5000 5100 5200 5300 20 20 20 20 20')]), instants(0, 12), { refireMinIntervalMs: 0 });
      expect(transitionSteps(transitions)).toEqual([['fire', 'vacuum-held-back/primary/771', 4], ['resolve', 'vacuum-held-back/primary/771', 10]]);
      expect(transitions[0]!.summary).toMatch(named);
      expect(basisOf(transitions[0]!.alert!.evidence)).toBe('log+samples');
      expect(evaluate(held.slice(0, 2), [slot('_ _ 5000 5100 5200 5300 20 20 20 20 20')], 9)[0]?.summary).toMatch(named);
    });

    it('compares a report with the first poll after it: one before it counts fewer XIDs', () => {
      // Polled just before each report, the slot looked 100 XIDs younger than the report says.
      expect(lastSummary([slot('_ 4900 _ 5100 5300 5300 5300')])).toMatch(named);
      // The latest poll (5,100) is younger than the latest report (5,200) but came after the first (5,000).
      expect(evaluate(held.slice(0, 2), [slot('_ 4900 _ 5100')], 4)[0]?.summary).toMatch(/; held by physical slot standby1_slot .*, 5,100 XIDs old$/);
      // Polled only before the reports: nothing tells it held the cutoff.
      expect(evaluate(held.slice(0, 2), [slot('_ 4900')], 4)[0]?.summary).toContain('the holder is not in the log');
    });

    it('names no holder younger than the cutoff, nor one of another database, nor one polled long after', () => {
      expect(evaluate(held.slice(0, 2), [slot('_ _ 4000 4100 4200 4300 4400')])[0]?.summary).toContain('the holder is not in the log');
      expect(evaluate(held.slice(0, 2), [session('_ _ 9e6 9e6 9e6 9e6 9e6')])[0]?.summary).toContain('the holder is not in the log');
      const late = seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_xmin",scope="cluster",owner="physical_standby",name="standby1_slot"}', '9e6', { startMs: at(4) + 60_000 });
      expect(evaluate(held.slice(0, 2), [late], 20)[0]?.summary).toContain('the holder is not in the log');
    });
  });

  it('fires once with a stable key while reports keep coming, and resolves when the cutoff moves', () => {
    const events = [vacuum(2, 'shop', 'orders', 771, 100), vacuum(4, 'shop', 'orders', 771, 200), vacuum(6, 'shop', 'orders', 771, 300), vacuum(9, 'shop', 'orders', 950, 0)];
    expect(transitionSteps(timeline([rule], view(events), instants(0, 12)))).toEqual([
      ['fire', 'vacuum-held-back/primary/771', 4],
      ['resolve', 'vacuum-held-back/primary/771', 9],
    ]);
  });
});

describe('vacuum cutoffs', () => {
  it('the next XID when the report ended is the cutoff plus its age, wrapping at 2^32', () => {
    expect(nextXidAtReport({ removable_cutoff_xid: 753, removable_cutoff_age_xids: 3 })).toBe(756);
    expect(nextXidAtReport({ removable_cutoff_xid: 2 ** 32 - 10, removable_cutoff_age_xids: 20 })).toBe(10);
    expect(nextXidAtReport({ removable_cutoff_xid: 753, removable_cutoff_age_xids: null })).toBeNull();
  });

  it('compares XIDs modulo 2^32', () => {
    expect(xidPrecedes(771, 900)).toBe(true);
    expect(xidPrecedes(900, 771)).toBe(false);
    expect(xidPrecedes(771, 771)).toBe(false);
    expect(xidPrecedes(2 ** 32 - 10, 5)).toBe(true);
  });
});
