/**
 * Alert delivery to a real Alertmanager (Debian prometheus-alertmanager) on loopback: a firing
 * alert shows in its API, stays alive through refreshes, and its resolution ends it (the alert
 * leaves the API and Alertmanager notifies its own receiver with status "resolved").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { AlertmanagerNotifier } from '../../src/notify/alertmanager.js';
import { Outbox } from '../../src/notify/outbox.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool, toolPath } from '../helpers/tools.js';

interface AmAlert { labels: Record<string, string>; annotations: Record<string, string>; endsAt: string; status: { state: string } }
interface AmNotification { status: string; alerts: Array<{ status: string; labels: Record<string, string> }> }



describeWithTool('alertmanager', 'Alertmanager delivery', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-alertmanager-'));
  const notifications: AmNotification[] = [];
  let hook: http.Server;
  let am: ChildProcess;
  let amLog = '';
  let amUrl = '';
  let db: Db;
  let alerts: AlertStore;
  let outbox: Outbox;

  beforeAll(async () => {
    // Alertmanager's own receiver: where it sends what it concluded (firing, then resolved).
    hook = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => { body += c.toString(); });
      req.on('end', () => { notifications.push(JSON.parse(body) as AmNotification); res.end(); });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookPort = (hook.address() as AddressInfo).port;
    writeFileSync(path.join(dir, 'alertmanager.yml'), [
      'route:',
      '  receiver: pgvigil-test',
      '  group_by: [alertname]',
      '  group_wait: 0s',
      '  group_interval: 1s',
      '  repeat_interval: 1h',
      'receivers:',
      '  - name: pgvigil-test',
      '    webhook_configs:',
      `      - url: http://127.0.0.1:${hookPort}/`,
      '        send_resolved: true',
    ].join('\n'));
    const port = await freePort();
    amUrl = `http://127.0.0.1:${port}`;
    am = spawn(toolPath('alertmanager'), [
      `--config.file=${path.join(dir, 'alertmanager.yml')}`, `--storage.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=', '--log.level=warn',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    am.stderr!.on('data', (c: Buffer) => { amLog += c.toString(); });
    await waitUntil(async () => (await fetch(`${amUrl}/-/ready`)).ok, 20_000, 'Alertmanager ready').catch((err: Error) => {
      throw new Error(`${err.message}; its log: ${amLog}`);
    });

    db = openStore(path.join(dir, 'pgvigil.db'));
    const notifier = new AlertmanagerNotifier({ url: amUrl, refreshIntervalMs: 1_000, generatorUrlFor: (id) => `http://127.0.0.1:9899/api/alerts/${id}` });
    alerts = new AlertStore(db, [notifier]);
    outbox = new Outbox(db, [notifier], systemClock, silentLogger(), { pollIntervalMs: 100, refresher: alerts });
    alerts.onTransition(() => outbox.wake());
    await outbox.start();
  });

  afterAll(async () => {
    await outbox?.stop();
    db?.close();
    am?.kill('SIGTERM');
    await new Promise((resolve) => hook?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const listed = async (): Promise<AmAlert[]> => (await (await fetch(`${amUrl}/api/v2/alerts`)).json()) as AmAlert[];

  it('receives a firing alert, keeps it alive while it fires, and ends it on resolve', async () => {
    const firedMs = Date.now();
    alerts.fire({
      ruleId: 'replay-stalled', dedupKey: 'replay-stalled/standby1', severity: 'critical', target: 'standby1',
      labels: { standby: 'standby1', 'wal-receiver': 'on' }, summary: 'replay stands still on standby1 for 95 s', evidence: { eventIds: [], series: [], facts: { stalled_seconds: 95 } },
    }, firedMs);

    let active: AmAlert | undefined;
    await waitUntil(async () => (active = (await listed()).find((a) => a.labels.alertname === 'replay-stalled')) !== undefined, 20_000, 'the firing alert in Alertmanager');
    expect(active!.status.state).toBe('active');
    expect(active!.labels).toEqual({ alertname: 'replay-stalled', severity: 'critical', target: 'standby1', standby: 'standby1', wal_receiver: 'on' });
    expect(active!.annotations).toMatchObject({ summary: 'replay stands still on standby1 for 95 s', dedup_key: 'replay-stalled/standby1' });
    await waitUntil(() => notifications.some((n) => n.status === 'firing'), 20_000, 'Alertmanager notifying the firing alert');

    // Refreshed while firing: each refresh pushes endsAt (4 refreshes ahead) further out.
    const firstEnds = Date.parse(active!.endsAt);
    await waitUntil(async () => {
      const again = (await listed()).find((a) => a.labels.alertname === 'replay-stalled');
      return again !== undefined && Date.parse(again.endsAt) > firstEnds;
    }, 20_000, 'a refresh moving endsAt');

    alerts.resolve('replay-stalled/standby1', Date.now());
    await waitUntil(async () => !(await listed()).some((a) => a.labels.alertname === 'replay-stalled'), 20_000, 'the alert leaving the active list');
    await waitUntil(() => notifications.some((n) => n.status === 'resolved'), 20_000, 'Alertmanager notifying the resolution');
    expect(notifications.find((n) => n.status === 'resolved')!.alerts[0]).toMatchObject({ status: 'resolved', labels: { alertname: 'replay-stalled', target: 'standby1' } });
    expect(db.prepare('SELECT count(*) FROM outbox').pluck().get()).toBe(0);
  });
});
