/**
 * Incident: a lock-timeout storm starts and ends while pgvigil is stopped. When `pgvigil run`
 * comes back it reads the log written meanwhile; by then the storm is older than error-storm's
 * window, so judged at the wall clock's "now" it was never an alert. The daemon judges the
 * backlog on the log's own time instead: one alert that fires and resolves at the storm's times,
 * marked as found late, and both transitions are sent to the webhook.
 *
 * The built daemon (dist/: `npm run build` first) against a real PostgreSQL 18.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { killDaemon, spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { openSession } from './collectors-rig.js';

const INTERVAL_MS = 1_000;
const HOLD_DOWN_MS = 2_000;
const WINDOW_MS = 10_000;
const LOCK_TIMEOUTS = 15;
/** error-storm's min_events: a storm of LOCK_TIMEOUTS holds for a while, then stops holding. */
const MIN_EVENTS = 10;
/** How long pgvigil stays down after the storm: past the window and past what counts as live (10 s). */
const DOWN_AFTER_STORM_MS = 16_000;
const START_WAIT_MS = 30_000;

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-storm-down-'));
const receiver = new WebhookReceiver();
const daemons: DaemonProcess[] = [];
let primary: PgServer;

beforeAll(async () => {
  await receiver.start();
  primary = await startPrimary({ version: 18, name: 'storm-while-down' });
});

afterAll(async () => {
  for (const daemon of daemons) daemon.child.kill('SIGKILL');
  await receiver.stop();
  await destroyAllServers();
  rmSync(dir, { recursive: true, force: true });
});

async function startDaemon(config: string): Promise<DaemonProcess> {
  const daemon = await spawnDaemon(['--config', config]);
  daemons.push(daemon);
  await daemon.waitForLog(/^serving \/metrics/, START_WAIT_MS);
  return daemon;
}

it('alerts on a storm that began and ended while pgvigil was down, at its own times, once, marked as found late', async () => {
  const store = join(dir, 'pgvigil.db');
  const config = join(dir, 'pgvigil.yaml');
  writeFileSync(config, stringify({
    db: store,
    targets: [{ name: 'primary', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } }],
    notify: { webhooks: [{ name: 'storm', url: receiver.url }] },
    rules: {
      interval_ms: INTERVAL_MS,
      hold_down_ms: HOLD_DOWN_MS,
      thresholds: { 'error-storm': { window_ms: WINDOW_MS, min_events: MIN_EVENTS } },
    },
  }));
  await primary.query('CREATE TABLE orders (id int PRIMARY KEY, n int NOT NULL)');
  await primary.query('INSERT INTO orders VALUES (1, 0)');

  const first = await startDaemon(config);
  await killDaemon(first);
  onTestFailed(() => console.error(`last pgvigil output:\n${daemons.at(-1)?.output()}`));

  // While it is down: a session holds the table, another's updates give up after 20 ms each.
  const [holder, victim] = await Promise.all([openSession(primary), openSession(primary)]);
  await holder.client.query('BEGIN');
  await holder.client.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
  await victim.client.query("SET lock_timeout = '20ms'");
  for (let i = 0; i < LOCK_TIMEOUTS; i++) await victim.client.query('UPDATE orders SET n = n + 1 WHERE id = 1').catch(() => undefined);
  await holder.client.query('COMMIT');
  await Promise.all([holder, victim].map((s) => s.client.end()));
  await sleep(DOWN_AFTER_STORM_MS);

  const restartedMs = Date.now();
  const second = await startDaemon(config);
  const stormBodies = () => receiver.received.filter((b) => b.rule_id === 'error-storm');
  await waitUntil(() => stormBodies().some((b) => b.status === 'resolved'), 30_000, 'the storm\'s resolve at the webhook');
  await sleep(2 * INTERVAL_MS);
  await killDaemon(second);

  const db = openStore(store, { readonly: true });
  const stormTimes = (db.prepare(`SELECT ts_ms FROM events WHERE kind = 'lock_timeout' ORDER BY ts_ms`).pluck().all() as number[]);
  const alerts = db.prepare(`SELECT id, started_ms, resolved_ms, summary, evidence FROM alerts WHERE rule_id = 'error-storm'`).all() as
    Array<{ id: number; started_ms: number; resolved_ms: number | null; summary: string; evidence: string }>;
  db.close();
  expect(stormTimes).toHaveLength(LOCK_TIMEOUTS);
  const lastMs = stormTimes.at(-1)!;
  expect(alerts).toHaveLength(1);
  const alert = alerts[0]!;
  // Fired on the first step (1 s apart) with min_events timeouts in the window; resolved a
  // hold-down after the last step with that many, which ends when the timeout that leaves fewer
  // leaves the window: the storm's own times, all before the restart.
  const fewerAfterMs = stormTimes[LOCK_TIMEOUTS - MIN_EVENTS]! + WINDOW_MS;
  expect(alert.started_ms).toBeGreaterThanOrEqual(stormTimes[MIN_EVENTS - 1]!);
  expect(alert.started_ms).toBeLessThanOrEqual(Math.min(stormTimes[MIN_EVENTS - 1]!, lastMs) + INTERVAL_MS);
  expect(alert.resolved_ms).toBeGreaterThanOrEqual(fewerAfterMs - INTERVAL_MS + HOLD_DOWN_MS);
  expect(alert.resolved_ms).toBeLessThanOrEqual(fewerAfterMs + HOLD_DOWN_MS + INTERVAL_MS);
  expect(alert.resolved_ms).toBeLessThan(restartedMs);
  expect(alert.summary).toMatch(/found late/);
  // The evidence is kept current while the storm holds: its count is the window's at the last
  // step that still held (all the timeouts when they fell within one step; fewer on a slow run).
  const { facts } = JSON.parse(alert.evidence) as { facts: { lock_timeout: number } };
  expect(facts).toMatchObject({ found_in_backlog: true, top_relation: 'orders' });
  expect(facts.lock_timeout).toBeGreaterThanOrEqual(MIN_EVENTS);
  expect(facts.lock_timeout).toBeLessThanOrEqual(LOCK_TIMEOUTS);

  // Both transitions sent once each (no kill between the sends), with their own times.
  const bodies = stormBodies() as Array<{ status: string; at: string; alert_id: number; evidence: { facts: Record<string, unknown> } }>;
  expect(bodies.map((b) => [b.status, b.alert_id, Date.parse(b.at)])).toEqual([
    ['firing', alert.id, alert.started_ms],
    ['resolved', alert.id, alert.resolved_ms],
  ]);
  for (const body of bodies) expect(body.evidence.facts.found_in_backlog).toBe(true);
}, 120_000);
