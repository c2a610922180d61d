import { describe, expect, it } from 'vitest';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { repackHoldsVacuum, DEFAULTS } from './repack-holds-vacuum.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { autovacuumDetails, ddlDetails, lockWaitDetails } from './test-events.js';
import type { RuleEvent, SeriesData } from './rule-view.js';

const SLOT = 'pg_replication_slots_info{slot_name="pg_repack_4243",slot_type="logical",owner="repack",plugin="pgrepack",database="shop",temporary="true",owner_pid="4242"}';
const PROGRESS = 'pg_stat_progress_repack_info{datname="shop",schemaname="public",relname="orders",pid="4242",command="REPACK",phase="catch-up",index_name=""}';
// The slot lives from step 2 to step 9.
const SLOT_STEPS = '_ _ 1 1 1 1 1 1 1 1';

const at = (step: number) => T0 + step * STEP;

function vacuum(step: number, database: string, table: string, cutoff: number, dead: number) {
  return eventOf('autovacuum', autovacuumDetails({
    database, table, removable_cutoff_xid: cutoff, removable_cutoff_age_xids: 5000, tuples_dead_not_removable: dead,
  }), { tsMs: at(step), database });
}

function view(events: ReturnType<typeof vacuum>[], series: SeriesData[] = [seriesOf(SLOT, SLOT_STEPS), seriesOf(PROGRESS, SLOT_STEPS)]) {
  return new MemoryRuleView({ events, series, staleAfterMs: 2 * STEP });
}

const rule = repackHoldsVacuum(DEFAULTS);

/** A report long before the slot: cutoff + age is the next XID then, which REPACK's hold cannot precede. */
function reportBefore(cutoff: number, age: number) {
  return eventOf('autovacuum', autovacuumDetails({
    database: 'other', table: 'hot_counters', removable_cutoff_xid: cutoff, removable_cutoff_age_xids: age, tuples_dead_not_removable: 0,
  }), { tsMs: at(-10), database: 'other' });
}
const NEXT_XID_771 = reportBefore(700, 71);

