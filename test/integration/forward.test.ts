/**
 * Forwarding one sidecar store to a central PostgreSQL 18: events (with the characters a log
 * line can hold), alerts with their transitions and evidence, and series downsampled to the
 * latest value per step arrive intact; a batch sent again after a crash between the central
 * commit and the cursor write changes nothing; an alert resolved later is updated in place; a
 * central database that goes down leaves the store writable and the backlog drains on return.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateCentral } from '../../src/central/migrate-central.js';
import type { AnyLogEvent, Sample } from '../../src/domain/index.js';
import { centralClientConfig } from '../../src/forward/central-client-config.js';
import { centralWriters } from '../../src/forward/central-writer.js';
import { ForwardQueue } from '../../src/forward/forward-queue.js';
import { Forwarder } from '../../src/forward/forwarder.js';
import { silentLogger } from '../../src/lib/logger.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { SelfMetrics } from '../../src/http/self-metrics.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { itWithTool, toolPath } from '../helpers/tools.js';

const T0 = Date.UTC(2026, 11, 1, 10, 0, 0);
const STEP_MS = 60_000;

/** Messages as a server log can hold them: quotes, commas, line breaks, a NUL, a COPY end marker. */
const MESSAGES = ['plain', 'with "quotes", and commas', 'two\nlines\r\nand CRLF', '\\.', 'nul\u0000byte', '', 'émoji 🐘 ünïcode'];

function event(i: number, target = 'db1'): AnyLogEvent {
  return {
    kind: 'generic', target, tsMs: T0 + i * 1_000, pid: 100 + i, database: i % 2 ? 'shop' : null, user: 'app', level: 'LOG', sqlstate: null,
    message: MESSAGES[i % MESSAGES.length]!, details: { classified: false, note: MESSAGES[i % MESSAGES.length] } as never,
    source: { file: '/var/log/postgresql/postgresql.log', offset: i * 100, line: null },
  };
}

