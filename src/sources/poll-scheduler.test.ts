/**
 * The poll scheduler against a real PostgreSQL 18 (one primary and one standby for the file):
 * error isolation and counting, statement_timeout, overlapping runs, the latest map, connections
 * kept between visits yet let go for DROP / RENAME / CREATE ... TEMPLATE, databases skipped when
 * a cluster-wide check names others, reconnect with backoff on the ManualClock, promotion of a
 * standby recognised with its new role, runs sent as snapshots that /metrics follows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { pino } from 'pino';
import type { Sample } from '../domain/index.js';
import { systemClock } from '../domain/index.js';
import type { Collector, MapContext, Row } from '../collectors/collector.js';
import { queryCollector } from '../collectors/query-collector.js';
import { createCollectors } from '../collectors/index.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../../test/helpers/pg-harness.js';
import { waitUntil } from '../../test/helpers/pg-server.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { createMonitorRole, monitorDsn } from '../../test/integration/collectors-rig.js';
import { Metrics } from '../http/metrics.js';
import { silentLogger } from '../lib/logger.js';
import { openStore } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { PollScheduler, type PollSchedulerOptions, type SampleSink } from './poll-scheduler.js';

const WAIT_MS = 15_000;

function testCollector(name: string, sql: string, options: { timeoutMs?: number; intervalMs?: number; scope?: Collector['scope'] } = {}): Collector {
  return queryCollector({
    name,
    scope: options.scope ?? 'server',
    intervalMs: options.intervalMs ?? 100,
    timeoutMs: options.timeoutMs ?? 2_000,
    metrics: [{ name: `test_${name}`, type: 'gauge', help: 'test' }],
    sql: () => sql,
    map: (rows: readonly Row[], ctx: MapContext): Sample[] =>
      rows.map((r) => ({ target: ctx.target, name: `test_${name}`, labels: { k: String(r.k) }, tsMs: ctx.nowMs, value: 1 })),
  });
}

/** A session in db that the activity check of the test below looks for. */
async function openMarkedSession(server: PgServer, db: string): Promise<{ client: pg.Client }> {
  const client = new pg.Client({ connectionString: server.dsn(db), application_name: 'busy_marker' });
  await client.connect();
  return { client };
}

type Batch = Parameters<SampleSink['enqueue']>[0];

function scheduler(server: PgServer | string, collectors: Collector[], extra: Partial<PollSchedulerOptions> = {}): {
  poller: PollScheduler; enqueued: Sample[]; batches: Batch[]; messages: string[];
} {
  const enqueued: Sample[] = [];
  const batches: Batch[] = [];
  const messages: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void messages.push(String(JSON.parse(line).msg)) });
  const poller = new PollScheduler({
    target: 't',
    connection: typeof server === 'string' ? server : server.dsn(),
    collectors,
    writer: { enqueue: (batch) => { batches.push(batch); enqueued.push(...batch.samples); } },
    clock: systemClock,
    logger,
    probeIntervalMs: 200,
    reconnectInitialMs: 100,
    reconnectMaxMs: 400,
    ...extra,
  });
  return { poller, enqueued, batches, messages };
}

/** The samples of the latest run the sink was sent for a run key (collector, database) of target t. */
const lastRun = (batches: readonly Batch[], collector: string, db: string): Sample[] | undefined =>
  batches.filter((b) => b.snapshot === `t\u0000${collector}\u0000${db}`).at(-1)?.samples;