describe('repack-holds-vacuum', () => {
  const cases: Array<{ name: string; events: ReturnType<typeof vacuum>[]; series?: SeriesData[]; fires: boolean }> = [
    {
      name: 'fires: two databases report dead rows at one cutoff while the slot exists',
      events: [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)],
      fires: true,
    },
    {
      name: 'quiet: the cutoff advances between reports (vacuum is not held)',
      events: [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'other', 'hot_counters', 902, 10)],
      fires: false,
    },
    {
      name: 'quiet: a single report at the cutoff',
      events: [vacuum(4, 'other', 'hot_counters', 771, 1000)],
      fires: false,
    },
    {
      name: 'quiet: the reports have no dead rows held back',
      events: [vacuum(4, 'other', 'hot_counters', 771, 0), vacuum(6, 'billing', 'invoices', 771, 0)],
      fires: false,
    },
    {
      name: 'quiet: the cutoff was already stuck a minute before REPACK started (something else holds it)',
      events: [vacuum(-10, 'other', 'hot_counters', 771, 300), vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)],
      fires: false,
    },
    {
      name: 'fires: a report at the cutoff just before the slot\'s first sample (the slot is sampled late, not held by another)',
      events: [vacuum(1, 'other', 'hot_counters', 771, 300), vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)],
      fires: true,
    },
    {
      name: 'quiet: only the table being repacked is reported',
      events: [vacuum(4, 'shop', 'orders', 771, 1000), vacuum(6, 'shop', 'orders', 771, 20)],
      fires: false,
    },
    {
      name: 'quiet: no REPACK slot (a pg_squeeze slot is someone else\'s)',
      events: [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)],
      series: [seriesOf('pg_replication_slots_info{slot_name="pg_squeeze_slot_16384_1",owner="pg_squeeze",database="shop",owner_pid="77"}', SLOT_STEPS)],
      fires: false,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const findings = rule.evaluate(view(c.events, c.series).at(at(7)), at(7));
      expect(findings.length).toBe(c.fires ? 1 : 0);
    });
  }

  it('names the table, the databases, the stuck cutoff and cites the reports', () => {
    const events = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    const [finding] = rule.evaluate(view([NEXT_XID_771, ...events]).at(at(7)), at(7));
    expect(finding?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.public.orders has held vacuum back in 2 databases (2 tables) for 25 s: ' +
      'removable cutoff stuck at XID 771, 1,020 dead rows not removable',
    );
    expect(finding?.evidence.eventIds).toEqual(events.map((e) => e.id));
    expect(finding?.evidence.facts).toMatchObject({ slot: 'pg_repack_4243', repack_pid: 4242, removable_cutoff_xid: 771, held_databases: 'billing, other', certain: true });
  });

  describe('an older holder (a pg_dump that took its snapshot first) is not blamed on REPACK', () => {
    const held = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    const summaries = (events: ReturnType<typeof vacuum>[]) => rule.evaluate(view(events).at(at(7)), at(7)).map((f) => f.summary);

    it('quiet: the stuck cutoff is older than the next XID a report gave before REPACK started', () => {
      expect(summaries([reportBefore(850, 50), ...held])).toEqual([]);
    });

    it('says "probably" when no report from before the run bounds the cutoff', () => {
      expect(summaries(held)).toEqual([expect.stringMatching(
        /has probably held vacuum back .* \(no autovacuum report from before it started shows whether an older snapshot held the horizon first\)$/)]);
    });

    it('compares XIDs modulo 2^32: a cutoff past the wrap is newer than a next XID just before it', () => {
      const wrapped = [vacuum(4, 'other', 'hot_counters', 5, 1000), vacuum(6, 'billing', 'invoices', 5, 20)];
      expect(summaries([reportBefore(4_294_967_200, 90), ...wrapped])).toEqual([expect.stringMatching(/ has held vacuum back .*stuck at XID 5, /)]);
    });
  });

  it('without the progress series names the slot and database, or the table from the logged statement', () => {
    const events = [NEXT_XID_771, vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    const bare = rule.evaluate(view(events, [seriesOf(SLOT, SLOT_STEPS)]).at(at(7)), at(7));
    expect(bare[0]?.summary).toMatch(/^REPACK \(CONCURRENTLY\) in database shop \(slot pg_repack_4243\) has held vacuum back/);
    const statement = eventOf('ddl', { command: 'REPACK', relation: 'orders', relations: ['orders'], concurrently: true }, { tsMs: at(2), pid: 4242 });
    const named = rule.evaluate(new MemoryRuleView({ events: [...events, statement], series: [seriesOf(SLOT, SLOT_STEPS)] }).at(at(7)), at(7));
    expect(named[0]?.summary).toMatch(/^REPACK \(CONCURRENTLY\) of shop\.orders has held/);
    expect(named[0]?.evidence.eventIds).toContain(statement.id);
  });

  it('fires once with a stable key, and resolves when the slot is gone', () => {
    const events = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    const steps = transitionSteps(timeline([rule], view(events), instants(0, 14)));
    // Fires at the second report (step 6); the slot's last sample is step 9, stale after step 11.
    expect(steps).toEqual([
      ['fire', 'repack-holds-vacuum/primary/pg_repack_4243', 6],
      ['resolve', 'repack-holds-vacuum/primary/pg_repack_4243', 12],
    ]);
  });
});

describe('repack-holds-vacuum: a retried REPACK', () => {
  it('has held vacuum since its own start, not since the first attempt\'s', () => {
    // The first attempt (slot pg_repack_4100) ran from step -20 to -12; the retry's slot lives from step 2.
    const firstStart = at(-20) / 1000;
    const retryStart = at(2) / 1000;
    const xact = 'pg_stat_progress_repack_xact_start_timestamp_seconds{datname="shop",schemaname="public",relname="orders"}';
    // One progress series and one xact_start series per table, as stored: steps -20..-12, then 2..9.
    const steps = (first: string, retry: string) => [...Array(9).fill(first), ...Array(13).fill('_'), ...Array(8).fill(retry)].join(' ');
    const fromFirst = { startMs: at(-20) };
    const series = [
      seriesOf(SLOT, SLOT_STEPS),
      seriesOf(PROGRESS, steps('1', '1'), fromFirst),
      seriesOf(xact, steps(String(firstStart), String(retryStart)), fromFirst),
    ];
    const events = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
    const [finding] = rule.evaluate(view(events, series).at(at(7)), at(7));
    expect(finding?.evidence.facts.held_seconds).toBe(25);
  });
});

