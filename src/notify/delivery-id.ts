/**
 * Delivery ids: one per notification, derived from what it reports (an alert transition, a
 * change), never from the attempt. The outbox stores it in the payload, so a retry, and a resend
 * after pgvigil was killed between the receiver's 2xx and the row's removal, carry the same id and
 * the receiver can drop the repeat by it alone.
 *
 * The id is shaped as a UUID (version 8, RFC 9562: its bits are ours, here SHA-256 of the parts),
 * because that is what receivers' idempotency-key columns usually take.
 */
import { createHash } from 'node:crypto';
import type { Alert, AlertTransition } from '../domain/index.js';

/**
 * One alert transition. The alert's id and start tell this alert from an earlier one under the
 * same dedup key (and from one in another store file); `to` and the time tell its transitions apart.
 */
export function transitionDeliveryId(alert: Pick<Alert, 'id' | 'dedupKey' | 'startedMs'>, transition: Pick<AlertTransition, 'to' | 'tsMs'>): string {
  return deliveryId(['alert', alert.dedupKey, alert.id, alert.startedMs, transition.to, transition.tsMs]);
}

/** One change event: its target, time and what it says. */
export function changeDeliveryId(change: { target: string; tsMs: number; summary: string }): string {
  return deliveryId(['change', change.target, change.tsMs, change.summary]);
}

function deliveryId(parts: ReadonlyArray<string | number>): string {
  const bytes = createHash('sha256').update(JSON.stringify(parts)).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x80; // version 8
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
