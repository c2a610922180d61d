/**
 * Who a notification is about and where to look, the same for every channel: the target's name
 * and address, its cluster, the operator's static labels (env, team, region), and a link back to
 * pgvigil when its external URL is known. Two sidecars must never send notifications that look
 * like one server's (one's resolve would close the other's page).
 */
import type { Config } from '../config/load-config.js';
import { defaultTargetName } from '../config/target-name.js';

export interface NotificationIdentity {
  /** Static labels from the config, on every alert of every channel. */
  labels: Readonly<Record<string, string>>;
  /** `host:port` of the target's server; null for a target pgvigil does not know. */
  addressOf(target: string): string | null;
  clusterOf(target: string): string | null;
  /** The alert with its evidence in pgvigil's API; null without an external URL. */
  alertUrl(alertId: number): string | null;
}

export function notificationIdentity(config: Pick<Config, 'targets' | 'labels' | 'externalUrl'>): NotificationIdentity {
  const byName = new Map(config.targets.map((t) => [t.name, t]));
  return {
    labels: config.labels,
    addressOf: (target) => byName.get(target)?.address ?? null,
    clusterOf: (target) => byName.get(target)?.cluster ?? null,
    alertUrl: (alertId) => (config.externalUrl === null ? null : `${config.externalUrl}/api/alerts/${alertId}`),
  };
}

/** PagerDuty's `source`: the server, by name and address (just the address when the name is made from it). */
export function sourceOf(identity: NotificationIdentity, target: string): string {
  const address = identity.addressOf(target);
  if (address === null) return target;
  return defaultTargetName(address) === target ? address : `${target} (${address})`;
}

/** The labels pgvigil adds to an alert's own: the static ones, then the server's instance and cluster. */
export function serverLabels(identity: NotificationIdentity, target: string): Record<string, string> {
  const address = identity.addressOf(target);
  const cluster = identity.clusterOf(target);
  return { ...identity.labels, ...(address !== null ? { instance: address } : {}), ...(cluster !== null ? { cluster } : {}) };
}
