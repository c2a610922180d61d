import { describe, expect, it } from 'vitest';
import type { Evidence, Severity } from '../domain/index.js';
import { AlertmanagerNotifier } from '../notify/alertmanager.js';
import { PagerDutyNotifier } from '../notify/pagerduty.js';
import { WebhookNotifier } from '../notify/webhook.js';
import { AlertStore, type FireInput } from './alert-store.js';
import { openStore, type Db } from './open-store.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);
const evidence: Evidence = { eventIds: [], series: [], facts: { held_seconds: 84 } };

function input(table: string, overrides: Partial<FireInput> = {}): FireInput {
  return {
    ruleId: 'vacuum-held-back',
    dedupKey: `vacuum-held-back/db1/shop/${table}`,
    severity: 'warning',
    target: 'db1',
    labels: { database: 'shop', table },
    summary: `dead tuples pile up on shop.public.${table}`,
    evidence,
    ...overrides,
  };
}

/** Every channel takes warnings unless `routing` says otherwise (then each keeps its default). */
function setup(routing: 'every warning' | 'default min_severity' = 'every warning'): { db: Db; store: AlertStore } {
  const db = openStore(':memory:');
  const minSeverity = routing === 'every warning' ? 'warning' as const : undefined;
  const notifiers = [
    new PagerDutyNotifier({ routingKey: 'k'.repeat(32), groupWaitMs: 10_000, minSeverity }),
    new AlertmanagerNotifier({ url: 'http://127.0.0.1:9093', minSeverity }),
    new WebhookNotifier({ url: 'http://127.0.0.1:1/hook', minSeverity }),
  ];
  return { db, store: new AlertStore(db, notifiers) };
}

interface OutboxRowView { channel: string; dedup_key: string; action: string; payload: string; next_attempt_ms: number; revision: number }

function outbox(db: Db): OutboxRowView[] {
  return db.prepare('SELECT channel, dedup_key, action, payload, next_attempt_ms, revision FROM outbox ORDER BY id').all() as OutboxRowView[];
}

