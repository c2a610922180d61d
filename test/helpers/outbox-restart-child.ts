/**
 * A pgvigil-like process for the outbox restart tests: an AlertStore and an Outbox on the store
 * at STORE, delivering to one receiver (PagerDuty at URL with ROUTING_KEY, or a webhook at URL).
 * It reads commands on stdin (`fire KEY`, `resolve KEY`) and answers `ok` once each is committed;
 * the tests kill it with SIGKILL (test/helpers/outbox-child.ts starts and kills it).
 * Usage: node --import tsx outbox-restart-child.ts STORE pagerduty|webhook URL [ROUTING_KEY]
 */
import { createInterface } from 'node:readline';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { Outbox } from '../../src/notify/outbox.js';
import { PagerDutyNotifier } from '../../src/notify/pagerduty.js';
import { WebhookNotifier } from '../../src/notify/webhook.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore } from '../../src/store/open-store.js';

const [storeFile, channel, url, routingKey] = process.argv.slice(2) as [string, string, string, string | undefined];
const db = openStore(storeFile);
const notifier: Notifier = channel === 'pagerduty'
  ? new PagerDutyNotifier({ routingKey: routingKey!, eventsUrl: url, groupWaitMs: 0, requestTimeoutMs: 2_000 })
  : new WebhookNotifier({ url, requestTimeoutMs: 2_000 });
const notifiers = [notifier];
const alerts = new AlertStore(db, notifiers);
const outbox = new Outbox(db, notifiers, systemClock, silentLogger(), { pollIntervalMs: 50, backoff: { baseMs: 100, maxMs: 500 } });
alerts.onTransition(() => outbox.wake());
await outbox.start();
process.stdout.write('started\n');

for await (const line of createInterface({ input: process.stdin })) {
  const [command, key] = line.trim().split(' ') as [string, string];
  const nowMs = systemClock.nowMs();
  if (command === 'fire') {
    alerts.fire({ ruleId: 'replay-stalled', dedupKey: key, severity: 'critical', target: 'standby1', labels: { standby: 'standby1' }, summary: `replay stalled (${key})`, evidence: { eventIds: [], series: [], facts: { stalled_seconds: 95 } } }, nowMs);
  } else if (command === 'resolve') {
    alerts.resolve(key, nowMs);
  }
  process.stdout.write('ok\n');
}
