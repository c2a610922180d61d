/**
 * A failover pgvigil did not see happen: `pgvigil run` (built, dist/) watches a PostgreSQL 18
 * streaming standby, is stopped, the standby is promoted, and pgvigil starts again. The first
 * probe finds a primary where the store last recorded a standby (pg_in_recovery 1), so pgvigil
 * says the role change, marked as happened since it last ran, and sends it to the notifiers as a
 * change event, as it does for one it watches happen (standby-promoted-daemon.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const WAIT_MS = 60_000;

const dir = suiteTempDir('promoted-while-down');
const config = join(dir, 'pgvigil.yaml');
let standby: PgServer;
let daemon: DaemonProcess | null = null;
const receiver = new WebhookReceiver();

beforeAll(async () => {
  const primary = await startPrimary({ version: 18, name: 'down-primary' });
  standby = await startStandby(primary, { name: 'down-standby' });
  await receiver.start();
  writeFileSync(config, stringify({
    db: join(dir, 'pgvigil.db'),
    targets: [{ name: 'replica', cluster: 'shop', dsn: standby.dsn() }],
    notify: { webhooks: [{ name: 'on-call', url: receiver.url }] },
  }));
}, 120_000);

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await receiver.stop();
  await destroyAllServers();
});

async function inRecoveryGauge(): Promise<string | undefined> {
  return /^pg_in_recovery\{target="replica"[^}]*\} (\S+)$/m.exec(await daemon!.metrics())?.[1];
}

it('says and notifies a promotion that happened while it was stopped, at its next start', async () => {
  onTestFailed(() => console.error(`pgvigil output:\n${daemon?.output() ?? ''}`));
  daemon = await spawnDaemon(['--config', config]);
  await waitUntil(async () => (await inRecoveryGauge()) === '1', WAIT_MS, 'the standby polled in recovery');
  // Stopped cleanly, so the writer has stored the sample it polled (a SIGKILL may lose the last second).
  daemon.child.kill('SIGTERM');
  const stopped = await daemon.exit;
  expect(stopped, daemon.output().slice(-2000)).toEqual({ code: 0, signal: null });
  expect(daemon.logLines().filter((l) => String(l.msg).startsWith('role of'))).toEqual([]);

  await standby.query('SELECT pg_promote(true, 60)');
  daemon = await spawnDaemon(['--config', config]);
  const change = await daemon.waitForLog(/^role of replica changed since pgvigil last ran: standby -> primary \(timeline 2\)/, WAIT_MS);
  expect(change).toMatchObject({ level: 40, target: 'replica', from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: true });
  await waitUntil(() => receiver.received.some((r) => r.kind === 'change'), WAIT_MS, 'the failover sent as a change event');
  expect(receiver.received.filter((r) => r.kind === 'change')).toEqual([expect.objectContaining({
    target: 'replica', summary: 'replica promoted to primary (timeline 2) in cluster shop since pgvigil last ran',
    details: { cluster: 'shop', from_role: 'standby', to_role: 'primary', timeline_id: 2, since_last_run: true },
  })]);

  // Said once: a third start finds the primary it stored.
  await waitUntil(async () => (await inRecoveryGauge()) === '0', WAIT_MS, 'the promoted server polled as a primary');
  daemon.child.kill('SIGTERM');
  await daemon.exit;
  daemon = await spawnDaemon(['--config', config]);
  await daemon.waitForLog(/^connected to replica/, WAIT_MS);
  expect(daemon.logLines().filter((l) => String(l.msg).startsWith('role of'))).toEqual([]);
}, 180_000);
