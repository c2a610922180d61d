/**
 * notifications-rejected (error): a receiver refused a notification itself (a 4xx such as
 * PagerDuty's 400 for a wrong routing key), so that channel delivers nothing and retrying cannot
 * help. The outbox keeps the row as 'rejected' and counts it; this raises pgvigil's own alert
 * too, so someone hears of it: on the page, in `report`, in /metrics, and through the other
 * channels, never through the one that rejects (it would reject that too, a loop). The alert
 * resolves when that channel next accepts a delivery.
 *
 * Not a rule of the engine: no rule reads the outbox, and the outbox learns of each answer the
 * moment it comes. So the engine must not take these alerts for those of a removed rule (which it
 * resolves at start): it is given the store without them (`ruleAlertsOnly`).
 */
import type { Alert } from '../domain/index.js';
import type { AlertStore } from '../store/alert-store.js';

export const NOTIFICATIONS_REJECTED = 'notifications-rejected';
/** The receiver's answer in the one-line summary; the facts keep all of it. */
const MAX_SUMMARY_REASON_CHARS = 160;

/** What the outbox says of a rejected delivery. */
export interface Rejection {
  channel: string;
  status: number | null;
  reason: string;
  /** The alert whose notification was rejected; null for a change event. */
  alertId: number | null;
  /** Rows of the channel now kept as rejected. */
  rejectedRows: number;
  nowMs: number;
}

/** The outbox's hook: told of every rejection and every accepted delivery. */
export interface DeliveryWatcher {
  rejected(rejection: Rejection): void;
  accepted(channel: string, nowMs: number): void;
}

export function rejectedAlertKey(channel: string): string {
  return `${NOTIFICATIONS_REJECTED}/${channel}`;
}

/** False for the one channel an alert must never go to: the channel it says rejects. */
export function channelMayHear(channel: string, alert: Pick<Alert, 'ruleId' | 'labels'>): boolean {
  return alert.ruleId !== NOTIFICATIONS_REJECTED || alert.labels.channel !== channel;
}

export class RejectedDeliveries implements DeliveryWatcher {
  constructor(
    private readonly alerts: Pick<AlertStore, 'fire' | 'resolve' | 'get'>,
    /** The target an alert is filed under when the rejected notification named none (a change event). */
    private readonly defaultTarget: string,
  ) {}

  rejected({ channel, status, reason, alertId, rejectedRows, nowMs }: Rejection): void {
    const target = alertId === null ? null : this.alerts.get(alertId)?.target;
    this.alerts.fire({
      ruleId: NOTIFICATIONS_REJECTED,
      dedupKey: rejectedAlertKey(channel),
      severity: 'error',
      target: target ?? this.defaultTarget,
      labels: { channel },
      summary: `notifications to ${channel} are rejected (${rejectedRows} kept, not retried): ${reason.slice(0, MAX_SUMMARY_REASON_CHARS)}; ` +
        'fix the channel\'s configuration; this resolves when it next accepts one',
      evidence: { eventIds: [], series: [], facts: { channel, http_status: status, reason, rejected_notifications: rejectedRows } },
    }, nowMs);
  }

  accepted(channel: string, nowMs: number): void {
    this.alerts.resolve(rejectedAlertKey(channel), nowMs);
  }
}

/** The alert store as the rules engine sees it: without the alerts it did not raise. */
export function ruleAlertsOnly(store: AlertStore): Pick<AlertStore, 'fire' | 'resolve' | 'refresh' | 'openAlerts'> {
  return {
    fire: (input, nowMs) => store.fire(input, nowMs),
    resolve: (dedupKey, nowMs) => store.resolve(dedupKey, nowMs),
    refresh: (input, nowMs) => store.refresh(input, nowMs),
    openAlerts: () => store.openAlerts().filter((alert) => alert.ruleId !== NOTIFICATIONS_REJECTED),
  };
}
