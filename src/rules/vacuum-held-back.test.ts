import { describe, expect, it } from 'vitest';
import { basisOf } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { timeline, transitionSteps } from './rule-timeline.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails } from './test-events.js';
import { vacuumHeldBack, DEFAULTS } from './vacuum-held-back.js';
import { cutoffBehindSince, nextXidAtReport, xidPrecedes } from './vacuum-cutoffs.js';
import type { SeriesData } from './rule-view.js';

const MIN = 60_000;
const at = (minute: number) => T0 + minute * MIN;
/** Every minute from `from` to `to`: the instants a timeline is evaluated at. */
const minutes = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => at(from + i));

interface ReportShape { ageXids?: number | null; rows?: number | null; schema?: string }

let pid = 100;
/** An autovacuum report at `minute`: its cutoff, how many XIDs old it was, the dead rows it kept of the table's rows. */
function vacuum(minute: number, database: string, table: string, cutoff: number, dead: number, shape: ReportShape = {}) {
  const { ageXids = 5000, rows = 50_000, schema = 'public' } = shape;
  return eventOf('autovacuum', autovacuumDetails({
    database, schema, table, removable_cutoff_xid: cutoff, removable_cutoff_age_xids: ageXids, tuples_dead_not_removable: dead, tuples_remain: rows,
  }), { tsMs: at(minute), database, pid: pid++ });
}
const catalog = (minute: number, database: string, table: string, cutoff: number, dead: number) =>
  vacuum(minute, database, table, cutoff, dead, { schema: 'pg_catalog', rows: dead * 2 });

/** A table vacuumed every `everyMin` minutes from `from` to `to` at one cutoff, its dead rows and age growing. */
function heldAt(cutoff: number, from: number, to: number, o: { database?: string; table?: string; everyMin?: number; dead?: number; ageXids?: number } = {}) {
  const { database = 'shop', table = 'orders', everyMin = 5, dead = 20_000, ageXids = 5000 } = o;
  const out: Report[] = [];
  for (let m = from; m <= to; m += everyMin) out.push(vacuum(m, database, table, cutoff, dead + (m - from) * 100, { ageXids: ageXids + (m - from) * 100 }));
  return out;
}

type Report = ReturnType<typeof vacuum>;
const view = (events: Report[], series: SeriesData[] = []) => new MemoryRuleView({ events, series, staleAfterMs: 10_000 });
const rule = vacuumHeldBack(DEFAULTS);
const evaluate = (events: Report[], series: SeriesData[] = [], minute = 45) => rule.evaluate(view(events, series).at(at(minute)), at(minute));
const held = DEFAULTS.minHeldMs / MIN;