describe('PollScheduler against PostgreSQL 18', () => {
  let primary: PgServer;

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, name: 'poll-scheduler' });
    await primary.query('CREATE TABLE probe_rows (k text)');
    await primary.query("INSERT INTO probe_rows VALUES ('a'), ('b')");
  });
  afterAll(() => destroyAllServers());

  it('counts a failing collector\'s errors by code while the others keep sampling', async () => {
    const { poller, enqueued } = scheduler(primary, [
      testCollector('rows', 'SELECT k FROM public.probe_rows'),
      testCollector('broken', 'SELECT k FROM no_such_table'),
      testCollector('slow', 'SELECT pg_sleep(2) AS k', { timeoutMs: 150 }),
    ]);
    await poller.start();
    try {
      await waitUntil(() => (poller.stats.get('slow')?.errorsByCode['57014'] ?? 0) >= 2 && (poller.stats.get('rows')?.runs ?? 0) >= 5,
        WAIT_MS, 'several runs of each');
      expect(poller.stats.get('broken')).toMatchObject({ errorsByCode: { '42P01': expect.any(Number) }, lastSamples: 0 });
      expect(poller.stats.get('broken')?.lastError).toMatch(/^postgres: relation "no_such_table" does not exist$/);
      expect(poller.stats.get('slow')?.lastError).toMatch(/canceling statement due to statement timeout/);
      expect(poller.stats.get('rows')).toMatchObject({ errorsByCode: {}, lastSamples: 2 });
      expect(poller.stats.get('rows')?.lastDurationMs).toBeGreaterThan(0);
      expect(enqueued.filter((s) => s.name === 'test_rows').length).toBeGreaterThanOrEqual(10);
      expect(poller.status).toMatchObject({ connected: true, lastError: null, server: { versionNum: expect.any(Number), inRecovery: false } });
    } finally {
      await poller.stop();
    }
  });

  it('skips a run while the previous one of the same collector is still going', async () => {
    const { poller } = scheduler(primary, [testCollector('sleepy', 'SELECT pg_sleep(0.4) AS k', { intervalMs: 50 })]);
    await poller.start();
    try {
      await waitUntil(() => (poller.stats.get('sleepy')?.skippedOverlaps ?? 0) >= 3, WAIT_MS, 'overlaps skipped');
      expect(poller.stats.get('sleepy')?.errorsByCode).toEqual({});
    } finally {
      await poller.stop();
    }
  });

  it('keeps the latest sample of each series, and drops a series once its row is gone', async () => {
    const { poller } = scheduler(primary, [testCollector('rows', 'SELECT k FROM public.probe_rows')]);
    await poller.start();
    const keys = (): string[] => [...poller.latest.values()].filter((s) => s.name === 'test_rows').map((s) => s.labels.k ?? '').sort();
    try {
      await waitUntil(() => keys().length === 2, WAIT_MS, 'two series');
      expect(poller.latest.get('pg_up\u0000[]')?.value).toBe(1);
      await primary.query("DELETE FROM probe_rows WHERE k = 'b'");
      await waitUntil(() => keys().join() === 'a', WAIT_MS, 'series b gone from latest');
    } finally {
      await poller.stop();
      await primary.query("INSERT INTO probe_rows VALUES ('b')");
    }
  });

  it('sends each completed run as a snapshot: /metrics drops a row gone at the next run, keeps all on a failed one', async () => {
    await primary.query("CREATE TABLE snap_rows (k text); INSERT INTO snap_rows VALUES ('a'), ('b')");
    const clock = new ManualClock();
    const writer = new StoreWriter(openStore(':memory:'), clock, silentLogger());
    const metrics = new Metrics({ clock });
    metrics.attachWriter(writer);
    // On the ManualClock, intervals never fire: each collector runs once at start, then on runOnce.
    const { poller } = scheduler(primary, [testCollector('snap', 'SELECT k FROM public.snap_rows'), testCollector('other', "SELECT 'x' AS k")], { clock, writer });
    const exposed = async (): Promise<string[]> => {
      writer.flush();
      return (await metrics.render()).split('\n').filter((l) => l.startsWith('test_')).map((l) => l.replace(/\}.*/, '}')).sort();
    };
    const snapOnce = () => poller.runOnce((c) => c.name === 'snap');
    const other = 'test_other{target="t",k="x"}';
    const [a, b] = ['a', 'b'].map((k) => `test_snap{target="t",k="${k}"}`);
    await poller.start();
    try {
      await poller.whenIdle();
      expect(await exposed()).toEqual([other, a, b]);
      // The run fails (relation gone): what it said before stays on /metrics.
      await primary.query('ALTER TABLE snap_rows RENAME TO snap_rows_away');
      await snapOnce();
      expect(poller.stats.get('snap')?.errorsByCode['42P01']).toBe(1);
      expect(await exposed()).toEqual([other, a, b]);
      await primary.query("ALTER TABLE snap_rows_away RENAME TO snap_rows; DELETE FROM snap_rows WHERE k = 'b'");
      await snapOnce();
      expect(await exposed()).toEqual([other, a]);
      await primary.query("INSERT INTO snap_rows VALUES ('b')");
      await snapOnce();
      expect(await exposed()).toEqual([other, a, b]);
    } finally {
      await poller.stop();
      await primary.query('DROP TABLE snap_rows');
    }
  });

  it('gives up a poll query that queues for a lock instead of joining the queue', async () => {
    await primary.query('CREATE TABLE locked_for_poll (k text)');
    const holder = new pg.Client({ connectionString: primary.dsn() });
    await holder.connect();
    const { poller } = scheduler(primary, [testCollector('locked', 'SELECT k FROM public.locked_for_poll', { timeoutMs: 30_000 })]);
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE locked_for_poll IN ACCESS EXCLUSIVE MODE');
      await poller.start();
      // 55P03 lock_not_available after lock_timeout, long before the 30 s statement_timeout.
      await waitUntil(() => (poller.stats.get('locked')?.errorsByCode['55P03'] ?? 0) >= 1, WAIT_MS, 'the poll query to give up on the lock');
      const waiting = await primary.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'pgvigil' AND wait_event_type = 'Lock'");
      expect(waiting.length).toBeLessThanOrEqual(1);
    } finally {
      await poller.stop();
      await holder.end();
      await primary.query('DROP TABLE locked_for_poll');
    }
  });

  it('does not let a server-wide run that was in flight during a DROP DATABASE bring its series back', async () => {
    await primary.query('CREATE DATABASE inflight');
    const clock = new ManualClock();
    // Reads pg_database with a snapshot taken before the drop, and returns after it.
    const databases = queryCollector({
      name: 'dbs', scope: 'server', intervalMs: 60_000, timeoutMs: 10_000,
      metrics: [{ name: 'test_dbs', type: 'gauge', help: 'test' }],
      sql: () => "SELECT datname FROM pg_database, pg_sleep(CASE WHEN current_setting('application_name') = 'pgvigil' THEN 1 ELSE 0 END) WHERE datallowconn",
      map: (rows: readonly Row[], ctx: MapContext): Sample[] =>
        rows.map((r) => ({ target: ctx.target, name: 'test_dbs', labels: { datname: String(r.datname) }, tsMs: ctx.nowMs, value: 1 })),
    });
    const { poller, batches } = scheduler(primary, [databases], { clock, probeIntervalMs: 5_000 });
    const seen = (): string[] => [...poller.latest.values()].filter((s) => s.name === 'test_dbs').map((s) => s.labels.datname ?? '');
    await poller.start();
    try {
      await poller.whenIdle();
      expect(seen()).toContain('inflight');
      const run = poller.runOnce((c) => c.name === 'dbs');
      await waitUntil(async () => (await primary.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'pgvigil' AND query LIKE '%pg_sleep%' AND state = 'active'")).length === 1,
        WAIT_MS, 'the run reading pg_database');
      await primary.query('DROP DATABASE inflight');
      await clock.advance(5_000); // the probe: databases refreshed, inflight forgotten
      await waitUntil(() => !poller.knownDatabases.includes('inflight') && !seen().includes('inflight'), WAIT_MS, 'inflight forgotten');
      await run;
      expect(seen()).not.toContain('inflight');
      expect(seen()).toContain('postgres');
      expect(lastRun(batches, 'dbs', 'postgres')?.map((s) => s.labels.datname)).not.toContain('inflight');
      // Created again: its rows count again once the databases are refreshed.
      await primary.query('CREATE DATABASE inflight');
      await clock.advance(5_000);
      await waitUntil(() => poller.knownDatabases.includes('inflight'), WAIT_MS, 'inflight known again');
      await poller.runOnce((c) => c.name === 'dbs');
      expect(seen()).toContain('inflight');
    } finally {
      await poller.stop();
      await primary.query('DROP DATABASE IF EXISTS inflight');
    }
  });

  // CI once failed on this: for a role that is not superuser (its CONNECT privilege is looked up),
  // pg_database_size(oid) of a database the statement's snapshot still lists raises 42704 once
  // the drop has committed.
  it('sizes databases through a DROP DATABASE committed while the size query runs, without an error', async () => {
    await createMonitorRole(primary);
    const sizes = queryCollector({
      name: 'sizes', scope: 'server', intervalMs: 60_000, timeoutMs: 10_000,
      metrics: [{ name: 'test_sizes', type: 'gauge', help: 'test' }],
      sql: () => "SELECT datname, pg_database_size(d.oid) AS bytes FROM pg_sleep(CASE WHEN current_setting('application_name') = 'pgvigil' THEN 1 ELSE 0 END), pg_database d",
      map: (rows: readonly Row[], ctx: MapContext): Sample[] =>
        rows.map((r) => ({ target: ctx.target, name: 'test_sizes', labels: { datname: String(r.datname) }, tsMs: ctx.nowMs, value: Number(r.bytes) })),
    });
    const { poller } = scheduler(monitorDsn(primary), [sizes], { clock: new ManualClock(), probeIntervalMs: 60_000 });
    await poller.start();
    try {
      await poller.whenIdle();
      // Created after the first run, so that the backend has no cached entry of it.
      await primary.query('CREATE DATABASE sized');
      const run = poller.runOnce((c) => c.name === 'sizes');
      await waitUntil(async () => (await primary.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'pgvigil' AND query LIKE '%pg_sleep%' AND state = 'active'")).length === 1,
        WAIT_MS, 'the size query sleeping');
      await primary.query('DROP DATABASE sized');
      await run;
      expect(poller.stats.get('sizes')).toMatchObject({ errorsByCode: {}, lastError: null });
      const sized = [...poller.latest.values()].filter((s) => s.name === 'test_sizes').map((s) => s.labels.datname);
      expect(sized).toContain('postgres');
      expect(sized).not.toContain('sized');
    } finally {
      await poller.stop();
      await primary.query('DROP DATABASE IF EXISTS sized');
    }
  });

  /** pgvigil's backends connected to a database, as the server lists them. */
  const pollerPids = async (db: string): Promise<number[]> => (await primary.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = 'pgvigil' ORDER BY pid", [db])).map((r) => r.pid);

  it('keeps its connection to a database between visits, yet never makes a plain DROP DATABASE fail', async () => {
    await primary.query('CREATE DATABASE doomed');
    const { poller, batches } = scheduler(primary, [testCollector('visits', 'SELECT 1 AS k', { intervalMs: 100, scope: 'per-database' })]);
    await poller.start();
    try {
      await waitUntil(async () => poller.knownDatabases.includes('doomed') && (await pollerPids('doomed')).length === 1, WAIT_MS, 'a connection to doomed');
      expect(lastRun(batches, 'visits', 'doomed')).toHaveLength(1);
      const [pid] = await pollerPids('doomed');
      const runs = poller.stats.get('visits')?.runs ?? 0;
      await waitUntil(() => (poller.stats.get('visits')?.runs ?? 0) >= runs + 5, WAIT_MS, 'five more visits');
      expect(await pollerPids('doomed')).toEqual([pid]);
      // Visited ten times a second over a kept connection: DROP waits for it at most 5 s, then
      // fails, unless the poller lets go of the database.
      await primary.query('DROP DATABASE doomed');
      await waitUntil(() => !poller.knownDatabases.includes('doomed'), WAIT_MS, 'doomed forgotten');
      expect(poller.status.connected).toBe(true);
      // Its runs end with an empty one: its series leave /metrics now, not when they go stale.
      expect(lastRun(batches, 'visits', 'doomed')).toEqual([]);
      expect(lastRun(batches, 'visits', 'postgres')).toHaveLength(1);
    } finally {
      await poller.stop();
    }
  });

  it('lets CREATE DATABASE ... TEMPLATE and RENAME of a polled database through, then polls it again', async () => {
    await primary.query('CREATE DATABASE original');
    const { poller } = scheduler(primary, [testCollector('visits', 'SELECT 1 AS k', { intervalMs: 100, scope: 'per-database' })]);
    await poller.start();
    try {
      await waitUntil(async () => (await pollerPids('original')).length === 1, WAIT_MS, 'a connection to original');
      await primary.query('CREATE DATABASE copied TEMPLATE original');
      await waitUntil(async () => (await pollerPids('copied')).length === 1, WAIT_MS, 'the copy polled');
      await primary.query('ALTER DATABASE original RENAME TO renamed');
      await waitUntil(async () => (await pollerPids('renamed')).length === 1, WAIT_MS, 'the renamed database polled again');
      expect(poller.knownDatabases).toEqual(expect.arrayContaining(['copied', 'renamed']));
      expect(poller.knownDatabases).not.toContain('original');
    } finally {
      await poller.stop();
      for (const db of ['copied', 'renamed']) await primary.query(`DROP DATABASE ${db}`);
    }
  });

  it('lets a plain DROP of the database its DSN names through, and says it is gone', async () => {
    await primary.query('CREATE DATABASE main_doomed');
    const { poller } = scheduler(primary.dsn('main_doomed'), [testCollector('rows', 'SELECT 1 AS k', { intervalMs: 100 })]);
    await poller.start();
    try {
      await waitUntil(() => (poller.stats.get('rows')?.runs ?? 0) >= 3, WAIT_MS, 'runs in main_doomed');
      await primary.query('DROP DATABASE main_doomed');
      await waitUntil(() => !poller.status.connected, WAIT_MS, 'the poller to notice its database gone');
      expect(poller.status.lastError).toMatch(/^3D000: database "main_doomed" does not exist/);
    } finally {
      await poller.stop();
    }
  });

  it('asks only the databases a cluster-wide check names, and maps no rows in the others', async () => {
    for (const db of ['busy', 'quiet']) await primary.query(`CREATE DATABASE ${db}`);
    const { client: marker } = await openMarkedSession(primary, 'busy');
    const perDatabase: Collector = {
      ...testCollector('where', 'SELECT current_database() AS k', { intervalMs: 100, scope: 'per-database' }),
      activeDatabasesSql: () => "SELECT datname FROM pg_stat_activity WHERE application_name = 'busy_marker'",
    };
    const { poller } = scheduler(primary, [perDatabase]);
    await poller.start();
    try {
      await waitUntil(() => (poller.stats.get('where')?.runs ?? 0) >= 3, WAIT_MS, 'three runs');
      await poller.stop();
      expect(poller.knownDatabases).toEqual(expect.arrayContaining(['busy', 'postgres', 'quiet']));
      // Each run: the check, and the one database it named.
      expect(poller.stats.get('where')?.queries).toBe(2 * (poller.stats.get('where')?.runs ?? 0));
      expect([...poller.latest.values()].filter((s) => s.name === 'test_where').map((s) => s.labels.k)).toEqual(['busy']);
    } finally {
      await poller.stop();
      await marker.end();
      for (const db of ['busy', 'quiet']) await primary.query(`DROP DATABASE ${db}`);
    }
  });

  it('retries a server that is down with exponential backoff and jitter through the clock', async () => {
    const clock = new ManualClock();
    // A port nobody listens on: the harness' primary, stopped.
    const down = await startPrimary({ version: 18, name: 'poll-scheduler-down' });
    const dsn = down.dsn();
    await down.stop();
    const attempts: number[] = [];
    const { poller, enqueued } = scheduler(dsn, [testCollector('rows', 'SELECT 1 AS k')], {
      clock, reconnectInitialMs: 1_000, reconnectMaxMs: 4_000, random: () => 1,
    });
    poller.onStatus((s) => { if (!s.connected) attempts.push(clock.nowMs()); });
    await poller.start();
    try {
      expect(poller.status).toMatchObject({ connected: false, lastError: expect.stringMatching(/^ECONNREFUSED/) });
      expect(enqueued.filter((s) => s.name === 'pg_up').map((s) => s.value)).toEqual([0]);
      const t0 = clock.nowMs();
      // random() = 1: each delay is the full exponential step, 1 s, 2 s, 4 s, then capped at 4 s.
      for (const [step, expected] of [[999, 1], [1, 2], [1_999, 2], [1, 3], [4_000, 4], [4_000, 5]] as const) {
        await clock.advance(step);
        await waitUntil(() => attempts.length >= expected, WAIT_MS, `attempt ${expected}`);
        expect(attempts.length).toBe(expected);
      }
      expect(attempts.map((ms) => ms - t0)).toEqual([0, 1_000, 3_000, 7_000, 11_000]);
      await down.start();
      await clock.advance(4_000);
      await waitUntil(() => poller.status.connected, WAIT_MS, 'connected once the server is up');
    } finally {
      await poller.stop();
      await down.destroy();
    }
  });

  it('recognises a promoted standby with its new role and switches its collectors', async () => {
    const standby = await startStandby(primary, { name: 'poll_scheduler_standby' });
    const collectors = createCollectors().filter((c) => ['pg_standby', 'pg_stat_replication'].includes(c.name));
    const { poller, messages, batches } = scheduler(standby, collectors, { intervals: { pg_standby: 100, pg_stat_replication: 100 } });
    await poller.start();
    try {
      await waitUntil(() => (poller.stats.get('pg_standby')?.runs ?? 0) >= 2, WAIT_MS, 'standby collector runs');
      expect(poller.stats.get('pg_stat_replication')?.runs).toBeGreaterThan(0); // cascading walsenders: runs on both
      await standby.query('SELECT pg_promote()');
      await waitUntil(() => poller.status.server?.inRecovery === false, WAIT_MS, 'the promotion noticed');
      expect(messages.filter((m) => m.startsWith('connected to'))).toEqual([
        expect.stringMatching(/^connected to t \(PostgreSQL 18\.\d+, standby\)$/),
        expect.stringMatching(/^connected to t \(PostgreSQL 18\.\d+, primary\)$/),
      ]);
      const runs = poller.stats.get('pg_standby')?.runs ?? 0;
      await waitUntil(() => (poller.stats.get('pg_stat_replication')?.runs ?? 0) >= 3, WAIT_MS, 'primary collectors go on');
      await poller.whenIdle();
      expect(poller.stats.get('pg_standby')?.runs).toBeLessThanOrEqual(runs + 1);
      expect([...poller.latest.values()].some((s) => s.name.startsWith('pg_standby_'))).toBe(false);
      expect(lastRun(batches, 'pg_standby', 'postgres')).toEqual([]);
    } finally {
      await poller.stop();
      await standby.destroy();
    }
  });
});
