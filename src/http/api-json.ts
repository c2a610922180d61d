/**
 * The one place the API translates store objects (camelCase) into what an operator reads
 * (snake_case JSON). Times are epoch milliseconds in `*_ms` fields.
 */
import { basisOf, type Alert, type AnyLogEvent } from '../domain/index.js';
import type { OutboxRow } from '../notify/outbox-table.js';
import { eventLine } from '../report/event-line.js';
import type { AlertDetail, StoredEventView } from '../store/queries.js';

export function eventJson(e: StoredEventView): Record<string, unknown> {
  return {
    id: e.id,
    target: e.target,
    ts_ms: e.tsMs,
    kind: e.kind,
    level: e.level,
    sqlstate: e.sqlstate,
    pid: e.pid,
    database: e.database,
    user: e.user,
    message: e.message,
    details: e.details,
    source: { file: e.sourceFile, offset: e.sourceOffset },
    // Only for a log read through a message catalog, as in LogEvent (docs/contracts.md).
    ...(e.language !== undefined ? { language: e.language } : {}),
    // The report's line for it (autovacuum's dead rows and cutoff, a conflict's reason...), for the page.
    line: eventLine({ ...e, source: { file: e.sourceFile, offset: e.sourceOffset, line: null } } as AnyLogEvent),
  };
}

export function alertJson(a: Alert): Record<string, unknown> {
  return {
    id: a.id,
    rule_id: a.ruleId,
    dedup_key: a.dedupKey,
    severity: a.severity,
    state: a.state,
    target: a.target,
    labels: a.labels,
    summary: a.summary,
    basis: basisOf(a.evidence),
    started_ms: a.startedMs,
    updated_ms: a.updatedMs,
    resolved_ms: a.resolvedMs,
  };
}

export function alertDetailJson(d: AlertDetail): Record<string, unknown> {
  const { evidence } = d.alert;
  return {
    ...alertJson(d.alert),
    evidence: {
      facts: evidence.facts,
      series: evidence.series.map((s) => ({ name: s.name, labels: s.labels, value: s.value, ts_ms: s.tsMs })),
      event_ids: evidence.eventIds,
      events: d.events.map(eventJson),
    },
    transitions: d.transitions.map((t) => ({ ts_ms: t.tsMs, to: t.to })),
    incident: d.incident && { dedup_key: d.incident.dedupKey, state: d.incident.state, members: d.incident.members },
    notifications: d.notifications.map(notificationJson),
  };
}

function notificationJson(row: OutboxRow): Record<string, unknown> {
  return {
    channel: row.channel,
    action: row.action,
    state: row.state,
    attempts: row.attempts,
    created_ms: row.createdMs,
    next_attempt_ms: row.state === 'pending' ? row.nextAttemptMs : null,
    last_error: row.lastError,
  };
}
