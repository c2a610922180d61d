/**
 * `pgvigil notify test` (and `check --notify`): a test alert triggered and then resolved through
 * every configured channel, sent straight to the receiver (not through the outbox: the operator
 * wants the receiver's answer now, and nothing is stored), so a wrong routing key, a closed
 * firewall or a proxy in the way shows before the first real page is lost. Sent whatever the
 * channel's min_severity: a channel that would never page cannot be tested otherwise.
 */
import type { Alert, AlertTransition, Clock } from '../domain/index.js';
import type { CheckResult } from '../cli/check-results.js';
import type { DeliveryResult, Notification, Notifier } from './notifier.js';

export const TEST_RULE_ID = 'pgvigil-notify-test';

/** The test alert, on the first target, at `nowMs`; its dedup key is unique to this run. */
export function testAlert(target: string, nowMs: number): Alert {
  return {
    id: 0, ruleId: TEST_RULE_ID, dedupKey: `${TEST_RULE_ID}/${target}/${nowMs}`, severity: 'critical', state: 'firing', target,
    labels: { test: 'true' },
    summary: `pgvigil notify test on ${target}: this alert was sent by hand to check delivery; it resolves at once`,
    evidence: { eventIds: [], series: [], facts: { sent_by: 'pgvigil notify test' } },
    startedMs: nowMs, updatedMs: nowMs, resolvedMs: null,
  };
}

/** What a channel is told for the alert's trigger and for its resolve, in its own grouping. */
export function testNotifications(notifier: Pick<Notifier, 'groupBy'>, alert: Alert, resolvedMs: number): [Notification, Notification] {
  const resolved: Alert = { ...alert, state: 'resolved', resolvedMs, updatedMs: resolvedMs };
  const transition = (a: Alert, to: AlertTransition['to'], tsMs: number): AlertTransition => ({ ...a, alertId: a.id, to, tsMs });
  if (notifier.groupBy === 'alert') {
    return [
      { kind: 'alert', alert, transition: transition(alert, 'firing', alert.startedMs) },
      { kind: 'alert', alert: resolved, transition: transition(resolved, 'resolved', resolvedMs) },
    ];
  }
  const incident = (a: Alert, state: 'firing' | 'resolved', tsMs: number): Notification => ({
    kind: 'incident',
    incident: { dedupKey: a.dedupKey, ruleId: a.ruleId, target: a.target, state, startedMs: a.startedMs, severity: a.severity, members: [a], cause: transition(a, state, tsMs) },
  });
  return [incident(alert, 'firing', alert.startedMs), incident(resolved, 'resolved', resolvedMs)];
}

function describe(result: DeliveryResult): string {
  if (result.outcome === 'accepted') return `accepted (HTTP ${result.status})`;
  return `${result.outcome === 'retry' ? 'failed' : 'rejected'}${result.status === null ? '' : ` (HTTP ${result.status})`}: ${result.reason}`;
}

const HINTS: Record<string, string> = {
  pagerduty: 'a 400 is a wrong routing_key (an Events API v2 integration key of the service); a network error, a firewall or a missing HTTPS_PROXY',
  alertmanager: 'is Alertmanager listening at that URL (its base URL, e.g. http://alertmanager:9093)?',
  webhook: 'does the receiver answer 2xx to a POST at that URL?',
};

/** Triggers and resolves the test alert on each channel in turn; one result per channel. */
export async function sendTestNotifications(notifiers: readonly Notifier[], target: string, clock: Clock): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const notifier of notifiers) {
    const alert = testAlert(target, clock.nowMs());
    const said: string[] = [];
    let failed = false;
    for (const notification of testNotifications(notifier, alert, clock.nowMs())) {
      const outbound = notifier.format(notification);
      if (outbound === null) continue;
      const result = await notifier.send(outbound.payload, clock.nowMs());
      said.push(`${outbound.action} ${describe(result)}`);
      // A resolve of a trigger that did not arrive says nothing more.
      if (result.outcome !== 'accepted') {
        failed = true;
        break;
      }
    }
    const kind = notifier.channel.replace(/[:-].*$/, '');
    results.push({ aspect: `notify ${notifier.channel}`, state: failed ? 'fail' : 'ok', message: said.join(', '), ...(failed ? { hint: HINTS[kind] ?? 'see the receiver\'s answer above' } : {}) });
  }
  return results;
}
