/**
 * Generic webhook: a JSON POST per alert transition and per change event, any 2xx accepted.
 * With a secret, the header `X-Pgvigil-Signature: sha256=<hex>` carries HMAC-SHA256 of the exact
 * body bytes, so a receiver can check the sender. The secret is never stored in the outbox.
 *
 * Every body carries `delivery_id`, the same for every attempt at one notification (see
 * delivery-id.ts), also sent as the `Idempotency-Key` header (draft-ietf-httpapi-idempotency-key-
 * header: a structured-field string, so quoted), so a receiver drops a repeat without reading the body.
 */
import { createHmac } from 'node:crypto';
import { DEFAULT_MIN_SEVERITY, type Severity } from '../domain/index.js';
import { changeDeliveryId, transitionDeliveryId } from './delivery-id.js';
import { serverLabels, type NotificationIdentity } from './identity.js';
import { postJson } from './http-post.js';
import type { DeliveryResult, Notification, Notifier, Outbound } from './notifier.js';
import type { MinSeverityOverride } from './severity-routing.js';

export interface WebhookOptions {
  /** The lowest severity sent; default DEFAULT_MIN_SEVERITY.webhook. */
  minSeverity?: Severity;
  /** Per rule and/or target, a min_severity other than minSeverity; default none. */
  minSeverityOverrides?: readonly MinSeverityOverride[];
  /** Outbox channel name; default 'webhook' (several webhooks need distinct names). */
  channel?: string;
  url: string;
  /** HMAC-SHA256 secret; null sends no signature. */
  hmacSecret?: string | null;
  /** The server's instance and cluster, static labels, and the link back to pgvigil. */
  identity?: NotificationIdentity;
  requestTimeoutMs?: number;
}

export const SIGNATURE_HEADER = 'x-pgvigil-signature';
export const IDEMPOTENCY_HEADER = 'idempotency-key';
const ACCEPTED = Array.from({ length: 100 }, (_, i) => 200 + i);

export class WebhookNotifier implements Notifier {
  readonly channel: string;
  readonly minSeverity: Severity;
  readonly minSeverityOverrides: readonly MinSeverityOverride[];
  readonly groupBy = 'alert' as const;
  readonly groupWaitMs = 0;
  readonly refreshIntervalMs: number | null = null;
  readonly rateLimit: Notifier['rateLimit'] = null;

  constructor(private readonly options: WebhookOptions) {
    this.channel = options.channel ?? 'webhook';
    this.minSeverity = options.minSeverity ?? DEFAULT_MIN_SEVERITY.webhook;
    this.minSeverityOverrides = options.minSeverityOverrides ?? [];
  }

  format(notification: Notification): Outbound | null {
    if (notification.kind === 'incident') return null;
    if (notification.kind === 'change') {
      const { change } = notification;
      const payload = {
        kind: 'change',
        delivery_id: changeDeliveryId(change),
        target: change.target,
        summary: change.summary,
        at: new Date(change.tsMs).toISOString(),
        details: change.details,
        links: change.links ?? [],
      };
      return { action: 'change', dedupKey: `change/${change.target}/${change.tsMs}`, payload };
    }
    const { alert, transition } = notification;
    const payload = {
      kind: 'alert',
      delivery_id: transitionDeliveryId(alert, transition),
      status: transition.to,
      alert_id: alert.id,
      dedup_key: alert.dedupKey,
      rule_id: alert.ruleId,
      severity: alert.severity,
      target: alert.target,
      labels: { ...(this.options.identity ? serverLabels(this.options.identity, alert.target) : {}), ...alert.labels },
      url: this.options.identity?.alertUrl(alert.id) ?? null,
      summary: alert.summary,
      evidence: { event_ids: alert.evidence.eventIds, series: alert.evidence.series, facts: alert.evidence.facts },
      started_at: new Date(alert.startedMs).toISOString(),
      at: new Date(transition.tsMs).toISOString(),
    };
    return { action: transition.to === 'firing' ? 'trigger' : 'resolve', dedupKey: alert.dedupKey, payload };
  }

  async send(payload: unknown, nowMs: number): Promise<DeliveryResult> {
    const body = JSON.stringify(payload);
    const headers: Record<string, string> = {};
    if (this.options.hmacSecret) headers[SIGNATURE_HEADER] = signature(this.options.hmacSecret, body);
    // Rows stored before delivery ids existed have none: they go out without the header.
    const id = (payload as { delivery_id?: unknown }).delivery_id;
    if (typeof id === 'string') headers[IDEMPOTENCY_HEADER] = `"${id}"`;
    return postJson({ url: this.options.url, body, headers, timeoutMs: this.options.requestTimeoutMs ?? 10_000, accepted: ACCEPTED, nowMs });
  }
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