describe('vacuum-held-back', () => {
  /** Two reports of shop.orders at one cutoff, `gapMin` apart: held that long. */
  const pair = (gapMin: number, shape: ReportShape & { dead?: number } = {}) =>
    [vacuum(0, 'shop', 'orders', 771, shape.dead ?? 20_000, shape), vacuum(gapMin, 'shop', 'orders', 771, shape.dead ?? 20_000, shape)];
  const { minAgeXids, minDeadTuples, minDeadPercent } = DEFAULTS;
  const rowsAtPercent = (percent: number) => Math.ceil((minDeadTuples * 100) / percent);

  const cases: Array<{ name: string; events: Report[]; fires: boolean; minute?: number }> = [
    { name: 'fires: one table, report after report at one cutoff for longer than min_held_ms', events: heldAt(771, 0, held + 5), fires: true },
    { name: 'fires: held exactly min_held_ms', events: pair(held), fires: true, minute: held },
    { name: 'quiet: held a minute less than min_held_ms', events: pair(held - 1), fires: false, minute: held - 1 },
    { name: 'fires: the cutoff min_age_xids old', events: pair(held, { ageXids: minAgeXids }), fires: true, minute: held },
    { name: 'quiet: the cutoff one XID younger than min_age_xids (an idle server, a few XIDs for an hour)', events: pair(held, { ageXids: minAgeXids - 1 }), fires: false, minute: held },
    { name: 'fires: min_dead_tuples dead rows', events: pair(held, { dead: minDeadTuples, rows: rowsAtPercent(minDeadPercent) }), fires: true, minute: held },
    { name: 'quiet: one dead row fewer than min_dead_tuples', events: pair(held, { dead: minDeadTuples - 1, rows: minDeadTuples }), fires: false, minute: held },
    { name: 'quiet: the dead rows just under min_dead_percent of a big table', events: pair(held, { dead: minDeadTuples, rows: rowsAtPercent(minDeadPercent) + 1 }), fires: false, minute: held },
    { name: 'fires: the table\'s rows not in the report (the dead rows alone count)', events: pair(held, { rows: null }), fires: true, minute: held },
    { name: 'fires: 13/14 print no age: the time held alone counts', events: pair(held, { ageXids: null }), fires: true, minute: held },
    { name: 'quiet: a single report', events: [vacuum(40, 'shop', 'orders', 771, 20_000)], fires: false },
    {
      name: 'quiet: the newest report shows a young cutoff (the holder let go)',
      events: [...heldAt(771, 0, 40), vacuum(44, 'shop', 'orders', 9000, 0, { ageXids: 20 })],
      fires: false,
    },
    {
      name: 'quiet: the held table was vacuumed at a young cutoff after others still held (the newest report decides)',
      events: [...heldAt(771, 0, 40), vacuum(44, 'shop', 'orders', 9000, 50_000, { ageXids: 20 })],
      fires: false,
    },
    {
      name: 'fires: a young cutoff in another database does not end a hold in this one',
      events: [...heldAt(771, 0, 40), vacuum(44, 'billing', 'invoices', 9000, 0, { ageXids: 20 })],
      fires: true,
    },
    {
      name: 'fires: a table with few dead rows at the old cutoff neither makes nor ends a hold',
      events: [...heldAt(771, 0, 40), vacuum(44, 'shop', 'tiny', 771, 3, { ageXids: 9000, rows: 10 })],
      fires: true,
    },
    { name: 'quiet: no report of the hold for quiet_ms', events: heldAt(771, 0, 40), fires: false, minute: 40 + DEFAULTS.quietMs / MIN + 1 },
    { name: 'quiet: reports older than the lookback', events: heldAt(771, -500, -400), fires: false, minute: 0 },
    {
      // The demo's quiet end, before this rule learned time: a 30 s hold a few XIDs old.
      name: 'quiet: a 30 s hold, 10-40 XIDs old',
      events: [vacuum(0, 'shop', 'orders', 771, 500, { ageXids: 10 }), vacuum(0.5, 'billing', 'invoices', 771, 900, { ageXids: 40 })],
      fires: false,
      minute: 1,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      expect(evaluate(c.events, [], c.minute ?? 45).length).toBe(c.fires ? 1 : 0);
    });
  }

  it('stays quiet for a busy normal day: a standby\'s 10-60 s queries, a pg_dump, a CREATE INDEX CONCURRENTLY, a logical consumer', () => {
    // 30 XIDs/s; every minute a small hot table and a big one are vacuumed in two databases.
    const nextXid = (minute: number) => 1000 + 1800 * minute;
    // What holds the horizon at each minute, as the XID it started at: feedback from a standby
    // query of up to 60 s, a 12 min pg_dump from minute 60, a 15 min CREATE INDEX CONCURRENTLY from 200.
    const horizon = (minute: number) =>
      minute >= 60 && minute < 72 ? nextXid(60) : minute >= 200 && minute < 215 ? nextXid(200) : nextXid(minute) - 30 * (10 + (minute % 6) * 10);
    const events: Report[] = [];
    for (let m = 0; m <= 300; m++) {
      const cutoff = horizon(m);
      const ageXids = nextXid(m) - cutoff;
      events.push(vacuum(m, m % 2 ? 'shop' : 'billing', 'pgbench_branches', cutoff, Math.min(ageXids, 50_000), { ageXids, rows: Math.min(ageXids, 50_000) + 1 }));
      events.push(vacuum(m + 0.5, 'shop', 'pgbench_accounts', cutoff, ageXids, { ageXids, rows: 1_000_000 }));
      // A logical slot's consumer confirms every 2 minutes: its catalog_xmin holds catalogs that long.
      const catalogCutoff = Math.min(cutoff, nextXid(m - (m % 2)));
      if (m % 5 === 0) events.push(vacuum(m + 0.7, 'shop', 'pg_attribute', catalogCutoff, 5000, { schema: 'pg_catalog', ageXids: nextXid(m) - catalogCutoff, rows: 6000 }));
    }
    expect(timeline([rule], view(events), minutes(0, 300))).toEqual([]);
  });

  it('a holder that moves slowly from cutoff to cutoff is one alert that updates, not one per cutoff; it resolves when the cutoff is young', () => {
    const nextXid = (minute: number) => 1000 + 1800 * minute;
    // A session whose xmin moves on by 10 XIDs every 5 minutes, against 9,000 XIDs a minute consumed.
    const events: Report[] = [];
    for (let m = 0; m <= 120; m += 5) events.push(vacuum(m, 'shop', 'orders', 1000 + 2 * m, 20_000 + 100 * m, { ageXids: nextXid(m) - (1000 + 2 * m) }));
    events.push(vacuum(125, 'shop', 'orders', nextXid(125) - 50, 0, { ageXids: 50 }));
    const transitions = timeline([rule], view(events), minutes(0, 130));
    const key = 'vacuum-held-back/primary/tables';
    expect(new Set(transitions.map((t) => t.dedupKey))).toEqual(new Set([key]));
    // Cutoff 1070 (minute 35) has been behind since minute 5, the first report whose next XID reached it.
    expect(transitionSteps(transitions, T0, MIN)[0]).toEqual(['fire', key, 35]);
    expect(transitionSteps(transitions.filter((t) => t.action === 'resolve'), T0, MIN)).toEqual([['resolve', key, 125]]);
    expect(transitions[0]!.summary).toMatch(/^vacuum held back in database shop for 30 min \(since 00:05:00 UTC\): removable cutoff at XID 1070 /);
  });

  it('several databases: probably a server-wide holder, with the cutoff, its age, how long, the tables, the growth, the share; basis log', () => {
    const events = [vacuum(0, 'shop', 'orders', 771, 10_000), vacuum(20, 'billing', 'invoices', 771, 2_000), vacuum(40, 'shop', 'orders', 771, 40_000, { ageXids: 9000 }),
      vacuum(41, 'billing', 'invoices', 771, 2_000)];
    const [finding] = evaluate(events);
    expect(finding?.summary).toBe(
      'vacuum held back in 2 databases (billing, shop) for 41 min (since 00:00:00 UTC): removable cutoff at XID 771 (5,000 XIDs old) ' +
      'in 2 tables, 42,000 dead rows not removable, up from 12,000 (80% of shop.public.orders\'s rows); probably a server-wide holder ' +
      '(a replication slot, a standby\'s hot_standby_feedback, or a REPACK (CONCURRENTLY)); the holder is not in the log',
    );
    expect(finding?.dedupKey).toBe('vacuum-held-back/primary/tables');
    expect(finding?.evidence.eventIds).toEqual(events.map((e) => e.id));
    expect(finding?.evidence.facts).toMatchObject({
      removable_cutoff_xid: 771, removable_cutoff_age_xids: 5000, next_xid_at_report: 5771, held_databases: 'billing, shop', held_seconds: 41 * 60,
      held_tables: 'billing.public.invoices, shop.public.orders', dead_tuples_not_removable: 42_000, holder_scope: 'cluster',
      most_held_table: 'shop.public.orders', most_held_table_dead_pct: 80, would_be_certain_with: expect.stringContaining('pgvigil run'),
    });
    expect(basisOf(finding!.evidence)).toBe('log');
    // A database that reported the held cutoff before it was old enough is in the same hold.
    expect(evaluate(events.slice(0, 3))[0]?.summary).toMatch(/^vacuum held back in 2 databases \(billing, shop\) for 40 min /);
    // Not one that reported a newer cutoff.
    expect(evaluate([...events.slice(0, 2), vacuum(21, 'billing', 'invoices', 9000, 0, { ageXids: 20 }), events[2]!])[0]?.summary)
      .toMatch(/^vacuum held back in database shop /);
  });

  it('only system catalogs held, proven by a user table vacuumed at a newer cutoff before: probably a logical slot\'s catalog_xmin', () => {
    const events = [vacuum(0, 'shop', 'orders', 900, 0, { ageXids: 5 }), catalog(1, 'shop', 'pg_attribute', 771, 90_000), catalog(40, 'shop', 'pg_attribute', 771, 90_000)];
    const findings = evaluate(events);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.summary).toMatch(/^vacuum held back in database shop .*; only system catalogs are held: probably a logical replication slot's catalog_xmin \(a slot nobody consumes, or one far behind\); the holder is not in the log$/);
    expect(findings[0]?.dedupKey).toBe('vacuum-held-back/primary/catalogs');
    // A later user table at the newer cutoff neither ends nor joins it.
    expect(evaluate([...events, vacuum(42, 'shop', 'orders', 9000, 0, { ageXids: 5 })])).toHaveLength(1);
    // Without the proof, the catalogs are held like the rest, and a young user table ends it.
    expect(evaluate([...events.slice(1), vacuum(42, 'shop', 'orders', 9000, 0, { ageXids: 5 })])).toEqual([]);
  });

  it('a hold seen in one database, then in another, stays one alert', () => {
    const events = [...heldAt(771, 0, 40), vacuum(43, 'billing', 'invoices', 771, 30_000, { ageXids: 9000 })];
    const transitions = timeline([rule], view(events), minutes(0, 45));
    expect(new Set(transitions.map((t) => `${t.action} ${t.dedupKey}`))).toEqual(new Set(['fire vacuum-held-back/primary/tables']));
    expect(transitions.at(-1)?.summary).toMatch(/^vacuum held back in 2 databases \(billing, shop\) /);
  });

  it('only catalogs in every report of the hold: probably a logical slot\'s catalog_xmin', () => {
    const [finding] = evaluate([catalog(0, 'billing', 'pg_class', 771, 20_000), catalog(20, 'shop', 'pg_attribute', 771, 20_000), catalog(40, 'billing', 'pg_class', 771, 20_000)]);
    expect(finding?.dedupKey).toBe('vacuum-held-back/primary/catalogs');
    expect(finding?.summary).toMatch(/^vacuum held back in 2 databases \(billing, shop\) .*; only system catalogs are held/);
  });

  it('one database: probably a session or prepared transaction there', () => {
    const [finding] = evaluate(heldAt(771, 0, 40));
    expect(finding?.summary).toMatch(/^vacuum held back in database shop for 40 min \(since 00:00:00 UTC\): .* 24,000 dead rows not removable, up from 20,000 \(48% of shop.public.orders's rows\); probably a session or prepared transaction in shop \(only this database reported it\); the holder is not in the log$/);
    expect(finding?.labels).toEqual({ scope: 'database', database: 'shop' });
  });

  it('leaves a hold that began with a sampled REPACK (CONCURRENTLY) run to repack-holds-vacuum', () => {
    const slot = (startMin: number, count: number) => seriesOf(
      'pg_replication_slots_info{slot_name="pg_repack_4243",slot_type="logical",owner="repack",plugin="pgrepack",database="shop",temporary="true",owner_pid="4242"}',
      Array(count).fill('1').join(' '), { startMs: at(startMin), stepMs: MIN },
    );
    const during = heldAt(771, 0, 40, { database: 'other', table: 'hot_counters' });
    expect(evaluate(during, [slot(-1, 47)])).toEqual([]);
    // A hold seen well before the run started is someone else's.
    expect(evaluate(during, [slot(35, 12)])).toHaveLength(1);
    // The run has ended (its slot is stale) but no report shows the hold over yet: still the run's.
    expect(evaluate(during, [slot(-1, 42)])).toEqual([]);
    expect(evaluate(during, [])).toHaveLength(1);
  });

  it('with xmin horizon samples names the holder that fits the scope; basis log+samples', () => {
    const events = heldAt(771, 0, 40, { ageXids: 5000 });
    const sampled = (spec: string, value: string) => seriesOf(spec, `${value} ${value}`, { startMs: at(40) + 5_000 });
    const series = [
      sampled('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4242",datname="other",usename="app",state="idle in transaction"}', '9e6'),
      sampled('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4343",datname="shop",usename="app",state="idle in transaction"}', '9500'),
      sampled('pg_xmin_horizon_holder_age_xids{kind="slot_catalog_xmin",scope="catalog",name="sub1"}', '8e6'),
    ];
    const [finding] = evaluate(events, series);
    expect(finding?.summary).toMatch(/; held by session pid 4343 \(app@shop, idle in transaction\), 9,500 XIDs old$/);
    expect(finding?.evidence.series).toHaveLength(1);
    expect(basisOf(finding!.evidence)).toBe('log+samples');
  });

  describe('names the holder by its sample at the reports, not its latest one', () => {
    const slot = (startMs: number, values: string) =>
      seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_xmin",scope="cluster",owner="physical_standby",name="standby1_slot"}', values, { startMs });
    const session = (startMs: number, values: string) =>
      seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="4242",datname="shop",usename="app",state="idle in transaction"}', values, { startMs });
    // The standby's query holds XID 771 while two databases report it at ages 5000 and 5200.
    const reports = [vacuum(0, 'shop', 'orders', 771, 20_000, { ageXids: 4000 }), vacuum(35, 'shop', 'orders', 771, 20_000, { ageXids: 5000 }),
      vacuum(36, 'billing', 'invoices', 771, 20_000, { ageXids: 5200 })];
    const named = /; held by physical slot standby1_slot \(a standby's hot_standby_feedback, or a slot nobody uses\), 5,\d{3} XIDs old$/;

    it('keeps the holder after it let go, until a report shows the hold over', () => {
      // Sampled at each report; the standby's query ends a minute later: the slot's xmin is new, its age small.
      const series = [slot(at(35) + 5_000, '5000 _ _ _ _ _ _ _ _ _ _ _ 5200 5300 20 20 20')];
      expect(evaluate(reports, series, 38)[0]?.summary).toMatch(named);
      expect(basisOf(evaluate(reports, series, 38)[0]!.evidence)).toBe('log+samples');
      expect(evaluate([...reports, vacuum(39, 'shop', 'orders', 9000, 0, { ageXids: 20 }), vacuum(39, 'billing', 'invoices', 9000, 0, { ageXids: 20 })], series, 40)).toEqual([]);
    });

    it('compares a report with the first poll after it: one before it counts fewer XIDs', () => {
      // Polled just before the newest report, the slot looked younger than the report says; the next poll is the one.
      expect(evaluate(reports, [slot(at(36) - 5_000, '5100 5300')], 37)[0]?.summary).toMatch(/, 5,300 XIDs old$/);
      // The newest report has no poll after it: the one after the report before names the holder.
      expect(evaluate(reports, [slot(at(35) + 5_000, '5100')], 37)[0]?.summary).toMatch(/, 5,100 XIDs old$/);
      // Polled only before the reports: nothing tells it held the cutoff.
      expect(evaluate(reports, [slot(at(35) - 5_000, '4900')], 37)[0]?.summary).toContain('the holder is not in the log');
    });

    it('names no holder younger than the cutoff, nor one of another database, nor one polled long after', () => {
      expect(evaluate(reports, [slot(at(35) + 5_000, '4000 4100')], 37)[0]?.summary).toContain('the holder is not in the log');
      expect(evaluate(reports, [session(at(35) + 5_000, '9e6 9e6')], 37)[0]?.summary).toContain('the holder is not in the log');
      expect(evaluate(reports, [slot(at(36) + 60_000, '9e6')], 37)[0]?.summary).toContain('the holder is not in the log');
    });
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

  it('a cutoff is behind since the first report whose next XID (or, on 13/14, own cutoff) had reached it, across the wrap', () => {
    const point = (tsMs: number, cutoff: number, age: number | null) => ({ tsMs, details: { removable_cutoff_xid: cutoff, removable_cutoff_age_xids: age } });
    const since = cutoffBehindSince([point(3000, 2 ** 32 - 100, 150), point(1000, 2 ** 32 - 500, 100), point(2000, 2 ** 32 - 200, 150)]);
    expect(since(2 ** 32 - 420)).toBe(1000);
    expect(since(2 ** 32 - 399)).toBe(2000);
    expect(since(20)).toBe(3000);
    expect(since(51)).toBeNull();
    const before15 = cutoffBehindSince([point(1000, 771, null), point(2000, 771, null), point(3000, 900, null)]);
    expect(before15(771)).toBe(1000);
    expect(before15(800)).toBe(3000);
  });
});
