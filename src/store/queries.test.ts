import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { WebhookNotifier } from '../notify/webhook.js';
import { AlertStore } from './alert-store.js';
import { openStore } from './open-store.js';
import { StoreQueries } from './queries.js';
import { StoreWriter } from './store-writer.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);

function event(tsMs: number, kind: 'deadlock' | 'generic', database: string | null, target = 'db1'): AnyLogEvent {
  return {
    kind: 'generic', target, tsMs, pid: 1, database, user: 'app', level: kind === 'deadlock' ? 'ERROR' : 'LOG', sqlstate: null,
    message: kind === 'deadlock' ? 'deadlock detected' : 'hello', details: { classified: false }, source: { file: '/log', offset: tsMs, line: null },
    ...(kind === 'deadlock' ? { kind: 'deadlock' as const, details: { processes: [], context: null, pid: 1, database, user: 'app', statement: null } } : {}),
  } as AnyLogEvent;
}

function setup() {
  const db = openStore(':memory:');
  const clock = new ManualClock(T0);
  const writer = new StoreWriter(db, clock, silentLogger());
  return { db, writer, queries: new StoreQueries(db, 3) };
}

describe('StoreQueries.events', () => {
  it('filters by time, kind, database and target, newest first, up to the limit', () => {
    const { writer, queries } = setup();
    writer.enqueue({ events: [event(T0, 'generic', 'shop'), event(T0 + 1, 'deadlock', 'shop'), event(T0 + 2, 'deadlock', 'crm'), event(T0 + 3, 'deadlock', 'shop', 'db2'), event(T0 + 10, 'deadlock', 'shop')] });
    writer.flush();
    const ts = (q: Parameters<StoreQueries['events']>[0]) => queries.events(q).map((e) => e.tsMs - T0);
    expect(ts({ fromMs: T0, toMs: T0 + 5, limit: 10 })).toEqual([3, 2, 1, 0]);
    expect(ts({ fromMs: T0, toMs: T0 + 5, kind: 'deadlock', limit: 10 })).toEqual([3, 2, 1]);
    expect(ts({ fromMs: T0, toMs: T0 + 5, kind: 'deadlock', database: 'shop', target: 'db1', limit: 10 })).toEqual([1]);
    expect(ts({ fromMs: T0, toMs: T0 + 20, limit: 2 })).toEqual([10, 3]);
    const [first] = queries.events({ fromMs: T0 + 1, toMs: T0 + 1, limit: 1 });
    expect(first).toMatchObject({ kind: 'deadlock', database: 'shop', user: 'app', details: { processes: [] }, sourceOffset: T0 + 1 });
  });

  it('reads each filter the API offers through an index on it and the time', () => {
    const { db, queries } = setup();
    /** The plan of the statement queries.events prepares for `filter`. */
    const planOf = (filter: Partial<Parameters<StoreQueries['events']>[0]>): string => {
      const prepare = db.prepare.bind(db);
      let sql = '';
      const spy = (text: string) => {
        sql = text;
        return prepare(text);
      };
      Object.assign(db, { prepare: spy });
      try {
        queries.events({ fromMs: T0, toMs: T0 + 1, limit: 10, ...filter });
      } finally {
        Object.assign(db, { prepare });
      }
      const params = [T0, T0 + 1, ...Object.values(filter), 10];
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    };
    expect(planOf({})).toMatch(/USING INDEX events_by_time \(ts_ms>\? AND ts_ms<\?\)/);
    expect(planOf({ kind: 'deadlock' })).toMatch(/USING INDEX events_by_kind_time \(kind=\? AND ts_ms>\? AND ts_ms<\?\)/);
    expect(planOf({ database: 'shop' })).toMatch(/USING INDEX events_by_database_time \(database=\? AND ts_ms>\? AND ts_ms<\?\)/);
    expect(planOf({ target: 'db1' })).toMatch(/USING INDEX events_by_target_time \(target=\? AND ts_ms>\? AND ts_ms<\?\)/);
    expect(planOf({ database: 'shop', target: 'db1' })).toMatch(/USING INDEX events_by_(database|target)_time \(\w+=\? AND ts_ms>\? AND ts_ms<\?\)/);
  });

  it('shows the raw text of details that are not JSON instead of failing', () => {
    const { db, writer, queries } = setup();
    writer.enqueue({ events: [event(T0, 'generic', 'shop')] });
    writer.flush();
    db.prepare(`UPDATE events SET details = '{broken'`).run();
    expect(queries.events({ fromMs: T0, toMs: T0, limit: 1 })[0]!.details).toEqual({ unreadable_details: '{broken' });
  });
});

