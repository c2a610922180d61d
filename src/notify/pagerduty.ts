/**
 * PagerDuty Events API v2: one incident per pgvigil incident (trigger while firing, resolve when
 * its last alert resolves) under a stable dedup_key, and change events for REPACK and failovers.
 * The routing key is added at send time: it is never stored in the outbox and never logged.
 */
import { createHash } from 'node:crypto';
import { DEFAULT_MIN_SEVERITY, type Alert, type Severity } from '../domain/index.js';
import { sourceOf, type NotificationIdentity } from './identity.js';
import { postJson } from './http-post.js';
import type { ChangeEvent, DeliveryResult, IncidentView, Notification, Notifier, Outbound } from './notifier.js';
import type { MinSeverityOverride } from './severity-routing.js';

export interface PagerDutyOptions {
  /** The lowest severity sent; default DEFAULT_MIN_SEVERITY.pagerduty. */
  minSeverity?: Severity;
  /** Per rule and/or target, a min_severity other than minSeverity; default none. */
  minSeverityOverrides?: readonly MinSeverityOverride[];
  /** Outbox channel name; default 'pagerduty'. */
  channel?: string;
  /** Integration (routing) key; the lead reads it from a file or an environment variable. */
  routingKey: string;
  /** Events endpoint; EU accounts use https://events.eu.pagerduty.com/v2/enqueue. */
  eventsUrl?: string;
  /** Change events endpoint; EU: https://events.eu.pagerduty.com/v2/change/enqueue. */
  changeUrl?: string;
  /** `source` (the server by name and address), `group` (its cluster), static labels and links back to pgvigil. */
  identity?: NotificationIdentity;
  /** Hold a new incident's first trigger this long, so a storm's first page counts it. Default 10 s. */
  groupWaitMs?: number;
  /** Sends per minute per routing key; PagerDuty throttles at about 120. Default 100. */
  perMinute?: number;
  requestTimeoutMs?: number;
}

export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';
export const PAGERDUTY_CHANGE_URL = 'https://events.pagerduty.com/v2/change/enqueue';
const SUMMARY_MAX_CHARS = 1024;
const MEMBERS_IN_DETAILS = 20;

/** What the outbox stores: the request body without the routing key, and which endpoint. */
interface StoredRequest {
  endpoint: 'events' | 'change';
  body: Record<string, unknown>;
}

