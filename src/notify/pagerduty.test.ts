import { describe, expect, it } from 'vitest';
import type { Alert } from '../domain/index.js';
import type { NotificationIdentity } from './identity.js';
import type { IncidentView } from './notifier.js';
import { PagerDutyNotifier, incidentSummary } from './pagerduty.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);

function member(id: number, labels: Record<string, string>, summary = `dead tuples pile up on ${labels.table ?? 'x'}`): Alert {
  return {
    id, ruleId: 'vacuum-held-back', dedupKey: `vacuum-held-back/${id}`, severity: id === 2 ? 'critical' : 'warning', state: 'firing', target: 'db1', labels, summary,
    evidence: { eventIds: [id], series: [], facts: { held_seconds: 84 } }, startedMs: T0, updatedMs: T0, resolvedMs: null,
  };
}

function incident(members: Alert[], state: 'firing' | 'resolved' = 'firing'): IncidentView {
  const first = members[0]!;
  return {
    dedupKey: 'pgvigil/db1/vacuum-held-back/7', ruleId: 'vacuum-held-back', target: 'db1', state, startedMs: T0, severity: 'critical', members,
    cause: { ...first, alertId: first.id, to: state, tsMs: T0 + 5_000 },
  };
}

const identity: NotificationIdentity = {
  labels: { env: 'prod', team: 'dba' },
  addressOf: (t) => `${t}.example.net:5432`,
  clusterOf: () => 'shop-cluster',
  alertUrl: (id) => `https://pgvigil.example.net/api/alerts/${id}`,
};
const notifier = new PagerDutyNotifier({ routingKey: 'r'.repeat(32), identity });

describe('PagerDutyNotifier.format', () => {
  it('triggers with the Events v2 fields, the evidence and no routing key', () => {
    const out = notifier.format({ kind: 'incident', incident: incident([member(1, { database: 'shop', table: 'orders' })]) })!;
    expect(out).toMatchObject({ action: 'trigger', dedupKey: 'pgvigil/db1/vacuum-held-back/7' });
    expect(out.payload).toEqual({
      endpoint: 'events',
      body: {
        event_action: 'trigger',
        dedup_key: 'pgvigil/db1/vacuum-held-back/7',
        client: 'pgvigil',
        links: [{ href: 'https://pgvigil.example.net/api/alerts/1', text: 'pgvigil alert 1: evidence' }],
        payload: {
          summary: 'dead tuples pile up on orders',
          source: 'db1 (db1.example.net:5432)',
          severity: 'critical',
          timestamp: '2026-10-14T03:00:05.000Z',
          component: 'shop',
          group: 'shop-cluster',
          class: 'vacuum-held-back',
          custom_details: expect.objectContaining({ env: 'prod', team: 'dba', firing: 1, alerts: [expect.objectContaining({ evidence: { event_ids: [1], series: [], facts: { held_seconds: 84 } } })] }),
        },
      },
    });
    expect(JSON.stringify(out)).not.toContain('r'.repeat(32));
  });

  it('resolves with the dedup key only', () => {
    const out = notifier.format({ kind: 'incident', incident: incident([member(1, { table: 'orders' })], 'resolved') })!;
    expect(out.payload).toEqual({ endpoint: 'events', body: { event_action: 'resolve', dedup_key: 'pgvigil/db1/vacuum-held-back/7' } });
  });

  it('ignores single-alert notifications: PagerDuty pages per incident', () => {
    const alert = member(1, { table: 'orders' });
    expect(notifier.format({ kind: 'alert', alert, transition: { ...alert, alertId: 1, to: 'firing', tsMs: T0 } })).toBeNull();
  });

  it('formats change events for the change endpoint', () => {
    const out = notifier.format({ kind: 'change', change: { target: 'db1', summary: 'REPACK finished', tsMs: T0, details: { relation: 'orders' }, links: [{ href: 'http://x', text: 'x' }] } })!;
    expect(out.action).toBe('change');
    expect(out.payload).toEqual({
      endpoint: 'change',
      body: { payload: { summary: 'REPACK finished', timestamp: '2026-10-14T03:00:00.000Z', source: 'db1 (db1.example.net:5432)', custom_details: { target: 'db1', relation: 'orders' } }, links: [{ href: 'http://x', text: 'x' }] },
    });
  });
});

describe('PagerDutyNotifier rate limit', () => {
  it('is shared per routing key and does not reveal it', () => {
    const a = new PagerDutyNotifier({ routingKey: 'a'.repeat(32), channel: 'pd_one' });
    const b = new PagerDutyNotifier({ routingKey: 'a'.repeat(32), channel: 'pd_two', perMinute: 60 });
    const c = new PagerDutyNotifier({ routingKey: 'c'.repeat(32) });
    expect(a.rateLimit.key).toBe(b.rateLimit.key);
    expect(a.rateLimit.key).not.toBe(c.rateLimit.key);
    expect(a.rateLimit.key).not.toContain('aaaa');
    expect([a.rateLimit.perMinute, b.rateLimit.perMinute]).toEqual([100, 60]);
  });
});

describe('incidentSummary', () => {
  it('says how many tables an incident covers', () => {
    const members = [member(1, { table: 'a' }), member(2, { table: 'b' }), member(3, { relname: 'c' }, 'on c')];
    expect(incidentSummary(incident(members))).toBe('vacuum-held-back on db1: 3 tables: dead tuples pile up on a; dead tuples pile up on b; on c');
  });

  it('says alerts when the members are not all tables', () => {
    expect(incidentSummary(incident([member(1, { table: 'a' }), member(2, { slot: 's' })]))).toMatch(/: 2 alerts: /);
  });

  it('keeps the summary within 1,024 characters', () => {
    const members = Array.from({ length: 200 }, (_, i) => member(i + 1, { table: `t${i}` }));
    const summary = incidentSummary(incident(members));
    expect(summary).toHaveLength(1024);
    expect(summary.endsWith('…')).toBe(true);
    expect(incidentSummary(incident([member(1, { table: 'x' }, 'y'.repeat(2000))]))).toHaveLength(1024);
  });
});
