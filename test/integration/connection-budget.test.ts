/**
 * Incident (issue #24): a PostgreSQL with max_connections = 60 and 250 databases; pgvigil opened a
 * connection to every database at once, held 59 of the 60 slots, and the server refused an
 * application 40 of 40 times. CI-sized here: max_connections = 20 (3 reserved for superusers),
 * 40 databases of 2 tables, every collector, pgvigil as a pg_monitor role on the default budget
 * (3 connections, 5 slots left free), a ManualClock stepping the intervals.
 *
 * - An application holding every slot that is neither pgvigil's budget nor the margin is never
 *   refused, pgvigil's sessions (sampled from pg_stat_activity by a session opened before, and
 *   counted by the budget itself) never exceed 3, and every database's tables are sampled within
 *   two intervals.
 * - When the application takes the margin too, pgvigil opens nothing: the visits are skipped,
 *   counted, said once, and reported as pgvigil_poll_connects_skipping; when it leaves, they resume.
 * - `pgvigil check` warns when the role is a superuser: it may take the reserved slots.
 */
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runChecks } from '../../src/cli/check.js';
import { createCollectors } from '../../src/collectors/index.js';
import { loadConfig } from '../../src/config/load-config.js';
import type { Sample } from '../../src/domain/index.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { freePort } from '../helpers/pg-processes.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { createMonitorRole, MONITOR_ROLE, monitorDsn, WAIT_MS } from './collectors-rig.js';

const MAX_CONNECTIONS = 20;
const SUPERUSER_RESERVED = 3;
const BUDGET = 3;
const MARGIN = 5;
const DATABASES = 40;
const INTERVAL_MS = 15_000;
/** Ordinary slots: all but the reserved ones, less the observer's session. */
const ORDINARY = MAX_CONNECTIONS - SUPERUSER_RESERVED - 1;
/** The application's share: every ordinary slot that is neither pgvigil's budget nor the margin. */
const APP_SESSIONS = ORDINARY - BUDGET - MARGIN;

let server: PgServer;
let observer: pg.Client;
const names = Array.from({ length: DATABASES }, (_, i) => `tenant_${String(i + 1).padStart(2, '0')}`);

beforeAll(async () => {
  server = await startPrimary({
    version: 18, name: 'connection-budget',
    settings: { max_connections: MAX_CONNECTIONS, superuser_reserved_connections: SUPERUSER_RESERVED },
  });
  await server.query('CREATE TABLE public.orders (id int PRIMARY KEY); CREATE TABLE public.items (id int PRIMARY KEY)', [], 'template1');
  // Four at a time: copying template1 keeps a core busy, and the machine has two.
  for (let i = 0; i < names.length; i += 4) await Promise.all(names.slice(i, i + 4).map((name) => server.query(`CREATE DATABASE ${name}`)));
  await createMonitorRole(server);
  await server.query('CREATE ROLE app LOGIN');
  // A superuser session opened before pgvigil: it sees every session, and is not refused.
  observer = new pg.Client({ connectionString: server.dsn() });
  await observer.connect();
}, 120_000);

afterAll(async () => {
  await observer?.end();
  await destroyAllServers();
});

/** The application's sessions: every connect must succeed; a refusal fails the test. */
async function openApp(count: number): Promise<pg.Client[]> {
  return Promise.all(Array.from({ length: count }, async () => {
    const client = new pg.Client({ connectionString: server.dsn(), user: 'app', application_name: 'app' });
    await client.connect();
    return client;
  }));
}

/** pgvigil's sessions, sampled back to back from pg_stat_activity until stop(): the most seen at once. */
function samplePeak(): { stop(): Promise<number> } {
  let running = true;
  let peak = 0;
  const loop = (async () => {
    while (running) {
      const { rows } = await observer.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 AND backend_type = 'client backend'", [MONITOR_ROLE]);
      peak = Math.max(peak, rows[0]!.n);
    }
  })();
  return { stop: async () => { running = false; await loop; return peak; } };
}

