/**
 * Alert delivery to PagerDuty's Events API v2, against a local receiver that checks the schema
 * and keeps incidents as PagerDuty does: delivery, retries on 500/429, a 400 kept as rejected,
 * an alert storm paged once, change events, and a resolve that survives a crash of pgvigil while
 * the receiver is down.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import type { FireInput } from '../../src/store/alert-store.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { buildHttpApp } from '../../src/http/build-http-app.js';
import { Metrics } from '../../src/http/metrics.js';
import { silentLogger } from '../../src/lib/logger.js';
import { notificationIdentity } from '../../src/notify/identity.js';
import { Outbox } from '../../src/notify/outbox.js';
import { PagerDutyNotifier } from '../../src/notify/pagerduty.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreQueries } from '../../src/store/queries.js';
import { killChild, startOutboxChild } from '../helpers/outbox-child.js';
import { PagerDutyReceiver } from '../helpers/pagerduty-receiver.js';
import { waitUntil } from '../helpers/pg-processes.js';

const ROUTING_KEY = 'R0ut1ngKeyR0ut1ngKeyR0ut1ngKey01';
const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-pagerduty-'));
const receiver = new PagerDutyReceiver(ROUTING_KEY);

beforeAll(() => receiver.start());
afterAll(async () => {
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
});

function vacuumAlert(table: string): FireInput {
  return {
    ruleId: 'vacuum-held-back', dedupKey: `vacuum-held-back/db1/shop/public.${table}`, severity: 'warning', target: 'db1',
    labels: { database: 'shop', table: `public.${table}` }, summary: `dead tuples not removable on shop.public.${table}`,
    evidence: { eventIds: [], series: [{ name: 'pg_stat_user_tables_n_dead_tup', labels: { relname: table }, value: 120_000, tsMs: 0 }], facts: { oldest_xmin_age_xids: 48_211 } },
  };
}

interface Rig { db: Db; alerts: AlertStore; outbox: Outbox; stop(): Promise<void> }

async function rig(name: string, notifiers: PagerDutyNotifier[]): Promise<Rig> {
  const db = openStore(path.join(dir, `${name}.db`));
  const alerts = new AlertStore(db, notifiers);
  const outbox = new Outbox(db, notifiers, systemClock, silentLogger(), { pollIntervalMs: 50, backoff: { baseMs: 100, maxMs: 400 } });
  alerts.onTransition(() => outbox.wake());
  await outbox.start();
  return { db, alerts, outbox, stop: async () => { await outbox.stop(); db.close(); } };
}

/** Takes warnings (vacuum-held-back's severity) unless `options` says otherwise; PagerDuty's own default is error. */
const pd = (options: Partial<ConstructorParameters<typeof PagerDutyNotifier>[0]> = {}) =>
  new PagerDutyNotifier({
    routingKey: ROUTING_KEY, eventsUrl: receiver.eventsUrl, changeUrl: receiver.changeUrl, groupWaitMs: 0, requestTimeoutMs: 2_000,
    minSeverity: 'warning', ...options,
  });

const pendingRows = (db: Db) => db.prepare(`SELECT count(*) FROM outbox WHERE state = 'pending'`).pluck().get() as number;

