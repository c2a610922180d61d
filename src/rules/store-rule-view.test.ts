import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { openStore } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import type { RuleEvent, RuleView, SeriesData } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { RULE_VIEW_SQL, StoreRuleViewSource } from './store-rule-view.js';
import { SEEN_STEP_MS } from '../store/series-identity.js';
import { ddlDetails, lockWaitDetails } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const TARGETS = [{ name: 'primary', cluster: 'c' }, { name: 'standby1', cluster: 'c' }];

const series: SeriesData[] = [
  seriesOf('pg_replication_slots_info{slot_name="pg_repack_1",owner="repack",database="shop"}', '1 1 1 _ _ _', { target: 'primary' }),
  seriesOf('pg_replication_slots_info{slot_name="s1",owner="physical_standby",database=""}', '1 1 1 1 1 1', { target: 'primary' }),
  seriesOf('pg_standby_replay_pending_bytes', '0 null 5e6 9e6 9e6 0', { target: 'standby1' }),
];
const events: RuleEvent[] = [
  eventOf('ddl', ddlDetails('DROP TABLE', 'build_logs'), { tsMs: at(1), target: 'primary', pid: 10, id: 1 }),
  eventOf('lock_wait', lockWaitDetails({ waiting_pid: 11, lock_mode: 'AccessExclusiveLock', queue_pids: [11, 12] }), { tsMs: at(2), target: 'primary', pid: 11, id: 2 }),
  eventOf('ddl', ddlDetails('TRUNCATE', 'logs'), { tsMs: at(3), target: 'primary', pid: 13, id: 3 }),
  eventOf('ddl', ddlDetails('TRUNCATE', 'later'), { tsMs: at(5), target: 'primary', pid: 13, id: 4 }),
];

/** The same data written through the real StoreWriter. */
function storeWith(): { source: StoreRuleViewSource; db: ReturnType<typeof openStore> } {
  const db = openStore(':memory:');
  const writer = new StoreWriter(db, new ManualClock(), silentLogger());
  const samples: Sample[] = series.flatMap((s) => s.points.map((p) => ({ target: s.target, name: s.name, labels: s.labels, tsMs: p.tsMs, value: p.value })));
  writer.enqueue({ events: events.map(({ id: _id, ...e }) => e as AnyLogEvent), samples });
  expect(writer.flush()).toBe(true);
  return { source: new StoreRuleViewSource(db, { targets: TARGETS, staleAfterMs: STEP }), db };
}

/** What a rule sees, as plain data: both views must agree on it. */
function observe(view: RuleView) {
  const strip = (e: RuleEvent) => ({ id: e.id, kind: e.kind, target: e.target, tsMs: e.tsMs, pid: e.pid, details: e.details });
  return {
    targets: view.targets(),
    ddl: view.events('ddl', { sinceMs: at(1) }).map(strip),
    ddlOfPid: view.events('ddl', { sinceMs: 0, pid: 13 }).map(strip),
    ddlOnStandby: view.events('ddl', { sinceMs: 0, target: ['standby1'] }).map(strip),
    waits: view.events('lock_wait', { sinceMs: 0, target: 'primary' }).map(strip),
    counts: view.eventCounts(['ddl', 'lock_wait'], { target: 'primary', untilMs: at(5), bucketMs: 2 * STEP, buckets: 3 }),
    countsToNow: view.eventCounts(['ddl'], { target: 'primary', untilMs: at(99), bucketMs: 200 * STEP, buckets: 1 }),
    countsOnStandby: view.eventCounts(['ddl'], { target: 'standby1', untilMs: at(5), bucketMs: STEP, buckets: 2 }),
    repackSlots: view.series('pg_replication_slots_info', { sinceMs: at(1), labels: { owner: 'repack' } }),
    pending: view.series('pg_standby_replay_pending_bytes', { sinceMs: 0, target: 'standby1' }),
    latestSlots: view.latest('pg_replication_slots_info'),
    latestPending: view.latest('pg_standby_replay_pending_bytes', { maxAgeMs: 0 }),
    pendingUnlessBelow: view.latest('pg_standby_replay_pending_bytes', { unlessValue: { below: 6e6 } }).map((s) => s.value),
    pendingUnlessAtLeast: view.latest('pg_standby_replay_pending_bytes', { target: 'standby1', unlessValue: { atLeast: 6e6 } }).map((s) => s.value),
    slotsUnlessAtLeast: view.latest('pg_replication_slots_info', { labels: { owner: 'physical_standby' }, unlessValue: { atLeast: 1 } }),
  };
}

