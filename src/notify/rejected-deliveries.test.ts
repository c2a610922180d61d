import { describe, expect, it } from 'vitest';
import { AlertStore } from '../store/alert-store.js';
import { openStore } from '../store/open-store.js';
import { AlertmanagerNotifier } from './alertmanager.js';
import { RejectedDeliveries, ruleAlertsOnly } from './rejected-deliveries.js';
import { WebhookNotifier } from './webhook.js';

const T0 = Date.UTC(2026, 11, 3, 12, 0, 0);
const evidence = { eventIds: [], series: [], facts: {} };

function setup() {
  const channels = ['webhook:pager', 'webhook:team'].map((channel) => new WebhookNotifier({ channel, url: 'http://127.0.0.1:1/unused' }));
  const db = openStore(':memory:');
  const store = new AlertStore(db, channels);
  const outboxChannels = () => db.prepare(`SELECT channel FROM outbox ORDER BY id`).pluck().all() as string[];
  return { store, outboxChannels, watcher: new RejectedDeliveries(store, 'first-target') };
}

describe('RejectedDeliveries', () => {
  it('files the alert under the target of the notification that was rejected, and never for the rejecting channel', () => {
    const { store, outboxChannels, watcher } = setup();
    const { alert } = store.fire({ ruleId: 'deadlocks', dedupKey: 'deadlocks/db2', severity: 'warning', target: 'db2', labels: {}, summary: 's', evidence }, T0);
    watcher.rejected({ channel: 'webhook:pager', status: 400, reason: 'HTTP 400: bad', alertId: alert.id, rejectedRows: 1, nowMs: T0 + 1 });
    expect(store.openAlerts().find((a) => a.ruleId === 'notifications-rejected')).toMatchObject({ target: 'db2', severity: 'error', labels: { channel: 'webhook:pager' } });
    expect(outboxChannels()).toEqual(['webhook:pager', 'webhook:team', 'webhook:team']);
  });

  it('files a rejected change event under the default target, and resolves when the channel accepts', () => {
    const { store, watcher } = setup();
    watcher.rejected({ channel: 'webhook:team', status: 404, reason: 'HTTP 404', alertId: null, rejectedRows: 1, nowMs: T0 });
    expect(store.openAlerts()).toEqual([expect.objectContaining({ ruleId: 'notifications-rejected', target: 'first-target' })]);
    watcher.accepted('webhook:pager', T0 + 1);
    expect(store.openAlerts()).toHaveLength(1);
    watcher.accepted('webhook:team', T0 + 2);
    expect(store.openAlerts()).toEqual([]);
  });

  it('is not among the open alerts the rules engine resumes (it would resolve them as a removed rule\'s)', () => {
    const { store, watcher } = setup();
    store.fire({ ruleId: 'deadlocks', dedupKey: 'deadlocks/db1', severity: 'warning', target: 'db1', labels: {}, summary: 's', evidence }, T0);
    watcher.rejected({ channel: 'webhook:team', status: 400, reason: 'HTTP 400', alertId: null, rejectedRows: 1, nowMs: T0 });
    expect(store.openAlerts().map((a) => a.ruleId)).toEqual(['deadlocks', 'notifications-rejected']);
    expect(ruleAlertsOnly(store).openAlerts().map((a) => a.ruleId)).toEqual(['deadlocks']);
  });

  it('is never re-sent to an Alertmanager that rejects it when firing alerts are refreshed, while another Alertmanager gets it', () => {
    const channels = ['alertmanager:a', 'alertmanager:b'].map((channel) => new AlertmanagerNotifier({ channel, url: 'http://127.0.0.1:1' }));
    const db = openStore(':memory:');
    const store = new AlertStore(db, channels);
    new RejectedDeliveries(store, 'db1').rejected({ channel: 'alertmanager:a', status: 400, reason: 'HTTP 400', alertId: null, rejectedRows: 1, nowMs: T0 });
    db.prepare('DELETE FROM outbox').run();
    expect(store.enqueueRefresh(T0 + 60_000)).toBe(1);
    expect(db.prepare('SELECT channel FROM outbox').pluck().all()).toEqual(['alertmanager:b']);
  });
});
