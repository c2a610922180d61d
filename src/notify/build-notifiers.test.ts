import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load-config.js';
import type { Alert } from '../domain/index.js';
import { AlertmanagerNotifier, routingSeverity } from './alertmanager.js';
import { buildNotifiers } from './build-notifiers.js';
import type { ChangeEvent, IncidentView, Notification, Notifier } from './notifier.js';
import { PagerDutyNotifier } from './pagerduty.js';
import { SIGNATURE_HEADER, WebhookNotifier } from './webhook.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);
const ROUTING_KEY = 'R0UT1NGKEY0123456789abcdef012345';

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-notifiers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Notifiers from YAML through the real loader, as `pgvigil run` builds them. */
function notifiersFrom(name: string, yaml: string): Notifier[] {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return buildNotifiers(loadConfig({ file, env: {} }));
}

function alertOn(target: string): Alert {
  return {
    id: 7, ruleId: 'deadlocks', dedupKey: `deadlocks/${target}`, severity: 'warning', state: 'firing', target, labels: { database: 'shop' },
    summary: `2 deadlocks on ${target}`, evidence: { eventIds: [1], series: [], facts: { deadlocks: 2 } }, startedMs: T0, updatedMs: T0, resolvedMs: null,
  };
}

function alertNotification(target: string): Notification {
  const alert = alertOn(target);
  return { kind: 'alert', alert, transition: { ...alert, alertId: alert.id, to: 'firing', tsMs: T0 } };
}

function incidentOn(target: string): Notification {
  const alert = alertOn(target);
  const incident: IncidentView = {
    dedupKey: `incident/${target}`, ruleId: alert.ruleId, target, state: 'firing', startedMs: T0, severity: 'warning',
    members: [alert], cause: { ...alert, alertId: alert.id, to: 'firing', tsMs: T0 },
  };
  return { kind: 'incident', incident };
}

const change: Notification = { kind: 'change', change: { target: 'db1', summary: 'REPACK started', tsMs: T0, details: { table: 'orders' } } satisfies ChangeEvent };