describe('AlertStore', () => {
  it('writes a firing alert, its transition and one outbox row per channel in one go', () => {
    const { db, store } = setup();
    const { alert, transition } = store.fire(input('orders'), T0);
    expect(alert).toMatchObject({ state: 'firing', startedMs: T0, labels: { table: 'orders' } });
    expect(transition?.to).toBe('firing');
    expect(db.prepare('SELECT to_state FROM alert_transitions').pluck().all()).toEqual(['firing']);
    const rows = outbox(db);
    expect(rows.map((r) => [r.channel, r.action])).toEqual([['pagerduty', 'trigger'], ['alertmanager', 'trigger'], ['webhook', 'trigger']]);
    // PagerDuty's first trigger of a new incident waits for the storm; the others go at once.
    expect(rows.map((r) => r.next_attempt_ms)).toEqual([T0 + 10_000, T0, T0]);
    expect(rows[0]!.payload).not.toContain('k'.repeat(32));
  });

  it('rolls the alert back when filing its notification fails', () => {
    const { db, store } = setup();
    db.exec(`CREATE TRIGGER no_outbox BEFORE INSERT ON outbox BEGIN SELECT RAISE(ABORT, 'disk full'); END`);
    expect(() => store.fire(input('orders'), T0)).toThrow(/disk full/);
    expect(db.prepare('SELECT count(*) FROM alerts').pluck().get()).toBe(0);
    expect(store.openAlerts()).toEqual([]);
  });

  it('groups alerts of one rule on one target into one incident and coalesces its pending trigger', () => {
    const { db, store } = setup();
    store.fire(input('orders'), T0);
    store.fire(input('lines'), T0 + 1_000);
    store.fire(input('items'), T0 + 2_000);
    const pd = outbox(db).filter((r) => r.channel === 'pagerduty');
    expect(pd).toHaveLength(1);
    expect(pd[0]!.revision).toBe(2);
    expect(pd[0]!.next_attempt_ms).toBe(T0 + 10_000);
    const body = (JSON.parse(pd[0]!.payload) as { body: { payload: { summary: string; custom_details: { firing: number } } } }).body;
    expect(body.payload.summary).toMatch(/^vacuum-held-back on db1: 3 tables: /);
    expect(body.payload.custom_details.firing).toBe(3);
    // Per-alert channels still hear about every alert.
    expect(outbox(db).filter((r) => r.channel === 'webhook')).toHaveLength(3);
  });

  it('resolves the incident only when its last member resolves', () => {
    const { db, store } = setup();
    store.fire(input('orders'), T0);
    store.fire(input('lines'), T0);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(db.prepare(`SELECT state FROM incidents`).pluck().all()).toEqual(['firing']);
    store.resolve(input('lines').dedupKey, T0 + 120_000);
    expect(db.prepare(`SELECT state FROM incidents`).pluck().all()).toEqual(['resolved']);
    const pd = outbox(db).filter((r) => r.channel === 'pagerduty');
    expect(pd.map((r) => r.action)).toEqual(['trigger', 'resolve']);
    // One dedup key for the whole incident: the resolve closes what the trigger opened.
    expect(new Set(pd.map((r) => r.dedup_key)).size).toBe(1);
  });

  it('resolves the incident with its last member in a store without notifiers too (analyze --rules --db)', () => {
    const db = openStore(':memory:');
    const store = new AlertStore(db, []);
    store.fire(input('orders'), T0);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(db.prepare(`SELECT state FROM incidents`).pluck().all()).toEqual(['resolved']);
  });

  it('opens a new incident with a new dedup key after the previous one resolved', () => {
    const { db, store } = setup();
    store.fire(input('orders'), T0);
    store.resolve(input('orders').dedupKey, T0 + 1);
    store.fire(input('orders'), T0 + 2);
    const keys = db.prepare('SELECT dedup_key FROM incidents ORDER BY id').pluck().all();
    expect(keys).toEqual([`pgvigil/db1/vacuum-held-back/${T0}-1`, `pgvigil/db1/vacuum-held-back/${T0 + 2}-2`]);
  });

  it('refreshes a firing alert without notifying unless its severity changes', () => {
    const { db, store } = setup();
    store.fire(input('orders'), T0);
    const before = outbox(db).length;
    const same = store.fire(input('orders', { summary: 'still piling up' }), T0 + 5_000);
    expect(same.transition).toBeNull();
    expect(same.alert.summary).toBe('still piling up');
    expect(outbox(db)).toHaveLength(before);
    const worse = store.fire(input('orders', { severity: 'critical' }), T0 + 10_000);
    expect(worse.transition?.to).toBe('firing');
    expect(db.prepare('SELECT count(*) FROM alerts').pluck().get()).toBe(1);
    const pd = JSON.parse(outbox(db).find((r) => r.channel === 'pagerduty')!.payload) as { body: { payload: { severity: string } } };
    expect(pd.body.payload.severity).toBe('critical');
  });

  it('rewrites a notification still waiting when the summary changes, and files none for one already sent', () => {
    const { db, store } = setup();
    store.fire(input('orders', { summary: 'the server is reinitializing' }), T0);
    const pending = (channel: string) => outbox(db).find((r) => r.channel === channel);
    const heldUntil = pending('pagerduty')!.next_attempt_ms;
    // The webhook's notification went out meanwhile; PagerDuty's is still held for its group wait.
    db.prepare("DELETE FROM outbox WHERE channel = 'webhook'").run();
    store.fire(input('orders', { summary: 'the server recovered' }), T0 + 2_000);
    const pd = pending('pagerduty')!;
    expect(JSON.parse(pd.payload).body.payload.summary).toContain('the server recovered');
    expect(pd).toMatchObject({ revision: 1, next_attempt_ms: heldUntil });
    expect(JSON.parse(pending('alertmanager')!.payload).alert.annotations.summary).toBe('the server recovered');
    expect(pending('webhook')).toBeUndefined();
    expect(outbox(db)).toHaveLength(2);
  });

  it('returns null when resolving a key that is not firing', () => {
    const { store } = setup();
    expect(store.resolve('nothing/here', T0)).toBeNull();
  });

  it('tells listeners about every committed change', () => {
    const { store } = setup();
    const seen: string[] = [];
    store.onTransition(({ alert, transition }) => seen.push(`${alert.state}:${transition?.to ?? 'none'}`));
    store.fire(input('orders'), T0);
    store.fire(input('orders'), T0 + 1);
    store.resolve(input('orders').dedupKey, T0 + 2);
    expect(seen).toEqual(['firing:firing', 'firing:none', 'resolved:resolved']);
  });

  it('re-files firing alerts for channels that expire them, once per pending row', () => {
    const { db, store } = setup();
    store.fire(input('orders'), T0);
    db.prepare(`DELETE FROM outbox WHERE channel = 'alertmanager'`).run();
    expect(store.enqueueRefresh(T0 + 60_000)).toBe(1);
    expect(store.enqueueRefresh(T0 + 60_001)).toBe(0);
    expect(outbox(db).filter((r) => r.channel === 'alertmanager').map((r) => r.action)).toEqual(['trigger']);
  });
});

