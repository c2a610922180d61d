/**
 * What the collector integration tests share: a monitoring role with only pg_monitor (as
 * docs/monitoring-role.md tells operators to create), a poll scheduler with every collector on
 * short intervals writing through the real StoreWriter into an in-memory store, and ways to wait
 * on what it has sampled.
 */
import pg from 'pg';
import type { Labels, Sample } from '../../src/domain/index.js';
import { systemClock } from '../../src/domain/index.js';
import { createCollectors } from '../../src/collectors/index.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import { pino } from 'pino';
import type { PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';

export const MONITOR_ROLE = 'pgvigil_monitor';
export const WAIT_MS = 20_000;

/** The role and grants of docs/monitoring-role.md (idempotent; roles replicate to standbys). */
export async function createMonitorRole(primary: PgServer): Promise<void> {
  const exists = await primary.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [MONITOR_ROLE]);
  if (exists.length === 0) await primary.query(`CREATE ROLE ${MONITOR_ROLE} LOGIN`);
  await primary.query(`GRANT pg_monitor TO ${MONITOR_ROLE}`);
}

export function monitorDsn(server: PgServer, database = 'postgres'): string {
  return `postgres://${MONITOR_ROLE}@${server.host}:${server.port}/${encodeURIComponent(database)}`;
}

export interface PollRig {
  scheduler: PollScheduler;
  store: Db;
  messages: string[];
  /** Latest samples of a series name whose labels include `labels`. */
  latest(name: string, labels?: Partial<Labels>): Sample[];
  /** Waits until one latest sample of name matching labels satisfies test; returns it. */
  waitForSample(name: string, labels: Partial<Labels>, test: (value: number | null) => boolean, what: string): Promise<Sample>;
  /** Stored (value, ts) of a series matching labels, oldest first. */
  stored(name: string, labels?: Partial<Labels>): Array<{ tsMs: number; value: number | null }>;
  stop(): Promise<void>;
}

export async function startPollRig(server: PgServer, options: { target?: string; intervalMs?: number } = {}): Promise<PollRig> {
  const store = openStore(':memory:');
  // What the scheduler logs at info and above, to assert on "connected to ..." lines.
  const messages: string[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void messages.push(String(JSON.parse(line).msg)) });
  const writer = new StoreWriter(store, systemClock, logger, { flushIntervalMs: 100 });
  await writer.start();
  const intervalMs = options.intervalMs ?? 300;
  const collectors = createCollectors();
  const scheduler = new PollScheduler({
    target: options.target ?? `pg${server.version}`,
    connection: monitorDsn(server),
    collectors,
    writer,
    clock: systemClock,
    logger,
    intervals: Object.fromEntries(collectors.map((c) => [c.name, intervalMs])),
    probeIntervalMs: 500,
    reconnectInitialMs: 100,
    reconnectMaxMs: 1_000,
  });
  await scheduler.start();

  const matches = (s: Sample, name: string, labels: Partial<Labels>): boolean =>
    s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v);
  const latest = (name: string, labels: Partial<Labels> = {}): Sample[] =>
    [...scheduler.latest.values()].filter((s) => matches(s, name, labels));

  return {
    scheduler,
    store,
    messages,
    latest,
    async waitForSample(name, labels, test, what) {
      let found: Sample | undefined;
      await waitUntil(() => {
        found = latest(name, labels).find((s) => test(s.value));
        return found !== undefined;
      }, WAIT_MS, what);
      return found as Sample;
    },
    stored(name, labels = {}) {
      writer.flush();
      const series = store.prepare('SELECT id, labels FROM series WHERE name = ?').all(name) as Array<{ id: number; labels: string }>;
      const ids = series
        .filter((s) => Object.entries(labels).every(([k, v]) => (JSON.parse(s.labels) as Array<[string, string]>).some(([lk, lv]) => lk === k && lv === v)))
        .map((s) => s.id);
      if (ids.length === 0) return [];
      return store
        .prepare(`SELECT ts_ms AS tsMs, value FROM samples WHERE series_id IN (${ids.map(() => '?').join(',')}) ORDER BY ts_ms`)
        .all(...ids) as Array<{ tsMs: number; value: number | null }>;
    },
    async stop() {
      await scheduler.stop();
      await writer.stop();
      store.close();
    },
  };
}

/** A session kept open by a test (a transaction holding a snapshot or a lock). */
export async function openSession(server: PgServer, database = 'postgres'): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: server.dsn(database) });
  client.on('error', () => undefined);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  return { client, pid: rows[0]!.pid };
}

/** Burns transaction IDs so that ages grow. */
export async function consumeXids(server: PgServer, count: number): Promise<void> {
  await server.query(`DO $$ BEGIN FOR i IN 1..${count} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`);
}