describe('buildNotifiers', () => {
  it('builds no notifier when the config has no notify section, or an empty one', () => {
    expect(buildNotifiers(loadConfig({ env: {} }))).toEqual([]);
    expect(notifiersFrom('empty.yaml', 'notify:\n  pagerduty: null\n  alertmanager: null\n  webhooks: []\n')).toEqual([]);
  });

  it.each([
    ['pagerduty', `pagerduty: { routing_key: ${ROUTING_KEY} }`, [[PagerDutyNotifier, 'pagerduty']]],
    ['alertmanager', 'alertmanager: { url: "http://127.0.0.1:9093" }', [[AlertmanagerNotifier, 'alertmanager']]],
    ['an Alertmanager cluster', 'alertmanager: { url: ["http://am1:9093", "http://am2:9093/", "http://am2:9094/proxied"] }',
      [[AlertmanagerNotifier, 'alertmanager:am1:9093'], [AlertmanagerNotifier, 'alertmanager:am2:9093'], [AlertmanagerNotifier, 'alertmanager:am2:9094/proxied']]],
    ['one webhook', 'webhooks: [{ url: "http://127.0.0.1:1/a" }]', [[WebhookNotifier, 'webhook']]],
    ['three webhooks', 'webhooks: [{ url: "http://127.0.0.1:1/a" }, { url: "http://127.0.0.1:1/b" }, { url: "http://127.0.0.1:1/c" }]',
      [[WebhookNotifier, 'webhook'], [WebhookNotifier, 'webhook-2'], [WebhookNotifier, 'webhook-3']]],
    ['named webhooks', 'webhooks: [{ url: "http://127.0.0.1:1/a", name: chatops }, { url: "http://127.0.0.1:1/b" }]',
      [[WebhookNotifier, 'webhook:chatops'], [WebhookNotifier, 'webhook-2']]],
  ] as const)('builds only what %s asks for, on its own channel', (name, section, expected) => {
    const notifiers = notifiersFrom(`${name.replace(/ /g, '-')}.yaml`, `notify:\n  ${section}\n`);
    expect(notifiers.map((n) => [n.constructor, n.channel])).toEqual(expected);
  });

  it('holds a new incident\'s first PagerDuty page for group_wait_ms, 10 s unless configured', () => {
    const waitOf = (name: string, section: string): number | undefined => notifiersFrom(name, `notify:\n  pagerduty: { routing_key: ${ROUTING_KEY}${section} }\n`)[0]?.groupWaitMs;
    expect(waitOf('pd-default.yaml', '')).toBe(10_000);
    expect(waitOf('pd-no-wait.yaml', ', group_wait_ms: 0')).toBe(0);
  });

  it('gives each channel its min_severity: PagerDuty error, Alertmanager and webhooks warning, unless configured', () => {
    const minOf = (name: string, yaml: string) => notifiersFrom(name, yaml).map((n) => [n.channel, n.minSeverity]);
    const channels = `pagerduty: { routing_key: ${ROUTING_KEY} }\n  alertmanager: { url: "http://am:9093" }\n  webhooks: [{ url: "http://hook/a" }]`;
    expect(minOf('sev-default.yaml', `notify:\n  ${channels}\n`)).toEqual([['pagerduty', 'error'], ['alertmanager', 'warning'], ['webhook', 'warning']]);
    const configured = `notify:\n  pagerduty: { routing_key: ${ROUTING_KEY}, min_severity: critical }\n  alertmanager: { url: ["http://am1:9093", "http://am2:9093"], min_severity: info }\n` +
      '  webhooks: [{ url: "http://hook/a", name: chat, min_severity: error }]\n';
    expect(minOf('sev-set.yaml', configured)).toEqual([
      ['pagerduty', 'critical'], ['alertmanager:am1:9093', 'info'], ['alertmanager:am2:9093', 'info'], ['webhook:chat', 'error'],
    ]);
  });

  it('gives each channel its own min_severity_overrides', () => {
    const override = (min: string) => `min_severity_overrides: [{ rule: error-storm, min_severity: ${min} }]`;
    const yaml = `notify:\n  pagerduty: { routing_key: ${ROUTING_KEY}, ${override('critical')} }\n  alertmanager: { url: "http://am:9093", ${override('info')} }\n` +
      `  webhooks: [{ url: "http://hook/a" }, { url: "http://hook/b", ${override('error')} }]\n`;
    expect(notifiersFrom('sev-overrides.yaml', yaml).map((n) => [n.channel, n.minSeverityOverrides.map((o) => o.minSeverity)])).toEqual([
      ['pagerduty', ['critical']], ['alertmanager', ['info']], ['webhook', []], ['webhook-2', ['error']],
    ]);
  });

  it('takes the PagerDuty routing key from the environment when the file gives none', () => {
    const file = join(dir, 'pd-env.yaml');
    writeFileSync(file, 'notify:\n  pagerduty: {}\n');
    const [fromEnv] = buildNotifiers(loadConfig({ file, env: { PGVIGIL_PAGERDUTY_ROUTING_KEY: ROUTING_KEY } }));
    expect(fromEnv?.rateLimit).toEqual(new PagerDutyNotifier({ routingKey: ROUTING_KEY }).rateLimit);
    expect(fromEnv?.rateLimit).not.toEqual(new PagerDutyNotifier({ routingKey: `${ROUTING_KEY}x` }).rateLimit);
  });
});

