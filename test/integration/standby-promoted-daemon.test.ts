/**
 * A failover seen by the whole daemon: `pgvigil run` (built, dist/) watches a PostgreSQL 18
 * primary and its streaming standby (one cluster, two targets, both logs tailed); the test stops
 * the primary (fast) and promotes the standby, as an operator or a failover manager does.
 *
 * pgvigil keeps running and: says the role change (standby -> primary) in its log and sends it to
 * the notifiers as a change event (a webhook here; PagerDuty takes it as a change event); stores the
 * promotion from the promoted server's log (the request, the new timeline, ready for read-write
 * connections) as server_restart events; polls the promoted server as a primary (pg_in_recovery 0,
 * its walreceiver series end); keeps retrying the old primary with a growing backoff, with no
 * samples in its gap; and keeps tailing the promoted server's log (warnings written after the
 * promotion are stored).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const WAIT_MS = 60_000;

const dir = suiteTempDir('promoted');
const store = join(dir, 'pgvigil.db');
let primary: PgServer;
let standby: PgServer;
let daemon: DaemonProcess;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  primary = await startPrimary({ version: 18, name: 'promote-primary' });
  standby = await startStandby(primary, { name: 'promote-standby' });
  await receiver.start();
  const config = join(dir, 'pgvigil.yaml');
  writeFileSync(config, stringify({
    db: store,
    targets: [
      { name: 'primary', cluster: 'shop', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } },
      { name: 'standby', cluster: 'shop', dsn: standby.dsn(), log: { path: standby.logDir, start_at: 'beginning' } },
    ],
    collectors: { interval_ms: { pg_stat_database: 1_000, pg_standby: 1_000 } },
    notify: { webhooks: [{ name: 'on-call', url: receiver.url }] },
  }));
  daemon = await spawnDaemon(['--config', config]);
}, 120_000);

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await receiver.stop();
  await destroyAllServers();
});

async function gauge(name: string, target: string): Promise<string | undefined> {
  return new RegExp(`^${name}\\{target="${target}"[^}]*\\} (\\S+)$`, 'm').exec(await daemon.metrics())?.[1];
}

function query<T>(sql: string, ...params: unknown[]): T[] {
  const db = openStore(store, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as T[];
  } finally {
    db.close();
  }
}

/** Sample times of a series of one target. */
function sampleTimes(name: string, target: string): number[] {
  return query<{ ts_ms: number }>(
    'SELECT p.ts_ms FROM samples p JOIN series s ON s.id = p.series_id WHERE s.name = ? AND s.target = ? ORDER BY p.ts_ms', name, target,
  ).map((r) => r.ts_ms);
}

function restartEvents(target: string): Array<Record<string, unknown>> {
  return query<{ details: string }>(`SELECT details FROM events WHERE kind = 'server_restart' AND target = ? ORDER BY id`, target)
    .map((r) => JSON.parse(r.details) as Record<string, unknown>);
}

it('follows a standby promoted after its primary stopped: the role change, the new timeline, polling as a primary, the old primary retried, the log tailed', async () => {
  onTestFailed(() => console.error(`pgvigil output:\n${daemon.output()}`));
  await waitUntil(async () => (await gauge('pg_up', 'primary')) === '1' && (await gauge('pg_in_recovery', 'standby')) === '1', WAIT_MS, 'both polled, the standby in recovery');
  await waitUntil(() => sampleTimes('pg_stat_wal_receiver_up', 'standby').length > 0, WAIT_MS, 'the standby\'s walreceiver sampled');

  await primary.stop('fast');
  const stoppedAt = Date.now();
  await waitUntil(async () => (await gauge('pg_up', 'primary')) === '0', WAIT_MS, 'pg_up 0 for the old primary');
  await standby.query('SELECT pg_promote(true, 60)');
  const promotedAt = Date.now();

  await waitUntil(async () => (await gauge('pg_in_recovery', 'standby')) === '0', WAIT_MS, 'the promoted server polled as a primary');
  const change = await daemon.waitForLog(/^role of standby changed: standby -> primary/, WAIT_MS);
  expect(change).toMatchObject({ level: 40, target: 'standby', from_role: 'standby', to_role: 'primary', timeline_id: 2 });

  await waitUntil(() => receiver.received.some((r) => r.kind === 'change'), WAIT_MS, 'the failover sent as a change event');
  expect(receiver.received.filter((r) => r.kind === 'change')).toEqual([expect.objectContaining({
    target: 'standby', summary: 'standby promoted to primary (timeline 2) in cluster shop',
    details: { cluster: 'shop', from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: false },
  })]);

  await waitUntil(() => restartEvents('standby').some((d) => d.phase === 'ready' && d.read_only === false), WAIT_MS, 'the promotion read from the promoted server\'s log');
  const phases = restartEvents('standby');
  expect(phases.find((d) => d.phase === 'promote_requested')).toBeDefined();
  expect(phases.find((d) => d.phase === 'new_timeline')).toMatchObject({ timeline_id: 2 });

  // The promoted server's log is still tailed: warnings written now are stored.
  for (let i = 0; i < 3; i++) await standby.query(`DO $$ BEGIN RAISE WARNING 'after promotion %', ${i}; END $$`);
  await waitUntil(() => query(`SELECT 1 FROM events WHERE target = 'standby' AND message LIKE 'after promotion %'`).length === 3, WAIT_MS, 'warnings after the promotion stored');

  // Its walreceiver series end: the standby-side collector no longer runs there.
  const settled = Date.now() + 3_000;
  await waitUntil(() => sampleTimes('pg_stat_database_xact_commit_total', 'standby').some((ts) => ts > settled), WAIT_MS, 'samples of the promoted server');
  expect(sampleTimes('pg_stat_wal_receiver_up', 'standby').filter((ts) => ts > promotedAt + 3_000)).toEqual([]);

  // The old primary: retried with a growing backoff, no samples in its gap.
  const retries = daemon.logLines().filter((l) => l.target === 'primary' && l.msg === 'cannot connect; retrying with backoff');
  expect(retries.length).toBeGreaterThan(0);
  expect(sampleTimes('pg_stat_database_xact_commit_total', 'primary').filter((ts) => ts > stoppedAt + 1_000)).toEqual([]);
  expect(daemon.child.exitCode).toBeNull();
  console.log(`promotion: ${phases.map((d) => d.phase).join(', ')}; old primary retried ${retries.length} times (logged), last retry in ${String(retries.at(-1)?.retryInMs)} ms`);
}, 240_000);