describe('PagerDuty delivery', () => {
  let current: Rig | null = null;
  afterEach(async () => {
    await current?.stop();
    current = null;
  });

  it('triggers an incident on firing and resolves it on resolve, under one dedup key', async () => {
    const identity = notificationIdentity({
      targets: [{ name: 'db1', address: 'db1.db.internal:5432', cluster: 'shop', dsn: null, password: null, log: null }],
      labels: { env: 'prod' }, externalUrl: 'https://pgvigil.db.internal',
    });
    current = await rig('deliver', [pd({ identity })]);
    const { alerts, db } = current;
    const before = receiver.received.length;
    alerts.fire(vacuumAlert('orders'), Date.now());
    await receiver.waitFor(() => receiver.received.length > before && pendingRows(db) === 0, 10_000, 'trigger delivered');
    const trigger = receiver.received[before]!;
    expect(trigger).toMatchObject({ status: 202, errors: [] });
    expect(trigger.body).toMatchObject({
      event_action: 'trigger',
      payload: { source: 'db1 (db1.db.internal:5432)', severity: 'warning', class: 'vacuum-held-back', component: 'shop', group: 'shop', custom_details: { env: 'prod', firing: 1 } },
    });
    const key = trigger.body.dedup_key as string;
    expect(receiver.openIncidents().map((i) => i.dedupKey)).toContain(key);

    alerts.resolve(vacuumAlert('orders').dedupKey, Date.now());
    await receiver.waitFor(() => !receiver.openIncidents().some((i) => i.dedupKey === key) && pendingRows(db) === 0, 10_000, 'incident resolved');
    expect(receiver.received.at(-1)!.body).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: key });
  });

  it('retries after 500 and 429 until PagerDuty accepts, without a second page', async () => {
    current = await rig('retry', [pd()]);
    const { alerts, db, outbox } = current;
    const pagesBefore = receiver.pages;
    receiver.failNext(500);
    receiver.failNext(429);
    const before = receiver.received.length;
    alerts.fire(vacuumAlert('lines'), Date.now());
    await receiver.waitFor(() => pendingRows(db) === 0, 10_000, 'delivered after retries');
    expect(receiver.received.slice(before).map((r) => r.status)).toEqual([500, 429, 202]);
    expect(receiver.pages).toBe(pagesBefore + 1);
    expect(outbox.stats()[0]!.failures).toEqual({ http_5xx: 1, http_429: 1 });
  });

  it('keeps an event PagerDuty refuses (400) as rejected, visible in the API and the metrics, and does not retry it', async () => {
    const wrongKey = new PagerDutyNotifier({ channel: 'pagerduty_wrong_key', routingKey: 'not-the-key', eventsUrl: receiver.eventsUrl, groupWaitMs: 0, minSeverity: 'warning' });
    current = await rig('rejected', [wrongKey]);
    const { alerts, db, outbox } = current;
    const before = receiver.received.length;
    const { alert } = alerts.fire(vacuumAlert('items'), Date.now());
    await receiver.waitFor(() => receiver.received.length > before, 10_000, 'request received');
    await outbox.deliverDue();
    expect(receiver.received.slice(before).map((r) => r.status)).toEqual([400]);
    expect(db.prepare('SELECT state, attempts FROM outbox').all()).toEqual([{ state: 'rejected', attempts: 1 }]);

    const metrics = new Metrics({ clock: systemClock, sources: { notifiers: () => outbox.stats() } });
    const app = await buildHttpApp({ metrics, queries: new StoreQueries(db), readiness: {}, clock: systemClock, listenHost: '127.0.0.1', token: null });
    const detail = (await app.inject(`/api/alerts/${alert.id}`)).json() as { notifications: Array<Record<string, unknown>> };
    expect(detail.notifications).toEqual([expect.objectContaining({ channel: 'pagerduty_wrong_key', state: 'rejected', attempts: 1, last_error: expect.stringMatching(/^HTTP 400: .*routing_key/) })]);
    const exposition = (await app.inject('/metrics')).body;
    expect(exposition).toContain('pgvigil_notifier_rejected{channel="pagerduty_wrong_key"} 1\n');
    expect(exposition).toContain('pgvigil_notifier_failures_total{channel="pagerduty_wrong_key",reason="rejected"} 1\n');
    await app.close();
  });

  it('pages once for an alert storm of one rule on one target, saying how many tables', async () => {
    current = await rig('storm', [pd({ groupWaitMs: 500 })]);
    const { alerts, db } = current;
    const pagesBefore = receiver.pages;
    const before = receiver.received.length;
    const tables = Array.from({ length: 12 }, (_, i) => `t${i}`);
    for (const table of tables) alerts.fire(vacuumAlert(table), Date.now());
    await receiver.waitFor(() => receiver.received.length > before && pendingRows(db) === 0, 10_000, 'storm delivered');
    expect(receiver.pages).toBe(pagesBefore + 1);
    const incident = receiver.incidents.at(-1)!;
    expect(incident.summary).toMatch(/^vacuum-held-back on db1: 12 tables: /);
    expect(incident.triggers).toBe(1);

    for (const table of tables.slice(0, 11)) alerts.resolve(vacuumAlert(table).dedupKey, Date.now());
    await receiver.waitFor(() => pendingRows(db) === 0 && incident.summary === vacuumAlert('t11').summary, 10_000, 'incident down to one table');
    expect(incident.open).toBe(true);
    alerts.resolve(vacuumAlert('t11').dedupKey, Date.now());
    await receiver.waitFor(() => !incident.open, 10_000, 'incident resolved');
    expect(receiver.pages).toBe(pagesBefore + 1);
  });

  it('by default pages from error up: an info and a warning stay off PagerDuty until one escalates, whose resolve then closes the page', async () => {
    current = await rig('min-severity', [pd({ minSeverity: undefined })]);
    const { alerts, db, outbox } = current;
    const pagesBefore = receiver.pages;
    const before = receiver.received.length;
    const conflicts: FireInput = { ...vacuumAlert('orders'), ruleId: 'recovery-conflict-cancellations', dedupKey: 'recovery-conflict-cancellations/db1/snapshot', severity: 'info' };
    alerts.fire(conflicts, Date.now());
    alerts.fire(vacuumAlert('lines'), Date.now());
    alerts.resolve(conflicts.dedupKey, Date.now());
    await outbox.deliverDue();
    expect(receiver.received.length).toBe(before);
    expect(pendingRows(db)).toBe(0);

    alerts.fire({ ...vacuumAlert('lines'), severity: 'error' }, Date.now());
    await receiver.waitFor(() => receiver.pages === pagesBefore + 1 && pendingRows(db) === 0, 10_000, 'page on escalation');
    alerts.fire(vacuumAlert('lines'), Date.now());
    alerts.resolve(vacuumAlert('lines').dedupKey, Date.now());
    await receiver.waitFor(() => !receiver.incidents.at(-1)!.open && pendingRows(db) === 0, 10_000, 'page resolved');
    expect(receiver.received.slice(before).map((r) => [r.body.event_action, (r.body.payload as { severity?: string } | undefined)?.severity])).toEqual([
      ['trigger', 'error'], ['trigger', 'warning'], ['resolve', undefined],
    ]);
    expect(receiver.pages).toBe(pagesBefore + 1);
  });

  it('sends change events to the change endpoint', async () => {
    current = await rig('change', [pd()]);
    const before = receiver.changes.length;
    current.outbox.sendChange({ target: 'db1', summary: 'REPACK (CONCURRENTLY) started on shop.public.orders', tsMs: Date.now(), details: { relation: 'public.orders', pid: 4242 } });
    await receiver.waitFor(() => receiver.changes.length > before, 10_000, 'change event');
    expect(receiver.changes.at(-1)).toMatchObject({ routing_key: ROUTING_KEY, payload: { summary: 'REPACK (CONCURRENTLY) started on shop.public.orders', source: 'db1', custom_details: { relation: 'public.orders', pid: 4242 } } });
  });
});

