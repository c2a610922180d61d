/**
 * notify.alertmanager.url as a list, delivered to two real Alertmanagers on loopback as pgvigil
 * builds it from the config: every alert reaches each of them (Alertmanager's clustering expects
 * every client to send to every member), each from its own outbox channel, so one that is down
 * does not hold up the other, and it gets the alert once it is back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { buildNotifiers } from '../../src/notify/build-notifiers.js';
import { Outbox } from '../../src/notify/outbox.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { startAlertmanager, type RunningAlertmanager } from '../helpers/alertmanager.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool } from '../helpers/tools.js';

const DELIVERY_WAIT_MS = 20_000;

describeWithTool('alertmanager', 'Alertmanager HA: every alert to each member', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-alertmanager-ha-'));
  let up: RunningAlertmanager;
  let late: RunningAlertmanager | undefined;
  let latePort: number;
  let db: Db;
  let alerts: AlertStore;
  let outbox: Outbox;

  beforeAll(async () => {
    up = await startAlertmanager(path.join(dir, 'am-up'));
    latePort = await freePort(); // the second member is down at first: nothing listens there yet
    const configFile = path.join(dir, 'pgvigil.yaml');
    writeFileSync(configFile, `notify:\n  alertmanager:\n    url: ["${up.url}", "http://127.0.0.1:${latePort}"]\n`);
    const notifiers = buildNotifiers(loadConfig({ file: configFile, env: {} }));
    expect(notifiers.map((n) => n.channel)).toEqual([`alertmanager:${new URL(up.url).host}`, `alertmanager:127.0.0.1:${latePort}`]);
    db = openStore(path.join(dir, 'pgvigil.db'));
    alerts = new AlertStore(db, notifiers);
    // A short backoff, so the member that comes back is retried within the test.
    outbox = new Outbox(db, notifiers, systemClock, silentLogger(), { pollIntervalMs: 100, refresher: alerts, backoff: { baseMs: 500, maxMs: 2_000 } });
    alerts.onTransition(() => outbox.wake());
    await outbox.start();
  });

  afterAll(async () => {
    await outbox?.stop();
    db?.close();
    await Promise.all([up?.stop(), late?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  const listsAlert = async (am: RunningAlertmanager) => (await am.listed()).some((a) => a.labels.alertname === 'xmin-horizon-held' && a.status.state === 'active');

  it('delivers to the member that is up while the other is down, and to the other once it is back', async () => {
    alerts.fire({
      ruleId: 'xmin-horizon-held', dedupKey: 'xmin-horizon-held/db1', severity: 'warning', target: 'db1', labels: { kind: 'backend' },
      summary: 'xmin horizon is 6,000,000 XIDs old', evidence: { eventIds: [], series: [], facts: {} },
    }, Date.now());
    await waitUntil(() => listsAlert(up), DELIVERY_WAIT_MS, 'the alert in the Alertmanager that is up');
    const failing = outbox.stats().find((s) => s.channel === `alertmanager:127.0.0.1:${latePort}`);
    expect(failing?.queueDepth).toBe(1);
    expect(failing?.failures.network).toBeGreaterThan(0);

    late = await startAlertmanager(path.join(dir, 'am-late'), latePort);
    await waitUntil(() => listsAlert(late!), DELIVERY_WAIT_MS, 'the alert in the Alertmanager that came back');
    await waitUntil(() => up.notifications.some((n) => n.status === 'firing') && late!.notifications.some((n) => n.status === 'firing'),
      DELIVERY_WAIT_MS, 'both Alertmanagers notifying their receivers');

    alerts.resolve('xmin-horizon-held/db1', Date.now());
    for (const am of [up, late]) {
      await waitUntil(async () => !(await listsAlert(am)), DELIVERY_WAIT_MS, `the alert resolved in ${am.url}`);
    }
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
  });
});
