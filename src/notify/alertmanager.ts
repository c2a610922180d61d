/**
 * Prometheus Alertmanager (API v2): each firing alert is POSTed to /api/v2/alerts and re-sent
 * every refreshIntervalMs while it fires (Alertmanager resolves an alert nobody refreshes), and
 * ended with endsAt when it resolves. Alertmanager groups and routes; pgvigil sends every alert.
 */
import { DEFAULT_MIN_SEVERITY, type Alert, type AlertTransition, type Severity } from '../domain/index.js';
import { postJson } from './http-post.js';
import { serverLabels, type NotificationIdentity } from './identity.js';
import type { DeliveryResult, Notification, Notifier, Outbound } from './notifier.js';
import type { MinSeverityOverride } from './severity-routing.js';

export interface AlertmanagerOptions {
  /** The lowest severity sent; default DEFAULT_MIN_SEVERITY.alertmanager. */
  minSeverity?: Severity;
  /** Per rule and/or target, a min_severity other than minSeverity; default none. */
  minSeverityOverrides?: readonly MinSeverityOverride[];
  /** Outbox channel name; default 'alertmanager'. */
  channel?: string;
  /** Alertmanager's base URL, e.g. http://127.0.0.1:9093 (a URL ending in /api/v2/alerts is used as is). */
  url: string;
  /** Re-send firing alerts this often; default 60 s. endsAt is set 4 refreshes ahead. */
  refreshIntervalMs?: number;
  /** The server's instance and cluster, static labels, and the link back to pgvigil (generatorURL). */
  identity?: NotificationIdentity;
  requestTimeoutMs?: number;
}

interface StoredAlert {
  firing: boolean;
  alert: {
    labels: Record<string, string>;
    annotations: Record<string, string>;
    startsAt: string;
    endsAt?: string;
    generatorURL?: string;
  };
}

export class AlertmanagerNotifier implements Notifier {
  readonly channel: string;
  readonly minSeverity: Severity;
  readonly minSeverityOverrides: readonly MinSeverityOverride[];
  readonly groupBy = 'alert' as const;
  readonly groupWaitMs = 0;
  readonly refreshIntervalMs: number;
  readonly rateLimit: Notifier['rateLimit'] = null;
  private readonly url: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: AlertmanagerOptions) {
    this.channel = options.channel ?? 'alertmanager';
    this.minSeverity = options.minSeverity ?? DEFAULT_MIN_SEVERITY.alertmanager;
    this.minSeverityOverrides = options.minSeverityOverrides ?? [];
    this.refreshIntervalMs = options.refreshIntervalMs ?? 60_000;
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
    const base = options.url.replace(/\/+$/, '');
    this.url = base.endsWith('/api/v2/alerts') ? base : `${base}/api/v2/alerts`;
  }

  format(notification: Notification): Outbound | null {
    if (notification.kind !== 'alert') return null;
    const { alert, transition } = notification;
    const stored: StoredAlert = { firing: transition.to === 'firing', alert: this.body(alert, transition) };
    return { action: transition.to === 'firing' ? 'trigger' : 'resolve', dedupKey: alert.dedupKey, payload: stored };
  }

  async send(payload: unknown, nowMs: number): Promise<DeliveryResult> {
    const stored = payload as StoredAlert;
    // endsAt of a firing alert is computed at send time: a payload that waited in the outbox
    // while Alertmanager was down must not arrive already expired.
    const alert = stored.firing
      ? { ...stored.alert, endsAt: new Date(nowMs + 4 * this.refreshIntervalMs).toISOString() }
      : stored.alert;
    return postJson({ url: this.url, body: JSON.stringify([alert]), timeoutMs: this.timeoutMs, accepted: [200], nowMs });
  }

  private body(alert: Alert, transition: AlertTransition): StoredAlert['alert'] {
    const labels: Record<string, string> = {};
    for (const [key, value] of Object.entries(alert.labels)) labels[labelName(key)] = value;
    const identity = this.options.identity;
    if (identity) Object.assign(labels, serverLabels(identity, alert.target));
    Object.assign(labels, { alertname: alert.ruleId, severity: routingSeverity(alert.severity), pgvigil_severity: alert.severity, target: alert.target });
    const body: StoredAlert['alert'] = {
      labels,
      annotations: {
        summary: alert.summary,
        dedup_key: alert.dedupKey,
        alert_id: String(alert.id),
        evidence: JSON.stringify(alert.evidence.facts),
      },
      startsAt: new Date(alert.startedMs).toISOString(),
    };
    if (transition.to === 'resolved') body.endsAt = new Date(transition.tsMs).toISOString();
    const link = this.options.identity?.alertUrl(alert.id) ?? null;
    if (link !== null) body.generatorURL = link;
    return body;
  }
}

/**
 * The severities Alertmanager routing trees expect are critical, warning and info: pgvigil's
 * error (users affected now, and it will not fix itself) pages as critical, as the shipped
 * Prometheus rules map it (dashboards/prometheus); pgvigil's own word stays in pgvigil_severity.
 */
export function routingSeverity(severity: Severity): 'critical' | 'warning' | 'info' {
  return severity === 'error' ? 'critical' : severity;
}

/** Alertmanager label names follow Prometheus: [a-zA-Z_][a-zA-Z0-9_]*. */
export function labelName(key: string): string {
  const cleaned = key.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[a-zA-Z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}