export class PagerDutyNotifier implements Notifier {
  readonly channel: string;
  readonly minSeverity: Severity;
  readonly minSeverityOverrides: readonly MinSeverityOverride[];
  readonly groupBy = 'incident' as const;
  readonly groupWaitMs: number;
  readonly refreshIntervalMs: number | null = null;
  readonly rateLimit: { key: string; perMinute: number };
  private readonly eventsUrl: string;
  private readonly changeUrl: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: PagerDutyOptions) {
    this.channel = options.channel ?? 'pagerduty';
    this.minSeverity = options.minSeverity ?? DEFAULT_MIN_SEVERITY.pagerduty;
    this.minSeverityOverrides = options.minSeverityOverrides ?? [];
    this.groupWaitMs = options.groupWaitMs ?? 10_000;
    this.eventsUrl = options.eventsUrl ?? PAGERDUTY_EVENTS_URL;
    this.changeUrl = options.changeUrl ?? PAGERDUTY_CHANGE_URL;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
    // Per routing key (two channels sharing one share its limit), by a digest so the key itself
    // appears nowhere but in send().
    const keyDigest = createHash('sha256').update(options.routingKey).digest('hex').slice(0, 16);
    this.rateLimit = { key: `pagerduty:${keyDigest}`, perMinute: options.perMinute ?? 100 };
  }

  format(notification: Notification): Outbound | null {
    if (notification.kind === 'alert') return null;
    if (notification.kind === 'change') return this.formatChange(notification.change);
    const incident = notification.incident;
    if (incident.state === 'resolved') {
      const stored: StoredRequest = { endpoint: 'events', body: { event_action: 'resolve', dedup_key: incident.dedupKey } };
      return { action: 'resolve', dedupKey: incident.dedupKey, payload: stored };
    }
    const identity = this.options.identity;
    const cluster = identity?.clusterOf(incident.target) ?? null;
    const payload: Record<string, unknown> = {
      summary: incidentSummary(incident),
      source: identity ? sourceOf(identity, incident.target) : incident.target,
      severity: pagerDutySeverity(incident.severity),
      timestamp: new Date(incident.cause.tsMs).toISOString(),
      component: component(incident.members),
      class: incident.ruleId,
      custom_details: { ...identity?.labels, ...incidentDetails(incident) },
    };
    if (cluster !== null) payload.group = cluster;
    const links = incident.members.slice(0, MEMBERS_IN_DETAILS).flatMap((m) => {
      const href = identity?.alertUrl(m.id) ?? null;
      return href === null ? [] : [{ href, text: `pgvigil alert ${m.id}: evidence` }];
    });
    const stored: StoredRequest = {
      endpoint: 'events',
      body: { event_action: 'trigger', dedup_key: incident.dedupKey, payload, client: 'pgvigil', ...(links.length > 0 ? { links } : {}) },
    };
    return { action: 'trigger', dedupKey: incident.dedupKey, payload: stored };
  }

  async send(payload: unknown, nowMs: number): Promise<DeliveryResult> {
    const stored = payload as StoredRequest;
    const body = JSON.stringify({ routing_key: this.options.routingKey, ...stored.body });
    return postJson({
      url: stored.endpoint === 'change' ? this.changeUrl : this.eventsUrl,
      body,
      timeoutMs: this.timeoutMs,
      accepted: [202],
      nowMs,
    });
  }

  private formatChange(change: ChangeEvent): Outbound {
    const body: Record<string, unknown> = {
      payload: {
        summary: truncate(change.summary, SUMMARY_MAX_CHARS),
        timestamp: new Date(change.tsMs).toISOString(),
        source: this.options.identity ? sourceOf(this.options.identity, change.target) : change.target,
        custom_details: { target: change.target, ...change.details },
      },
    };
    if (change.links && change.links.length > 0) body.links = change.links;
    const stored: StoredRequest = { endpoint: 'change', body };
    // Each change is its own key: changes are facts, none replaces another.
    return { action: 'change', dedupKey: `change/${change.target}/${change.tsMs}`, payload: stored };
  }
}

/** PagerDuty's severities are pgvigil's, one to one; kept as a function so a change is one place. */
export function pagerDutySeverity(severity: Severity): 'critical' | 'error' | 'warning' | 'info' {
  return severity;
}

/** One member: its own summary. Several: "<rule> on <target>: N tables: first; second; ...". */
export function incidentSummary(incident: IncidentView): string {
  const members = incident.members;
  if (members.length === 1) return truncate(members[0]!.summary, SUMMARY_MAX_CHARS);
  const noun = members.every((m) => m.labels.table !== undefined || m.labels.relname !== undefined) ? 'tables' : 'alerts';
  const head = `${incident.ruleId} on ${incident.target}: ${members.length} ${noun}: `;
  return truncate(head + members.map((m) => m.summary).join('; '), SUMMARY_MAX_CHARS);
}

function incidentDetails(incident: IncidentView): Record<string, unknown> {
  const shown = incident.members.slice(0, MEMBERS_IN_DETAILS);
  return {
    rule_id: incident.ruleId,
    target: incident.target,
    firing: incident.members.length,
    started_at: new Date(incident.startedMs).toISOString(),
    alerts: shown.map((m) => ({
      alert_id: m.id,
      dedup_key: m.dedupKey,
      summary: m.summary,
      severity: m.severity,
      labels: m.labels,
      started_at: new Date(m.startedMs).toISOString(),
      evidence: { event_ids: m.evidence.eventIds, series: m.evidence.series, facts: m.evidence.facts },
    })),
    alerts_not_shown: incident.members.length - shown.length,
  };
}

/** The database when every member names the same one; otherwise the server as a whole. */
function component(members: Alert[]): string {
  const databases = new Set(members.map((m) => m.labels.database ?? m.labels.datname ?? ''));
  const only = databases.size === 1 ? [...databases][0] : undefined;
  return only ? only : 'postgresql';
}

export function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}