describe('AlertStore routing by min_severity (PagerDuty from error, Alertmanager and webhooks from warning)', () => {
  const actions = (db: Db) => outbox(db).map((r) => `${r.channel} ${r.action}`);

  it('sends an info alert nowhere, not even its resolve, and stores it', () => {
    const { db, store } = setup('default min_severity');
    store.fire(input('orders', { severity: 'info' }), T0);
    store.fire(input('orders', { severity: 'info', summary: 'more of the same' }), T0 + 5_000);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(actions(db)).toEqual([]);
    expect(db.prepare('SELECT severity, state FROM alerts').all()).toEqual([{ severity: 'info', state: 'resolved' }]);
  });

  it('pages a warning nowhere but Alertmanager and webhooks', () => {
    const { db, store } = setup('default min_severity');
    store.fire(input('orders'), T0);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(actions(db)).toEqual(['alertmanager trigger', 'webhook trigger', 'alertmanager resolve', 'webhook resolve']);
  });

  it('sends the trigger when an open alert escalates past min_severity, then hears it out: de-escalation and resolve', () => {
    const { db, store } = setup('default min_severity');
    store.fire(input('orders', { severity: 'info' }), T0);
    store.fire(input('orders', { severity: 'error' }), T0 + 5_000);
    expect(actions(db)).toEqual(['pagerduty trigger', 'alertmanager trigger', 'webhook trigger']);
    db.prepare('DELETE FROM outbox').run();
    store.fire(input('orders', { severity: 'info' }), T0 + 10_000);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(actions(db)).toEqual([
      'pagerduty trigger', 'alertmanager trigger', 'webhook trigger', 'pagerduty resolve', 'alertmanager resolve', 'webhook resolve',
    ]);
  });

  it('withholds an incident until a member reaches min_severity, and a new alert under a key that was withheld starts afresh', () => {
    const { db, store } = setup('default min_severity');
    store.fire(input('orders'), T0);
    store.fire(input('lines', { severity: 'critical' }), T0 + 1_000);
    expect(outbox(db).filter((r) => r.channel === 'pagerduty').map((r) => r.action)).toEqual(['trigger']);
    store.resolve(input('orders').dedupKey, T0 + 2_000);
    store.resolve(input('lines').dedupKey, T0 + 3_000);
    expect(outbox(db).filter((r) => r.channel === 'pagerduty').map((r) => r.action)).toEqual(['trigger', 'resolve']);
    db.prepare('DELETE FROM outbox').run();
    store.fire(input('orders', { severity: 'info' }), T0 + 4_000);
    store.resolve(input('orders').dedupKey, T0 + 5_000);
    store.fire(input('orders'), T0 + 6_000);
    expect(actions(db)).toEqual(['alertmanager trigger', 'webhook trigger']);
    expect(db.prepare('SELECT count(*) FROM notify_withheld').pluck().get()).toBe(1);
  });

  it('takes an override for the alert\'s rule or target: escalation past it sends the trigger, then the channel hears it out', () => {
    const db = openStore(':memory:');
    const pagerduty = new PagerDutyNotifier({
      routingKey: 'k'.repeat(32), groupWaitMs: 0,
      minSeverityOverrides: [{ rule: 'vacuum-held-back', target: null, minSeverity: 'warning' }, { rule: null, target: 'db-reporting', minSeverity: 'critical' }],
    });
    const store = new AlertStore(db, [pagerduty]);
    const onReporting = (severity: Severity): FireInput => input('orders', { severity, target: 'db-reporting', ruleId: 'error-storm', dedupKey: 'error-storm/db-reporting' });
    store.fire(input('orders'), T0);
    store.fire(onReporting('error'), T0);
    expect(actions(db)).toEqual(['pagerduty trigger']);
    expect(outbox(db)[0]!.dedup_key).toMatch(/^pgvigil\/db1\/vacuum-held-back\//);
    const sent = () => outbox(db).map((r) => `${r.action} ${r.dedup_key.split('/').slice(1, 3).join('/')}`);
    store.fire(onReporting('critical'), T0 + 5_000);
    expect(sent()).toEqual(['trigger db1/vacuum-held-back', 'trigger db-reporting/error-storm']);
    db.prepare('DELETE FROM outbox').run();
    store.fire(onReporting('error'), T0 + 10_000);
    store.resolve(onReporting('error').dedupKey, T0 + 60_000);
    store.resolve(input('orders').dedupKey, T0 + 60_000);
    expect(sent()).toEqual(['trigger db-reporting/error-storm', 'resolve db-reporting/error-storm', 'resolve db1/vacuum-held-back']);
  });

  it('does not refresh a withheld alert to Alertmanager', () => {
    const { db, store } = setup('default min_severity');
    store.fire(input('orders', { severity: 'info' }), T0);
    expect(store.enqueueRefresh(T0 + 60_000)).toBe(0);
    expect(outbox(db)).toEqual([]);
  });
});
