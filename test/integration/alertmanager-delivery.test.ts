/**
 * Alert delivery to a real Alertmanager (Debian prometheus-alertmanager) on loopback: a firing
 * alert shows in its API, stays alive through refreshes, and its resolution ends it (the alert
 * leaves the API and Alertmanager notifies its own receiver with status "resolved").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { AlertmanagerNotifier } from '../../src/notify/alertmanager.js';
import { notificationIdentity } from '../../src/notify/identity.js';
import { Outbox } from '../../src/notify/outbox.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { startAlertmanager, type AmAlert, type RunningAlertmanager } from '../helpers/alertmanager.js';
import { waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool } from '../helpers/tools.js';

describeWithTool('alertmanager', 'Alertmanager delivery', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-alertmanager-'));
  let am: RunningAlertmanager;
  let db: Db;
  let alerts: AlertStore;
  let outbox: Outbox;

  beforeAll(async () => {
    am = await startAlertmanager(dir);
    db = openStore(path.join(dir, 'pgvigil.db'));
    const notifier = new AlertmanagerNotifier({ url: am.url, refreshIntervalMs: 1_000, identity: notificationIdentity({
      targets: [{ name: 'standby1', address: 'standby1.example.net:5432', cluster: 'shop', dsn: null, password: null, log: null }],
      labels: { env: 'prod', region: 'eu-west' }, externalUrl: 'http://127.0.0.1:9899',
    }) });
    alerts = new AlertStore(db, [notifier]);
    outbox = new Outbox(db, [notifier], systemClock, silentLogger(), { pollIntervalMs: 100, refresher: alerts });
    alerts.onTransition(() => outbox.wake());
    await outbox.start();
  });

  afterAll(async () => {
    await outbox?.stop();
    db?.close();
    await am?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const listed = (): Promise<AmAlert[]> => am.listed();

  it('receives a firing alert, keeps it alive while it fires, and ends it on resolve', async () => {
    const firedMs = Date.now();
    alerts.fire({
      ruleId: 'replay-stalled', dedupKey: 'replay-stalled/standby1', severity: 'critical', target: 'standby1',
      labels: { standby: 'standby1', 'wal-receiver': 'on' }, summary: 'replay stands still on standby1 for 95 s', evidence: { eventIds: [], series: [], facts: { stalled_seconds: 95 } },
    }, firedMs);

    let active: AmAlert | undefined;
    await waitUntil(async () => (active = (await listed()).find((a) => a.labels.alertname === 'replay-stalled')) !== undefined, 20_000, 'the firing alert in Alertmanager');
    expect(active!.status.state).toBe('active');
    expect(active!.labels).toEqual({
      alertname: 'replay-stalled', severity: 'critical', pgvigil_severity: 'critical', target: 'standby1', standby: 'standby1', wal_receiver: 'on',
      env: 'prod', region: 'eu-west', instance: 'standby1.example.net:5432', cluster: 'shop',
    });
    expect(active!.annotations).toMatchObject({ summary: 'replay stands still on standby1 for 95 s', dedup_key: 'replay-stalled/standby1' });
    expect(active!.generatorURL).toMatch(/^http:\/\/127\.0\.0\.1:9899\/api\/alerts\/\d+$/);
    await waitUntil(() => am.notifications.some((n) => n.status === 'firing'), 20_000, 'Alertmanager notifying the firing alert');

    // Refreshed while firing: each refresh pushes endsAt (4 refreshes ahead) further out.
    const firstEnds = Date.parse(active!.endsAt);
    await waitUntil(async () => {
      const again = (await listed()).find((a) => a.labels.alertname === 'replay-stalled');
      return again !== undefined && Date.parse(again.endsAt) > firstEnds;
    }, 20_000, 'a refresh moving endsAt');

    alerts.resolve('replay-stalled/standby1', Date.now());
    await waitUntil(async () => !(await listed()).some((a) => a.labels.alertname === 'replay-stalled'), 20_000, 'the alert leaving the active list');
    await waitUntil(() => am.notifications.some((n) => n.status === 'resolved'), 20_000, 'Alertmanager notifying the resolution');
    expect(am.notifications.find((n) => n.status === 'resolved')!.alerts[0]).toMatchObject({ status: 'resolved', labels: { alertname: 'replay-stalled', target: 'standby1' } });
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
  });

  it('takes a transition sent twice (a resend after pgvigil was killed past the 2xx) as one alert, notified once', async () => {
    const notifier = new AlertmanagerNotifier({ url: am.url, refreshIntervalMs: 1_000 });
    const alert = {
      id: 41, ruleId: 'error-storm', dedupKey: 'error-storm/primary', severity: 'warning' as const, state: 'firing' as const, target: 'primary', labels: {},
      summary: '25 statements cancelled on primary', evidence: { eventIds: [], series: [], facts: {} }, startedMs: Date.now(), updatedMs: Date.now(), resolvedMs: null,
    };
    const notificationsOf = (status: string) => am.notifications.filter((n) => n.status === status && n.alerts.some((a) => a.labels.alertname === 'error-storm')).length;
    const trigger = notifier.format({ kind: 'alert', alert, transition: { ...alert, alertId: 41, to: 'firing', tsMs: alert.startedMs } })!;
    for (let i = 0; i < 2; i++) expect(await notifier.send(trigger.payload, Date.now())).toMatchObject({ outcome: 'accepted' });
    await waitUntil(() => notificationsOf('firing') > 0, 20_000, 'Alertmanager notifying the firing alert');
    expect((await listed()).filter((a) => a.labels.alertname === 'error-storm')).toHaveLength(1);

    const resolve = notifier.format({ kind: 'alert', alert, transition: { ...alert, alertId: 41, to: 'resolved', tsMs: Date.now() } })!;
    for (let i = 0; i < 2; i++) expect(await notifier.send(resolve.payload, Date.now())).toMatchObject({ outcome: 'accepted' });
    await waitUntil(() => notificationsOf('resolved') > 0, 20_000, 'Alertmanager notifying the resolution');
    // Several group intervals (1 s) later, still one notification of each.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect([notificationsOf('firing'), notificationsOf('resolved')]).toEqual([1, 1]);
  });
});