describe('repack-holds-vacuum from the log alone (no samples)', () => {
  // Session 4242 logs `REPACK (CONCURRENTLY) orders` at step 2; nothing samples the server.
  const start = eventOf('ddl', ddlDetails('REPACK', 'orders', true), { tsMs: at(2), pid: 4242, database: 'shop' });
  /** A report before the start: cutoff 700, 71 XIDs old, so the next XID then was 771. */
  const before = (cutoff = 700, age = 71) => eventOf('autovacuum', autovacuumDetails({
    database: 'other', table: 'hot_counters', removable_cutoff_xid: cutoff, removable_cutoff_age_xids: age, tuples_dead_not_removable: 0,
  }), { tsMs: at(0), database: 'other' });
  const held = [vacuum(4, 'other', 'hot_counters', 771, 1000), vacuum(6, 'billing', 'invoices', 771, 20)];
  const logOnly = (events: RuleEvent[], series: SeriesData[] = []) => rule.evaluate(new MemoryRuleView({ events, series }).at(at(7)), at(7));

  const cases: Array<[string, RuleEvent[], SeriesData[], RegExp | null]> = [
    ['fires, certain: the stuck cutoff is the next XID a report showed just before the logged start', [before(), start, ...held], [],
      /^REPACK \(CONCURRENTLY\) of shop\.orders has held vacuum back in 2 databases \(2 tables\) for 25 s: removable cutoff stuck at XID 771, the next XID when it started, 1,020 dead rows not removable; REPACK still running at the end of the log$/],
    ['fires, probably: no report before the start to check the cutoff against', [start, ...held], [],
      /has probably held vacuum back .*; REPACK still running at the end of the log \(no autovacuum report before it started gives the next XID then; `pgvigil run` beside the server sees its slot\)$/],
    ['fires, probably: the start is known only from a lock wait (no log_statement)', [before(), eventOf('lock_wait', lockWaitDetails({ waiting_pid: 4242, lock_mode: 'AccessExclusiveLock', wait_ms: 1000, statement: 'REPACK (CONCURRENTLY) orders;' }), { tsMs: at(3), pid: 4242, database: 'shop' }), ...held], [],
      /has probably held vacuum back .*\(set log_statement = ddl to log when REPACK starts, or run `pgvigil run` beside the server to see its slot\)$/],
    ['quiet: the cutoff is older than the next XID before the start (something older holds it)', [before(700, 200), start, ...held], [], null],
    ['quiet: a later report moved past the cutoff (the run ended without a line)', [start, ...held, vacuum(7, 'other', 'hot_counters', 900, 0)], [], null],
    ['quiet: the REPACK\'s duration line says it ended', [start, ...held, eventOf('generic', { classified: false }, { tsMs: at(5), pid: 4242, message: 'duration: 15000.0 ms' })], [], null],
    ['quiet: a plain REPACK uses no slot', [eventOf('ddl', ddlDetails('REPACK', 'orders', false), { tsMs: at(2), pid: 4242, database: 'shop' }), ...held], [], null],
    ['quiet: samples watch the server and show no REPACK slot', [start, ...held], [seriesOf('pg_up', '1 1 1 1 1 1 1 1')], null],
  ];
  for (const [name, events, series, summary] of cases) {
    it(name, () => {
      const findings = logOnly(events, series);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    });
  }

  it('keys the finding by the session and the run\'s start, and cites the statement', () => {
    const [finding] = logOnly([before(), start, ...held]);
    expect(finding?.dedupKey).toBe(`repack-holds-vacuum/primary/pid_4242_${at(2)}`);
    expect(finding?.evidence.eventIds).toEqual([start.id, ...held.map((e) => e.id)]);
    expect(finding?.evidence.facts).toMatchObject({ seen_in: 'log', certain: true, next_xid_before_start: 771 });
  });
});
