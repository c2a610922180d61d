/**
 * The notifiers the config asks for, each with its own outbox channel name.
 */
import type { Config } from '../config/load-config.js';
import { AlertmanagerNotifier } from './alertmanager.js';
import { notificationIdentity } from './identity.js';
import type { Notifier } from './notifier.js';
import { PagerDutyNotifier } from './pagerduty.js';
import { WebhookNotifier } from './webhook.js';

export function buildNotifiers(config: Pick<Config, 'notify' | 'targets' | 'labels' | 'externalUrl'>): Notifier[] {
  const identity = notificationIdentity(config);
  const notifiers: Notifier[] = [];
  const { pagerduty, alertmanager, webhooks } = config.notify;
  if (pagerduty) {
    notifiers.push(new PagerDutyNotifier({
      routingKey: pagerduty.routingKey,
      eventsUrl: pagerduty.eventsUrl,
      changeUrl: pagerduty.changeUrl,
      groupWaitMs: pagerduty.groupWaitMs,
      minSeverity: pagerduty.minSeverity,
      minSeverityOverrides: pagerduty.minSeverityOverrides,
      identity,
    }));
  }
  // Every Alertmanager of an HA cluster gets every alert, from its own channel: one that is down
  // never holds up the others. A channel is named by its URL, so reordering the list moves nothing.
  const { urls, minSeverity, minSeverityOverrides } = alertmanager ?? { urls: [], minSeverity: undefined, minSeverityOverrides: undefined };
  for (const url of urls) {
    const channel = urls.length === 1 ? 'alertmanager' : `alertmanager:${alertmanagerName(url)}`;
    notifiers.push(new AlertmanagerNotifier({ url, channel, minSeverity, minSeverityOverrides, identity }));
  }
  // Each webhook is its own outbox channel, so one slow receiver never holds up another.
  webhooks.forEach((webhook, i) => {
    const channel = webhook.name !== null ? `webhook:${webhook.name}` : i === 0 ? 'webhook' : `webhook-${i + 1}`;
    const { url, hmacSecret, minSeverity, minSeverityOverrides } = webhook;
    notifiers.push(new WebhookNotifier({ url, hmacSecret, channel, minSeverity, minSeverityOverrides, identity }));
  });
  return notifiers;
}

/** host:port and path of an Alertmanager's URL (what tells two members of a cluster apart). */
function alertmanagerName(url: string): string {
  const { host, pathname } = new URL(url);
  return `${host}${pathname.replace(/\/+$/, '')}`;
}