describe('StoreQueries.series', () => {
  const s = (relname: string, tsMs: number, value: number | null): Sample => ({ target: 'db1', name: 'pg_stat_user_tables_n_dead_tup', labels: { datname: 'shop', relname }, tsMs, value });

  it('keeps the last sample of each step window and matches labels as a subset', () => {
    const { writer, queries } = setup();
    writer.enqueue({ samples: [s('orders', T0, 1), s('orders', T0 + 10_000, 2), s('orders', T0 + 59_999, 3), s('orders', T0 + 60_000, null), s('lines', T0, 9)] });
    writer.flush();
    const series = queries.series({ name: 'pg_stat_user_tables_n_dead_tup', labels: { relname: 'orders' }, fromMs: T0, toMs: T0 + 120_000, stepMs: 60_000 });
    expect(series).toEqual([{ target: 'db1', labels: { datname: 'shop', relname: 'orders' }, points: [[T0 + 59_999, 3], [T0 + 60_000, null]] }]);
    expect(queries.series({ name: 'pg_stat_user_tables_n_dead_tup', labels: {}, fromMs: T0, toMs: T0, stepMs: 1 })).toHaveLength(2);
    expect(queries.series({ name: 'pg_stat_user_tables_n_dead_tup', labels: {}, target: 'db2', fromMs: T0, toMs: T0, stepMs: 1 })).toEqual([]);
  });

  it('shows a session series with its descriptive labels as last sampled, and leaves out series quiet before the window', () => {
    const { writer, queries } = setup();
    const name = 'pg_lock_waits_session_wait_seconds';
    const waiter = (tsMs: number, blocking: string): Sample => ({ target: 'db1', name, labels: { datname: 'shop', pid: '7', blocking_pids: blocking, query: 'LOCK t' }, tsMs, value: 1 });
    writer.enqueue({ samples: [waiter(T0, '3'), waiter(T0 + 5_000, '3,4'), { ...waiter(T0 - 3_600_000, ''), labels: { datname: 'shop', pid: '6' } }] });
    writer.flush();
    expect(queries.series({ name, labels: {}, fromMs: T0, toMs: T0 + 10_000, stepMs: 1_000 })).toEqual([{
      target: 'db1', labels: { datname: 'shop', pid: '7', blocking_pids: '3,4', query: 'LOCK t' }, points: [[T0, 1], [T0 + 5_000, 1]],
    }]);
  });

  it('refuses a request matching more series than allowed', () => {
    const { writer, queries } = setup();
    writer.enqueue({ samples: ['a', 'b', 'c', 'd'].map((t) => s(t, T0, 1)) });
    writer.flush();
    expect(() => queries.series({ name: 'pg_stat_user_tables_n_dead_tup', labels: {}, fromMs: T0, toMs: T0, stepMs: 1 })).toThrow(/4 series match/);
  });
});

describe('StoreQueries.alerts', () => {
  it('lists alerts that fired within the window and details one with its evidence', () => {
    const { db, writer, queries } = setup();
    writer.enqueue({ events: [event(T0, 'deadlock', 'shop')] });
    writer.flush();
    const store = new AlertStore(db, [new WebhookNotifier({ url: 'http://127.0.0.1:1/' })]);
    const evidence = { eventIds: [1], series: [{ name: 'pg_x', labels: { a: 'b' }, value: 3, tsMs: T0 }], facts: { deadlocks: 1 } };
    const base = { ruleId: 'deadlocks', severity: 'warning' as const, target: 'db1', labels: {}, summary: 'deadlocks on shop', evidence };
    store.fire({ ...base, dedupKey: 'old' }, T0);
    store.resolve('old', T0 + 1_000);
    store.fire({ ...base, dedupKey: 'new' }, T0 + 5_000);
    const keys = (q: Parameters<StoreQueries['alerts']>[0]) => queries.alerts(q).map((a) => a.dedupKey);
    expect(keys({ limit: 10 })).toEqual(['new', 'old']);
    expect(keys({ state: 'firing', limit: 10 })).toEqual(['new']);
    expect(keys({ fromMs: T0 + 2_000, limit: 10 })).toEqual(['new']);
    expect(keys({ toMs: T0 + 2_000, limit: 10 })).toEqual(['old']);
    expect(keys({ limit: 1 })).toEqual(['new']);

    const detail = queries.alert(queries.alerts({ state: 'resolved', limit: 1 })[0]!.id)!;
    expect(detail.transitions).toEqual([{ tsMs: T0, to: 'firing' }, { tsMs: T0 + 1_000, to: 'resolved' }]);
    expect(detail.events.map((e) => e.message)).toEqual(['deadlock detected']);
    expect(detail.incident).toMatchObject({ state: 'resolved', members: 1 });
    expect(detail.notifications.map((n) => [n.channel, n.action, n.state])).toEqual([['webhook', 'trigger', 'pending'], ['webhook', 'resolve', 'pending']]);
    expect(queries.alert(999)).toBeNull();
  });
});