describe('StoreRuleViewSource', () => {
  it('shows rules exactly what the in-memory view shows for the same data', () => {
    const { source, db } = storeWith();
    const memory = new MemoryRuleView({ events, series, targets: TARGETS, staleAfterMs: STEP });
    for (const step of [1, 2, 4]) expect(observe(source.at(at(step)))).toEqual(observe(memory.at(at(step))));
    const seen = observe(source.at(at(4)));
    expect(seen.ddl.map((e) => e.id)).toEqual([1, 3]);
    expect(seen.latestSlots.map((s) => s.labels.slot_name)).toEqual(['s1']);
    expect(seen.pending[0]?.points.map((p) => p.value)).toEqual([0, null, 5e6, 9e6, 9e6]);
    // Buckets back from step 5 (exclusive) of 2 steps: [3, 5) holds one DDL, [1, 3) a DDL and a wait.
    expect(seen.counts).toEqual([1, 2, 0]);
    // Nothing after "now" is counted, however far the buckets reach: the DDL of step 5 only from step 5.
    expect(seen.countsToNow).toEqual([2]);
    expect(observe(source.at(at(5))).countsToNow).toEqual([3]);
    expect(observe(source.at(at(6))).counts).toEqual([1, 2, 0]);
    db.close();
  });

  it('leaves out series whose latest value is out of bounds, as the in-memory view does; a null value is kept', () => {
    const { source, db } = storeWith();
    const memory = new MemoryRuleView({ events, series, targets: TARGETS, staleAfterMs: STEP });
    // pending bytes, last sampled: step 1 null, step 2 5e6, step 4 9e6.
    const bounded = (view: RuleView) => ({ unlessBelow: observe(view).pendingUnlessBelow, unlessAtLeast: observe(view).pendingUnlessAtLeast });
    const expected = { 1: { unlessBelow: [null], unlessAtLeast: [null] }, 2: { unlessBelow: [], unlessAtLeast: [5e6] }, 4: { unlessBelow: [9e6], unlessAtLeast: [] } };
    for (const [step, seen] of Object.entries(expected)) {
      expect(bounded(source.at(at(Number(step)))), `step ${step}`).toEqual(seen);
      expect(bounded(memory.at(at(Number(step)))), `step ${step}`).toEqual(seen);
    }
    expect(observe(source.at(at(4))).slotsUnlessAtLeast).toEqual([]);
    db.close();
  });

  it('skips and counts rows it cannot decode, and goes on', () => {
    const { source, db } = storeWith();
    db.prepare("UPDATE events SET details = '{not json' WHERE id = 1").run();
    db.prepare(`UPDATE series SET labels = '{"a":1}' WHERE name = 'pg_standby_replay_pending_bytes'`).run();
    const view = source.at(at(4));
    expect(view.events('ddl', { sinceMs: 0 }).map((e) => e.id)).toEqual([3]);
    expect(view.series('pg_standby_replay_pending_bytes', { sinceMs: 0 })).toEqual([]);
    expect(source.stats.badRows).toBe(2);
    expect(source.stats.examples[0]).toMatch(/^events.id 1: details/);
    db.close();
  });

  it('answers the same from its cache of decoded events, however small, as the window slides', () => {
    const { db } = storeWith();
    const fresh = () => new StoreRuleViewSource(db, { targets: TARGETS });
    const tiny = new StoreRuleViewSource(db, { targets: TARGETS, maxCachedEvents: 1 });
    for (const step of [1, 3, 5, 5, 9]) {
      const query = { sinceMs: at(step - 2) };
      expect(tiny.at(at(step)).events('ddl', query)).toEqual(fresh().at(at(step)).events('ddl', query));
    }
    expect(tiny.at(at(9)).events('ddl', { sinceMs: 0 }).map((e) => e.id)).toEqual([1, 3, 4]);
    db.close();
  });

  it('with a data version, answers from the previous windows exactly as the statements would, until the store changes', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    let version = 0;
    writer.onFlush(() => version++);
    const write = (list: RuleEvent[]) => {
      writer.enqueue({ events: list.map(({ id: _id, ...e }) => e as AnyLogEvent) });
      expect(writer.flush()).toBe(true);
    };
    write(events.slice(0, 3));
    const plain = new StoreRuleViewSource(db, { targets: TARGETS, staleAfterMs: STEP });
    const versioned = new StoreRuleViewSource(db, { targets: TARGETS, staleAfterMs: STEP, dataVersion: () => version });
    const agree = (step: number) => expect(observe(versioned.at(at(step)))).toEqual(observe(plain.at(at(step))));
    for (const step of [3, 4, 5, 6]) agree(step);
    // A write (an event later than the windows' instant) and a step back in time: asked again.
    write(events.slice(3));
    for (const step of [6, 7, 2, 8]) agree(step);
    expect(observe(versioned.at(at(8))).ddl.map((e) => e.id)).toHaveLength(3);
    // No series stored: none, without a statement; once samples are written, read as usual.
    expect(versioned.at(at(8)).latest('pg_standby_replay_pending_bytes')).toEqual([]);
    writer.enqueue({ samples: [{ target: 'standby1', name: 'pg_standby_replay_pending_bytes', labels: {}, tsMs: at(8), value: 5 }] });
    expect(writer.flush()).toBe(true);
    expect(versioned.at(at(8)).latest('pg_standby_replay_pending_bytes').map((s) => s.value)).toEqual([5]);
    db.close();
  });

  it('keeps the newest events when a query returns more than its cap', () => {
    const { db } = storeWith();
    const capped = new StoreRuleViewSource(db, { targets: TARGETS, maxEventsPerQuery: 2 });
    expect(capped.at(at(9)).events('ddl', { sinceMs: 0 }).map((e) => e.id)).toEqual([3, 4]);
    expect(capped.stats.truncatedQueries).toBe(1);
    db.close();
  });

  it('hands descriptive labels back merged into the labels, one series per holder, as last sampled', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    const name = 'pg_xmin_horizon_holder_age_xids';
    const holder = (step: number, state: string, query: string): Sample =>
      ({ target: 'primary', name, labels: { kind: 'backend', scope: 'database', pid: '42', state, query }, tsMs: at(step), value: 1000 + step });
    writer.enqueue({ samples: [holder(0, 'active', 'SELECT 1'), holder(1, 'idle in transaction', 'SELECT 1'), holder(2, 'active', 'UPDATE t SET v = 2')] });
    expect(writer.flush()).toBe(true);
    const view = new StoreRuleViewSource(db, { targets: TARGETS, staleAfterMs: STEP }).at(at(2));
    expect(view.latest(name)).toEqual([{
      name, target: 'primary', tsMs: at(2), value: 1002,
      labels: { kind: 'backend', scope: 'database', pid: '42', state: 'active', query: 'UPDATE t SET v = 2' },
    }]);
    expect(view.series(name, { sinceMs: 0, labels: { pid: '42', state: 'active' } })[0]?.points.map((p) => p.value)).toEqual([1000, 1001, 1002]);
    db.close();
  });

  it('finds a series whose seen_ms lags its newest sample by up to SEEN_STEP_MS, and none that went quiet before the window', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    const sample = (name: string, tsMs: number): Sample => ({ target: 'primary', name, labels: {}, tsMs, value: tsMs - T0 });
    const endMs = T0 + SEEN_STEP_MS - STEP;
    const steady = Array.from({ length: SEEN_STEP_MS / STEP }, (_, i) => sample('steady', T0 + i * STEP));
    writer.enqueue({ samples: [...steady, sample('quiet', T0)] });
    expect(writer.flush()).toBe(true);
    expect(db.prepare(`SELECT seen_ms FROM series WHERE name = 'steady'`).pluck().get()).toBe(T0);
    const view = new StoreRuleViewSource(db, { targets: TARGETS, staleAfterMs: STEP }).at(endMs);
    expect(view.latest('steady').map((s) => s.tsMs)).toEqual([endMs]);
    expect(view.series('steady', { sinceMs: endMs - STEP })[0]?.points.map((p) => p.tsMs)).toEqual([endMs - STEP, endMs]);
    expect(view.latest('quiet')).toEqual([]);
    expect(view.series('quiet', { sinceMs: T0 + 1 })).toEqual([]);
    db.close();
  });

  it('reads every table through an index: no full scan, no sort (EXPLAIN QUERY PLAN of each statement)', () => {
    const db = openStore(':memory:');
    const plans: Record<string, [sql: string, params: number]> = {
      seriesOfName: [RULE_VIEW_SQL.seriesOfName, 2],
      seriesOfNameOnTarget: [RULE_VIEW_SQL.seriesOfNameOnTarget, 3],
      points: [RULE_VIEW_SQL.points, 3],
      lastPoint: [RULE_VIEW_SQL.lastPoint, 3],
      lastPointOfName: [RULE_VIEW_SQL.lastPointOfName(false), 4],
      lastPointOfNameOnTarget: [RULE_VIEW_SQL.lastPointOfName(true), 5],
      lastPointOfNameInBounds: [RULE_VIEW_SQL.lastPointOfName(true, { below: true, atLeast: true }), 7],
      events: [RULE_VIEW_SQL.events(null, false), 4],
      eventsOfTargetsAndPid: [RULE_VIEW_SQL.events(2, true), 7],
      eventsById: [RULE_VIEW_SQL.eventsById(3), 3],
      latestOfKind: [RULE_VIEW_SQL.latestOfKind, 1],
      anySeries: [RULE_VIEW_SQL.anySeries, 0],
    };
    const seriesByName = /^SEARCH (series|s) USING (COVERING )?INDEX series_by_name_seen \(name=\? AND seen_ms>\?\)$/;
    const samplesRange = /^SEARCH samples USING PRIMARY KEY \(series_id=\? AND ts_ms>\? AND ts_ms<\?\)$/;
    const lastOfEach = [seriesByName, /^SEARCH p USING PRIMARY KEY \(series_id=\? AND ts_ms=\?\)$/, /^CORRELATED SCALAR SUBQUERY \d+$/, samplesRange];
    const eventsRange = /^SEARCH events USING (COVERING )?INDEX events_by_kind_time \(kind=\? AND ts_ms>\? AND ts_ms<\?\)$/;
    const expected: Record<string, RegExp[]> = {
      seriesOfName: [seriesByName],
      seriesOfNameOnTarget: [seriesByName],
      points: [samplesRange],
      lastPoint: [samplesRange],
      lastPointOfName: lastOfEach,
      lastPointOfNameOnTarget: lastOfEach,
      lastPointOfNameInBounds: lastOfEach,
      events: [eventsRange],
      eventsOfTargetsAndPid: [eventsRange],
      eventsById: [/^SEARCH events USING INTEGER PRIMARY KEY \(rowid=\?\)$/],
      latestOfKind: [/^SEARCH events USING COVERING INDEX events_by_kind_time \(kind=\?\)$/],
      // LIMIT 1: the scan stops at the first entry.
      anySeries: [/^SCAN series( USING COVERING INDEX \w+)?$/],
    };
    for (const [query, [sql, params]] of Object.entries(plans)) {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...Array<number>(params).fill(1)) as Array<{ detail: string }>).map((r) => r.detail);
      // Printed so a failing run shows what SQLite chose instead.
      console.log(`${query}: ${plan.join(' | ')}`);
      expect({ query, plan }).toEqual({ query, plan: expected[query]!.map((line) => expect.stringMatching(line)) });
    }
    db.close();
  });
});