describe('PagerDuty delivery across a pgvigil crash', () => {
  const store = path.join(dir, 'restart.db');
  const startPgvigil = () => startOutboxChild(store, 'pagerduty', receiver.eventsUrl, ROUTING_KEY);

  it('delivers a resolve queued while PagerDuty was down, after pgvigil was killed and restarted', async () => {
    const first = await startPgvigil();
    const pagesBefore = receiver.pages;
    await first.send('fire replay-stalled/standby1');
    await receiver.waitFor(() => receiver.pages === pagesBefore + 1, 15_000, 'page');
    const key = receiver.incidents.at(-1)!.dedupKey;

    await receiver.stop();
    await first.send('resolve replay-stalled/standby1');
    const db = openStore(store, { readonly: true });
    const attempts = () => (db.prepare(`SELECT max(attempts) FROM outbox WHERE action = 'resolve'`).pluck().get() as number | null) ?? 0;
    await waitUntil(() => attempts() >= 2, 15_000, 'two failed attempts of the resolve while PagerDuty is down');
    await killChild(first.proc);

    await receiver.start();
    const second = await startPgvigil();
    const outboxRows = () => db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;
    await receiver.waitFor(() => !receiver.incidents.at(-1)!.open && outboxRows() === 0, 15_000, 'resolve after restart');
    expect(receiver.incidents.at(-1)!.dedupKey).toBe(key);
    expect(receiver.pages).toBe(pagesBefore + 1);
    db.close();
    await killChild(second.proc);
  });
});