// Receivers on 127.0.0.1 only: each notifier's send() shows where its settings went.
describe('buildNotifiers: every receiver gets its own settings', () => {
  const received: Array<{ path: string; body: string; signature: string | undefined }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '';
      received.push({ path, body: Buffer.concat(chunks).toString('utf8'), signature: req.headers[SIGNATURE_HEADER] as string | undefined });
      res.writeHead(path.startsWith('/pd/') ? 202 : 200).end();
    });
  });
  let notifiers: Notifier[] = [];

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const keyFile = join(dir, 'routing-key');
    writeFileSync(keyFile, `${ROUTING_KEY}\n`);
    notifiers = notifiersFrom('all.yaml', [
      'labels: { env: prod }',
      'external_url: https://pgvigil.example.net/',
      'targets:',
      '  - { name: db1, cluster: shop, dsn: "postgresql://pgvigil@db1.example.net/postgres" }',
      '  - { name: db2-5432, dsn: "postgresql://pgvigil@db2:5432/postgres" }',
      'notify:',
      '  pagerduty:',
      `    routing_key_file: ${keyFile}`,
      `    events_url: ${base}/pd/enqueue`,
      `    change_url: ${base}/pd/change`,
      `  alertmanager: { url: "${base}/am" }`,
      '  webhooks:',
      `    - { url: "${base}/hook-a", hmac_secret: secret-a }`,
      `    - { url: "${base}/hook-b" }`,
    ].join('\n'));
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Formats, sends, and returns what the receiver got. */
  async function deliver(channel: string, notification: Notification) {
    const notifier = notifiers.find((n) => n.channel === channel)!;
    const out = notifier.format(notification)!;
    expect(await notifier.send(out.payload, T0)).toMatchObject({ outcome: 'accepted' });
    const last = received.at(-1)!;
    return { ...last, json: JSON.parse(last.body) as Record<string, unknown> };
  }

  it('builds them in config order', () => {
    expect(notifiers.map((n) => n.channel)).toEqual(['pagerduty', 'alertmanager', 'webhook', 'webhook-2']);
  });

  it('PagerDuty: the routing key from its file, the events and change URLs, each target\'s name and host as source, its cluster as group, links back', async () => {
    const db1 = await deliver('pagerduty', incidentOn('db1'));
    expect(db1.path).toBe('/pd/enqueue');
    expect(db1.json).toMatchObject({
      routing_key: ROUTING_KEY, event_action: 'trigger', payload: { source: 'db1 (db1.example.net:5432)', group: 'shop', custom_details: { env: 'prod' } },
      links: [{ href: expect.stringMatching(/^https:\/\/pgvigil\.example\.net\/api\/alerts\/\d+$/) }],
    });
    // A name made from the address says it once.
    const db2 = await deliver('pagerduty', incidentOn('db2-5432'));
    expect(db2.json).toMatchObject({ routing_key: ROUTING_KEY, payload: { source: 'db2:5432' } });
    expect(db2.json.payload).not.toHaveProperty('group');
    const changed = await deliver('pagerduty', change);
    expect(changed.path).toBe('/pd/change');
    expect(changed.json).toMatchObject({ routing_key: ROUTING_KEY, payload: { summary: 'REPACK started' } });
  });

  it('Alertmanager: its URL, with the API path added', async () => {
    const sent = await deliver('alertmanager', alertNotification('db1'));
    expect(sent.path).toBe('/am/api/v2/alerts');
    const [alert] = sent.json as unknown as Array<{ labels: Record<string, string>; generatorURL: string }>;
    expect(alert!.labels).toMatchObject({ env: 'prod', instance: 'db1.example.net:5432', cluster: 'shop', target: 'db1', severity: 'warning', pgvigil_severity: 'warning' });
    // Routing trees know critical, warning and info: pgvigil's error pages as critical.
    expect(routingSeverity('error')).toBe('critical');
    expect(['critical', 'warning', 'info'].map((s) => routingSeverity(s as 'critical'))).toEqual(['critical', 'warning', 'info']);
    expect(alert!.generatorURL).toMatch(/^https:\/\/pgvigil\.example\.net\/api\/alerts\/\d+$/);
    expect(sent.body).not.toContain(ROUTING_KEY);
  });

  it('webhooks: each its own URL, signed only with its own secret', async () => {
    const a = await deliver('webhook', change);
    expect(a.path).toBe('/hook-a');
    expect(a.signature).toBe(`sha256=${createHmac('sha256', 'secret-a').update(a.body).digest('hex')}`);
    const alert = await deliver('webhook', alertNotification('db1'));
    expect(alert.json).toMatchObject({ target: 'db1', labels: { env: 'prod', instance: 'db1.example.net:5432', cluster: 'shop' } });
    expect(alert.json.url).toMatch(/^https:\/\/pgvigil\.example\.net\/api\/alerts\/\d+$/);
    const b = await deliver('webhook-2', change);
    expect(b.path).toBe('/hook-b');
    expect(b.signature).toBeUndefined();
    expect(b.body).not.toContain(ROUTING_KEY);
  });
});