it('stays within 3 connections, leaves the margin to the application, samples every database within two intervals, and skips when the server is near full', async () => {
  const clock = new ManualClock();
  const batches: Array<{ samples: Sample[]; snapshot?: string }> = [];
  const messages: string[] = [];
  const poller = new PollScheduler({
    target: 'budget', connection: monitorDsn(server), collectors: createCollectors(), clock,
    logger: pino({ level: 'info' }, { write: (line: string) => void messages.push(String(JSON.parse(line).msg)) }),
    writer: { enqueue: (batch) => void batches.push(batch) },
    maxConnections: BUDGET, minFreeConnections: MARGIN,
  });
  /** Databases whose tables were sampled in the batches from index `from` on. */
  const sampledSince = (from: number): string[] => [...new Set(batches.slice(from)
    .filter((b) => b.samples.some((s) => s.name.startsWith('pg_stat_user_tables_') && s.labels.relname !== undefined))
    .map((b) => b.snapshot!.split('\u0000')[2]!))].sort();
  const tick = async (ms: number): Promise<void> => {
    await clock.advance(ms);
    await poller.whenIdle();
  };
  const nearFull = (): number => messages.filter((m) => m.includes('near max_connections')).length;
  /** A probe series as the next probe (every 10 s, on the clock) reports it. */
  const probed = async (name: string): Promise<number | null | undefined> => {
    await tick(10_000);
    await waitUntil(() => poller.latest.get(`${name}\u0000[]`)?.tsMs === clock.nowMs(), WAIT_MS, `the probe at ${clock.nowMs()}`);
    return poller.latest.get(`${name}\u0000[]`)?.value;
  };

  let app: pg.Client[] = [];
  let extra: pg.Client[] = [];
  const sampler = samplePeak();
  try {
    // The application connects while pgvigil starts and makes its first cycles.
    [app] = await Promise.all([openApp(APP_SESSIONS), (async () => {
      await poller.start();
      await poller.whenIdle();
      await tick(INTERVAL_MS);
    })()]);
    expect(app).toHaveLength(APP_SESSIONS);
    expect(sampledSince(0)).toEqual(names);
    const stats = poller.connectionStats;
    expect(stats.peakOpen).toBeLessThanOrEqual(BUDGET);
    expect(stats.skippedConnects).toBe(0);
    // A connection per visit at most: two cycles over every database and the main one.
    expect(stats.connects).toBeLessThanOrEqual(2 * (DATABASES + 1));
    expect(stats.connects).toBeGreaterThanOrEqual(DATABASES);
    expect(poller.stats.get('pg_stat_user_tables')?.errorsByCode).toEqual({});

    // The application takes the margin too: pgvigil opens nothing, says so once, and reports it.
    extra = await openApp(MARGIN - 1);
    const before = batches.length;
    await tick(INTERVAL_MS);
    await tick(INTERVAL_MS);
    const skipping = poller.connectionStats;
    expect(skipping.skipping).toBe(true);
    expect(skipping.skippedConnects).toBeGreaterThanOrEqual(1);
    // Each visit of the two cycles (every database and the main one) is skipped at most once.
    expect(skipping.skippedConnects).toBeLessThanOrEqual(2 * (DATABASES + 1));
    expect(sampledSince(before).length).toBeLessThan(DATABASES);
    expect(nearFull()).toBe(1);
    expect(await probed('pgvigil_poll_connects_skipping')).toBe(1);
    expect(poller.latest.get('pg_connections_available\u0000[]')?.value).toBeLessThanOrEqual(MARGIN);
    expect(poller.latest.get('pgvigil_poll_connects_skipped_total\u0000[]')?.value).toBeGreaterThanOrEqual(skipping.skippedConnects);

    // The application leaves the margin: the visits resume, and every database is sampled again.
    await Promise.all(extra.splice(0).map((c) => c.end()));
    const resumed = batches.length;
    await tick(INTERVAL_MS);
    await tick(INTERVAL_MS);
    expect(sampledSince(resumed)).toEqual(names);
    expect(messages.filter((m) => m.includes('room again'))).toHaveLength(1);
    expect(nearFull()).toBe(1);
    expect(await probed('pgvigil_poll_connects_skipping')).toBe(0);
  } finally {
    await poller.stop();
    const peak = await sampler.stop();
    await Promise.all([...app, ...extra].map((c) => c.end()));
    expect(peak).toBeGreaterThanOrEqual(1);
    expect(peak).toBeLessThanOrEqual(BUDGET);
    expect(poller.connectionStats.peakOpen).toBeLessThanOrEqual(BUDGET);
  }
}, 120_000);

it('pgvigil check warns when the role is a superuser, and not when it is only pg_monitor', async () => {
  const dir = suiteTempDir('connection-budget');
  const privileges = async (dsn: string) => {
    const config = loadConfig({ env: {}, flags: { dsn, db: path.join(dir, 'pgvigil.db'), listen: `127.0.0.1:${await freePort()}` } });
    return (await runChecks(config)).find((r) => r.aspect.endsWith(': privileges'));
  };
  expect(await privileges(server.dsn())).toMatchObject({ state: 'warn', message: expect.stringContaining('superuser_reserved_connections') });
  expect(await privileges(monitorDsn(server))).toMatchObject({ state: 'ok', message: 'member of pg_monitor' });
});
