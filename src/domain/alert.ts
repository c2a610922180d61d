/**
 * Alert: a conclusion a rule reached, with the evidence that led to it.
 *
 * Glossary
 * - rule id: the rule's file name, e.g. `repack-holds-vacuum`.
 * - dedup key: rule id + the identifying labels (target, database, table...); one open alert per
 *   key. Notifiers use it as PagerDuty's dedup_key, so re-triggers update and resolves close.
 * - transition: firing -> resolved (or a re-fire); notifiers send transitions, not alerts.
 * - basis: what the conclusion rests on: the log alone (`log`), or the log and sampled series
 *   (`log+samples`). Derived from the evidence, so every rule and every stored alert has one.
 */
/**
 * The severity scale (docs/rules.md): critical, data or availability at risk now; error, users
 * affected now and it will not fix itself; warning, it will hurt if it lasts; info, a failure users
 * saw, explained, that needs no one at 3 am. Lowest first.
 */
export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** `severity` is `min` or above it on the scale. */
export function severityAtLeast(severity: Severity, min: Severity): boolean {
  return SEVERITIES.indexOf(severity) >= SEVERITIES.indexOf(min);
}

/**
 * The lowest severity each kind of channel is sent when its config names none: a page wakes
 * someone, so PagerDuty starts at error; Alertmanager and webhooks route further themselves.
 */
export const DEFAULT_MIN_SEVERITY = { pagerduty: 'error', alertmanager: 'warning', webhook: 'warning' } as const satisfies Record<string, Severity>;
export type AlertState = 'firing' | 'resolved';

export interface Evidence {
  /** Ids of stored events that support the conclusion. */
  eventIds: number[];
  /** Series names + labels that support it, with the values that crossed the line. */
  series: Array<{ name: string; labels: Record<string, string>; value: number | null; tsMs: number }>;
  /** Free-form facts shown to a human: { "slot": "pg_repack_1234", "held_seconds": 84 }. */
  facts: Record<string, string | number | boolean | null>;
}

export type AlertBasis = 'log' | 'log+samples';

/** `log+samples` when the evidence cites series, else `log`: an offline replay has only the log. */
export function basisOf(evidence: Evidence): AlertBasis {
  return evidence.series.length > 0 ? 'log+samples' : 'log';
}

export interface Alert {
  id: number;
  ruleId: string;
  dedupKey: string;
  severity: Severity;
  state: AlertState;
  target: string;
  labels: Record<string, string>;
  /** One line naming the cause, e.g. "REPACK on db1.orders held vacuum in 3 databases". */
  summary: string;
  evidence: Evidence;
  startedMs: number;
  updatedMs: number;
  resolvedMs: number | null;
}

export interface AlertTransition {
  alertId: number;
  dedupKey: string;
  ruleId: string;
  severity: Severity;
  target: string;
  labels: Record<string, string>;
  summary: string;
  evidence: Evidence;
  to: AlertState;
  tsMs: number;
}
