/**
 * Incident: PagerDuty was given a wrong routing key and answered 400 to every page; the outbox
 * kept each as 'rejected' and nobody knew until the night an alert did not page. Now the
 * rejection raises pgvigil's own alert, notifications-rejected: on the page (/api/alerts), in
 * /metrics, in `report`, and through the other channel (never through the one that rejects);
 * it resolves when that channel next accepts a delivery.
 *
 * The app as `pgvigil run` builds it (buildApp), with two real local receivers: "pager" answers
 * 400 until it is fixed, "team" accepts everything. No PostgreSQL is needed: the alert that is
 * rejected is filed in the store as the rules engine files one; the server is unreachable.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { buildNotifiers } from '../../src/notify/build-notifiers.js';
import { storedIncidentReport } from '../../src/report/stored-incident-report.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { StoreQueries } from '../../src/store/queries.js';
import { freePort, waitUntil } from '../../src/demo/processes.js';

interface Received {
  status: string;
  rule_id: string;
  dedup_key: string;
  labels: Record<string, string>;
  summary: string;
}

/** A webhook receiver answering `status()` and keeping every body it was sent. */
async function receiver(status: () => number) {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (text: string) => { body += text; });
    req.on('end', () => {
      received.push(JSON.parse(body) as Received);
      const code = status();
      res.writeHead(code, { 'content-type': 'application/json' }).end(code === 400 ? '{"status":"invalid event","errors":["Invalid routing key"]}' : '{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` };
}

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-rejected-'));
let pagerStatus = 400;
let pager: Awaited<ReturnType<typeof receiver>>;
let team: Awaited<ReturnType<typeof receiver>>;
let app: App;

beforeAll(async () => {
  pager = await receiver(() => pagerStatus);
  team = await receiver(() => 200);
});

afterAll(async () => {
  await app?.stop();
  for (const { server } of [pager, team]) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  rmSync(dir, { recursive: true, force: true });
});

it('a receiver that rejects raises notifications-rejected, shown everywhere and sent through the other channel, resolved when it accepts again', async () => {
  const file = join(dir, 'pgvigil.yaml');
  writeFileSync(file, stringify({
    name: 'db1',
    dsn: 'postgresql://pgvigil@127.0.0.1:1/postgres',
    log: join(dir, 'postgresql.log'),
    db: join(dir, 'pgvigil.db'),
    listen: `127.0.0.1:${await freePort()}`,
    notify: { webhooks: [{ name: 'pager', url: pager.url, min_severity: 'info' }, { name: 'team', url: team.url, min_severity: 'info' }] },
  }));
  writeFileSync(join(dir, 'postgresql.log'), '');
  const config = loadConfig({ file, env: {} });
  app = buildApp(config, { clock: systemClock, log: silentLogger() });
  await app.start();
  // What the rules engine does when a rule fires: an alert and its outbox rows, in one transaction.
  const rules = new AlertStore(app.db, buildNotifiers(config));
  const fire = (table: string) => rules.fire({
    ruleId: 'vacuum-held-back', dedupKey: `vacuum-held-back/db1/${table}`, severity: 'warning', target: 'db1', labels: { table },
    summary: `vacuum held back on ${table}`, evidence: { eventIds: [], series: [], facts: {} },
  }, Date.now());

  fire('orders');
  const rejectedAlert = () => team.received.find((r) => r.rule_id === 'notifications-rejected' && r.status === 'firing');
  await waitUntil(() => rejectedAlert() !== undefined, 10_000, 'the team channel told of the rejection');
  expect(rejectedAlert()).toMatchObject({ dedup_key: 'notifications-rejected/webhook:pager', labels: { channel: 'webhook:pager' } });
  expect(rejectedAlert()!.summary).toMatch(/^notifications to webhook:pager are rejected \(1 kept, not retried\): HTTP 400: .*Invalid routing key/);
  // Never through the channel that rejects: it would reject that too.
  expect(pager.received.map((r) => r.rule_id)).toEqual(['vacuum-held-back']);

  const api = await fetch(`${app.url}/api/alerts`).then((r) => r.json() as Promise<unknown>);
  expect(JSON.stringify(api)).toContain('"rule_id":"notifications-rejected"');
  const metrics = await fetch(`${app.url}/metrics`).then((r) => r.text());
  expect(metrics).toMatch(/^pgvigil_alert_firing\{.*rule="notifications-rejected".*\} 1$/m);
  const report = storedIncidentReport(new StoreQueries(app.db), { fromMs: Date.now() - 60_000, toMs: Date.now() + 1_000, target: null });
  expect(JSON.stringify(report)).toContain('notifications to webhook:pager are rejected');

  // The routing key is fixed: the next delivery to the channel is accepted and the alert resolves.
  pagerStatus = 202;
  fire('lines');
  const resolved = () => team.received.find((r) => r.rule_id === 'notifications-rejected' && r.status === 'resolved');
  await waitUntil(() => resolved() !== undefined, 10_000, 'the team channel told of the resolve');
  expect(pager.received.map((r) => `${r.rule_id}:${r.status}`)).toEqual(['vacuum-held-back:firing', 'vacuum-held-back:firing']);
  const metricsAfter = await fetch(`${app.url}/metrics`).then((r) => r.text());
  expect(metricsAfter).not.toMatch(/^pgvigil_alert_firing\{.*rule="notifications-rejected".*\} 1$/m);
});
