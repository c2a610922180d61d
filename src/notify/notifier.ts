/**
 * Notify: delivers alert transitions and change events to receivers (PagerDuty, Alertmanager,
 * webhooks) without losing any. Owns the Notifier seam, the outbox and the receivers' formats.
 * Never decides when something fires (the rules engine does) and never sends anything that was
 * not first written to the store's outbox table.
 *
 * Glossary
 * - channel: one configured receiver, by name (`pagerduty`, `alertmanager`, `webhook`...); the
 *   outbox table's `channel` column.
 * - notification: what a channel is told: one alert transition, an incident update, or a change.
 * - incident: the alerts of one rule on one target that are firing together; a channel that
 *   groups by incident (PagerDuty) pages once for all of them ("rule X on db1: 12 tables").
 * - payload: the JSON a channel stores in the outbox; `send` turns it into the request. Secrets
 *   (routing keys, HMAC secrets) are added at send time, never stored.
 */
import { severityAtLeast, type Alert, type AlertTransition, type Severity } from '../domain/index.js';
import type { MinSeverityOverride } from './severity-routing.js';

/** An incident as a channel that groups by incident sees it, after the transition was applied. */
export interface IncidentView {
  /** Stable per incident: PagerDuty's dedup_key, so re-triggers update and a resolve closes. */
  dedupKey: string;
  ruleId: string;
  target: string;
  state: 'firing' | 'resolved';
  startedMs: number;
  /** Highest severity among the firing members (of all members once resolved). */
  severity: Severity;
  /** Firing members, oldest first; all members once the incident is resolved. */
  members: Alert[];
  /** The transition that caused this update. */
  cause: AlertTransition;
}

/** A PagerDuty-style change event (REPACK started/finished, failover): informs, never pages. */
export interface ChangeEvent {
  target: string;
  summary: string;
  tsMs: number;
  /** snake_case facts shown to a human. */
  details: Record<string, string | number | boolean | null>;
  links?: Array<{ href: string; text: string }>;
}

export type Notification =
  | { kind: 'alert'; transition: AlertTransition; alert: Alert }
  | { kind: 'incident'; incident: IncidentView }
  | { kind: 'change'; change: ChangeEvent };

export type OutboxAction = 'trigger' | 'resolve' | 'change';

/** What `format` returns: the stored payload and how the outbox files it. */
export interface Outbound {
  action: OutboxAction;
  /** Rows of one channel and key are delivered in order; a pending row of the same action is replaced. */
  dedupKey: string;
  payload: unknown;
}

export type DeliveryResult =
  | { outcome: 'accepted'; status: number }
  /** Network error, timeout, 429, 5xx: try again later. */
  | { outcome: 'retry'; status: number | null; reason: string; retryAfterMs: number | null }
  /** The receiver refused the payload itself (400): retrying cannot help. */
  | { outcome: 'rejected'; status: number | null; reason: string };

export interface Notifier {
  readonly channel: string;
  /** 'incident' pages once per incident (PagerDuty); 'alert' sends every alert's transitions. */
  readonly groupBy: 'alert' | 'incident';
  /** Hold the first trigger of a new incident this long so a storm's first page already counts it. */
  readonly groupWaitMs: number;
  /** Channels that expire firing alerts unless re-sent (Alertmanager) set this; others null. */
  readonly refreshIntervalMs: number | null;
  /**
   * Alerts below this severity are not sent to the channel (they are stored and shown). Once a
   * trigger went out, the channel hears the alert out: its later changes and its resolve.
   */
  readonly minSeverity: Severity;
  /** Per rule and/or target, a min_severity other than the channel's (severity-routing.ts picks one). */
  readonly minSeverityOverrides: readonly MinSeverityOverride[];
  /** Sends to the same key share a rate limit (PagerDuty: per routing key); null for none. */
  readonly rateLimit: { key: string; perMinute: number } | null;
  /** Pure. Null when the channel does not take this kind of notification. */
  format(notification: Notification): Outbound | null;
  /** One attempt; never throws (a network error is a 'retry' result). */
  send(payload: unknown, nowMs: number): Promise<DeliveryResult>;
}

export function highestSeverity(severities: Iterable<Severity>): Severity {
  let best: Severity = 'info';
  for (const severity of severities) if (!severityAtLeast(best, severity)) best = severity;
  return best;
}