describe('forwarding a sidecar store to a central PostgreSQL 18', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-forward-'));
  let central: PgServer;
  let reader: pg.Client;
  let db: Db;
  let writer: StoreWriter;
  let alerts: AlertStore;
  let queue: ForwardQueue;
  let forwarder: Forwarder;
  const clock = new ManualClock(T0);

  const centralRows = async <T extends pg.QueryResultRow>(sql: string): Promise<T[]> => (await reader.query<T>(sql)).rows;

  beforeAll(async () => {
    central = await startPrimary({ version: 18, name: 'central' });
    reader = new pg.Client({ connectionString: central.dsn() });
    reader.on('error', () => undefined);
    await reader.connect();
    await migrateCentral(reader, T0);
    db = openStore(path.join(dir, 'sidecar.db'));
    writer = new StoreWriter(db, clock, silentLogger());
    alerts = new AlertStore(db, []);
    queue = new ForwardQueue(db, { batchRows: 1_000, stepMs: STEP_MS, graceMs: 5_000 });
    // Two connections, as `central forward` drains: batches in flight on both while the central database goes away.
    const writers = centralWriters(2, { client: centralClientConfig({ url: central.dsn(), password: null, tls: null }), storeId: queue.storeId, targets: [{ name: 'db1', cluster: 'shop' }] });
    forwarder = new Forwarder(queue, writers, clock, silentLogger(), { intervalMs: 1_000, maxRowsPerSecond: 1e9 });
    queue.init(T0);
  });

  afterAll(async () => {
    await forwarder?.stop();
    await reader?.end().catch(() => undefined);
    db?.close();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards events byte for byte, and alerts with their transitions and evidence', async () => {
    writer.enqueue({ events: Array.from({ length: 50 }, (_, i) => event(i)) });
    writer.flush();
    alerts.fire({
      ruleId: 'vacuum-held-back', dedupKey: 'vacuum-held-back/db1/shop/orders', severity: 'warning', target: 'db1',
      labels: { database: 'shop', table: 'orders' }, summary: 'dead tuples pile up on shop.public.orders',
      evidence: { eventIds: [3, 4], series: [], facts: { held_seconds: 84 } },
    }, T0 + 30_000);
    clock.advance(60_000);
    expect(await forwarder.forwardOnce()).toBe(51 + 1);

    const local = db.prepare('SELECT id, target, ts_ms, pid, database, message, details FROM events ORDER BY id').all() as Array<Record<string, unknown>>;
    const remote = await centralRows<Record<string, unknown>>(`SELECT local_id::int AS id, target, (extract(epoch FROM ts) * 1000)::bigint::int8::text AS ts_ms, pid, database, message, details::text AS details
      FROM pgvigil.events ORDER BY local_id`);
    expect(remote).toHaveLength(50);
    // A NUL cannot be stored in PostgreSQL text; it arrives as U+FFFD, everything else as it was.
    const asStored = (s: string) => s.replaceAll('\u0000', '\uFFFD');
    expect(remote.map((r) => ({ ...r, ts_ms: Number(r.ts_ms), details: JSON.parse(r.details as string) }))).toEqual(
      local.map((r) => ({ ...r, message: asStored(r.message as string), details: JSON.parse(asStored((r.details as string).replaceAll('\\u0000', '\u0000'))) })),
    );
    const [alert] = await centralRows<{ rule_id: string; state: string; evidence: unknown; cluster: string }>(
      `SELECT a.rule_id, a.state, a.evidence, t.cluster FROM pgvigil.alerts a JOIN pgvigil.targets t USING (target, store_id)`);
    expect(alert).toEqual({ rule_id: 'vacuum-held-back', state: 'firing', evidence: { eventIds: [3, 4], series: [], facts: { held_seconds: 84 } }, cluster: 'shop' });
    expect(await centralRows('SELECT to_state FROM pgvigil.alert_transitions')).toEqual([{ to_state: 'firing' }]);
    expect(forwarder.stats.pendingRows).toEqual({ events: 0, alert_transitions: 0, alerts: 0, samples: 0, report_minutes: 0 });
    expect(forwarder.stats.lagSeconds).toBe(0);
  });

  it('sends a batch again after a crash before the cursor moved, and nothing doubles', async () => {
    db.exec(`UPDATE forward_cursors SET position = 0 WHERE stream IN ('events', 'alert_transitions'); INSERT INTO forward_alert_changes (alert_id) SELECT id FROM alerts`);
    expect(await forwarder.forwardOnce()).toBe(52);
    expect(await centralRows('SELECT count(*)::int AS n FROM pgvigil.events')).toEqual([{ n: 50 }]);
    expect(await centralRows('SELECT count(*)::int AS n FROM pgvigil.alert_transitions')).toEqual([{ n: 1 }]);
    expect(await centralRows('SELECT count(*)::int AS n FROM pgvigil.alerts')).toEqual([{ n: 1 }]);
  });

  it('updates a forwarded alert in place when it resolves', async () => {
    alerts.resolve('vacuum-held-back/db1/shop/orders', T0 + 90_000);
    expect(await forwarder.forwardOnce()).toBe(2);
    expect(await centralRows(`SELECT state, resolved_at = '2026-12-01T10:01:30Z' AS resolved_then FROM pgvigil.alerts`)).toEqual([{ state: 'resolved', resolved_then: true }]);
    expect(await centralRows('SELECT to_state FROM pgvigil.alert_transitions ORDER BY local_id')).toEqual([{ to_state: 'firing' }, { to_state: 'resolved' }]);
  });

  it('downsamples series to the latest value of each complete step', async () => {
    const sample = (tsMs: number, value: number | null, table = 'orders'): Sample => ({ target: 'db1', name: 'pg_stat_user_tables_n_dead_tup', labels: { datname: 'shop', relname: table }, tsMs, value });
    const base = Math.ceil(clock.nowMs() / STEP_MS) * STEP_MS;
    writer.enqueue({ samples: [sample(base + 1_000, 1), sample(base + 30_000, 2), sample(base + 59_999, 3), sample(base + 60_000, null), sample(base + 61_000, 7, 'items')] });
    writer.flush();
    await clock.advance(base + 2 * STEP_MS + 5_000 - clock.nowMs());
    await forwarder.forwardOnce();
    const rows = await centralRows<{ relname: string; ts: Date; value: number | null }>(`
      SELECT s.labels->>'relname' AS relname, p.ts, p.value FROM pgvigil.samples p
      JOIN pgvigil.series s ON (s.target, s.store_id, s.local_id) = (p.target, p.store_id, p.series_local_id)
      WHERE p.ts >= to_timestamp(${base / 1000}) ORDER BY relname, ts`);
    expect(rows).toEqual([
      { relname: 'items', ts: new Date(base + STEP_MS), value: 7 },
      { relname: 'orders', ts: new Date(base), value: 3 },
      { relname: 'orders', ts: new Date(base + STEP_MS), value: null },
    ]);
  });

  it('leaves the store writable while the central database is down, and drains the backlog when it returns', async () => {
    await central.stop('immediate');
    writer.enqueue({ events: Array.from({ length: 30 }, (_, i) => event(100 + i)) });
    expect(writer.flush()).toBe(true);
    await expect(forwarder.forwardOnce()).rejects.toThrow();
    expect(queue.pending(clock.nowMs()).events).toBe(30);
    await central.start();
    expect(await forwarder.forwardOnce()).toBe(30);
    expect(await centralRowsAfterRestart('SELECT count(*)::int AS n FROM pgvigil.events')).toEqual([{ n: 80 }]);
  });

  itWithTool('promtool', 'exposes the backlog as pgvigil_forward_* metrics that pass promtool check metrics', async () => {
    await central.stop('immediate');
    writer.enqueue({ events: Array.from({ length: 7 }, (_, i) => event(200 + i)) });
    writer.flush();
    await expect(forwarder.forwardOnce()).rejects.toThrow();
    await clock.advance(42_000);
    const exposition = new SelfMetrics({ forward: () => forwarder.stats }, clock.nowMs(), clock).render().toString();
    const result = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(exposition).toMatch(/^pgvigil_forward_pending_rows\{stream="events"\} 7$/m);
    expect(exposition).toMatch(/^pgvigil_forward_rows_total\{stream="events"\} 130$/m);
    expect(exposition).toMatch(/^pgvigil_forward_failures_total 2$/m);
    expect(exposition).toMatch(/^pgvigil_forward_lag_seconds 42$/m);
    await central.start();
    await forwarder.forwardOnce();
    expect(forwarder.stats.pendingRows?.events).toBe(0);
  });

  async function centralRowsAfterRestart<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
    await reader.end().catch(() => undefined);
    reader = new pg.Client({ connectionString: central.dsn() });
    reader.on('error', () => undefined);
    await reader.connect();
    return centralRows<T>(sql);
  }
});
