import { describe, expect, it } from 'vitest';
import { AlertmanagerNotifier } from '../notify/alertmanager.js';
import { PagerDutyNotifier } from '../notify/pagerduty.js';
import { AlertStore, type FireInput } from './alert-store.js';
import { openStore, type Db } from './open-store.js';
import { Silences } from './silences.js';

const T0 = Date.UTC(2026, 11, 3, 2, 0, 0);
const HOUR_MS = 3_600_000;

function alert(target: string, ruleId: string, severity: FireInput['severity'] = 'error'): FireInput {
  return { ruleId, dedupKey: `${ruleId}/${target}`, severity, target, labels: {}, summary: `${ruleId} on ${target}`, evidence: { eventIds: [], series: [], facts: {} } };
}

function setup(): { db: Db; store: AlertStore; silences: Silences; sent: () => string[] } {
  const db = openStore(':memory:');
  const store = new AlertStore(db, [new PagerDutyNotifier({ routingKey: 'k'.repeat(32), groupWaitMs: 0 }), new AlertmanagerNotifier({ url: 'http://127.0.0.1:9093' })]);
  const sent = () => (db.prepare('SELECT channel, action, dedup_key FROM outbox ORDER BY id').all() as Array<{ channel: string; action: string; dedup_key: string }>)
    .map((r) => `${r.channel} ${r.action} ${r.dedup_key.replace(/\/\d+-\d+$/, '')}`);
  return { db, store, silences: new Silences(db), sent };
}

describe('silences', () => {
  it('keep a silenced target\'s new alerts from every channel, recorded all the same; other targets and rules page', () => {
    const { db, store, silences, sent } = setup();
    silences.add({ target: 'db1', ruleId: null, startsMs: T0, endsMs: T0 + 2 * HOUR_MS, comment: 'failover drill', createdBy: 'dba' });
    silences.add({ target: 'db2', ruleId: 'replica-lag-over-lb-limit', startsMs: T0, endsMs: T0 + HOUR_MS, comment: 'reindex', createdBy: 'dba' });
    store.fire(alert('db1', 'server-crashed', 'critical'), T0 + 60_000);
    store.fire(alert('db2', 'replica-lag-over-lb-limit'), T0 + 60_000);
    store.fire(alert('db2', 'standby-disconnected'), T0 + 60_000);
    expect(db.prepare("SELECT count(*) FROM alerts WHERE state = 'firing'").pluck().get()).toBe(3);
    expect(sent()).toEqual(['pagerduty trigger pgvigil/db2/standby-disconnected', 'alertmanager trigger standby-disconnected/db2']);
    // Its resolve is not sent either: no channel heard of it.
    store.resolve('server-crashed/db1', T0 + 120_000);
    expect(sent()).toHaveLength(2);
  });

  it('end at their time or when expired: a new alert then pages', () => {
    const { store, silences, sent } = setup();
    const silence = silences.add({ target: 'db1', ruleId: null, startsMs: T0, endsMs: T0 + HOUR_MS, comment: 'upgrade', createdBy: 'dba' });
    expect(silences.covering('db1', 'server-crashed', T0 + HOUR_MS - 1)?.id).toBe(silence.id);
    expect(silences.covering('db1', 'server-crashed', T0 + HOUR_MS)).toBeNull();
    expect(silences.covering('db1', 'server-crashed', T0 - 1)).toBeNull();
    expect(silences.expire(silence.id, T0 + 60_000)).toBe(true);
    expect(silences.expire(silence.id, T0 + 61_000)).toBe(false);
    store.fire(alert('db1', 'server-crashed', 'critical'), T0 + 120_000);
    expect(sent()).toEqual(['pagerduty trigger pgvigil/db1/server-crashed', 'alertmanager trigger server-crashed/db1']);
    expect(silences.list(T0).map((s) => s.comment)).toEqual(['upgrade']);
    expect(silences.list(T0 + 60_000)).toEqual([]);
  });

  it('never hide the resolve of an alert that paged before the silence began', () => {
    const { store, silences, sent } = setup();
    store.fire(alert('db1', 'server-crashed', 'critical'), T0);
    silences.add({ target: 'db1', ruleId: null, startsMs: T0 + 1, endsMs: T0 + HOUR_MS, comment: 'x', createdBy: 'dba' });
    store.resolve('server-crashed/db1', T0 + 60_000);
    expect(sent().filter((s) => s.includes('resolve'))).toHaveLength(2);
  });

  it('send an alert that started in a silence and still fires once the silence ends, without waiting for a change', () => {
    const { store, silences, sent } = setup();
    const silence = silences.add({ target: 'db1', ruleId: null, startsMs: T0, endsMs: T0 + HOUR_MS, comment: 'upgrade', createdBy: 'dba' });
    store.fire(alert('db1', 'server-crashed', 'critical'), T0 + 60_000);
    store.fire(alert('db1', 'standby-disconnected', 'warning'), T0 + 60_000);
    store.afterEvaluation(T0 + 30 * 60_000);
    expect(sent()).toEqual([]);
    // At its end: each channel whose min_severity the alert meets (PagerDuty from error, Alertmanager from warning).
    store.afterEvaluation(T0 + HOUR_MS);
    expect(sent()).toEqual([
      'pagerduty trigger pgvigil/db1/server-crashed', 'alertmanager trigger server-crashed/db1', 'alertmanager trigger standby-disconnected/db1',
    ]);
    // Once: later evaluations send nothing more, and the resolves follow as for any sent alert.
    store.afterEvaluation(T0 + HOUR_MS + 5_000);
    store.resolve('server-crashed/db1', T0 + HOUR_MS + 60_000);
    expect(sent().slice(3)).toEqual(['pagerduty resolve pgvigil/db1/server-crashed', 'alertmanager resolve server-crashed/db1']);
    expect(silences.expire(silence.id, T0 + 2 * HOUR_MS)).toBe(false);
  });

  it('send it when the silence is expired early, too', () => {
    const { store, silences, sent } = setup();
    const silence = silences.add({ target: 'db1', ruleId: null, startsMs: T0, endsMs: T0 + HOUR_MS, comment: 'upgrade', createdBy: 'dba' });
    store.fire(alert('db1', 'server-crashed', 'critical'), T0 + 60_000);
    silences.expire(silence.id, T0 + 120_000);
    store.afterEvaluation(T0 + 125_000);
    expect(sent()).toEqual(['pagerduty trigger pgvigil/db1/server-crashed', 'alertmanager trigger server-crashed/db1']);
  });
});
