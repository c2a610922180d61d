/**
 * pgvigil_alert_firing: pgvigil's conclusions as a metric, one series per firing alert with the
 * alert's identifying labels, so Prometheus can graph and alert on them too. Kept current from
 * AlertStore transitions; a resolved alert's series disappears.
 *
 * pgvigil_alert_cause_info carries each firing alert's one-line summary (the cause, which is
 * the point of pgvigil) beside it, joined on `dedup_key`. It is a family of its own because a
 * summary changes while the alert lasts ("waited 6 s" -> "waited 11 s"): as a label of
 * pgvigil_alert_firing it would end the Prometheus alert and start a new one at each change. The
 * shipped alerting rule reads it in an annotation (dashboards/prometheus/pgvigil-alerts.rules.yml).
 * Summaries hold no literal values (rules build them from redacted statements: rule.ts), and
 * there is one series per open alert, so the label stays bounded.
 */
import type { Alert } from '../domain/index.js';
import { labelName } from '../notify/alertmanager.js';
import { familyHeader, formatLabels } from './exposition.js';

export const ALERT_FIRING_METRIC = 'pgvigil_alert_firing';
export const ALERT_CAUSE_METRIC = 'pgvigil_alert_cause_info';
const FIRING_HEADER = familyHeader(ALERT_FIRING_METRIC, 'gauge', 'Alerts pgvigil has firing (1 per alert), with the rule, severity, dedup key and identifying labels.');
const SUMMARY_HEADER = familyHeader(ALERT_CAUSE_METRIC, 'gauge', 'The summary of each firing alert (always 1), joined to pgvigil_alert_firing on dedup_key.');
const OWN_LABELS = new Set(['target', 'rule', 'severity', 'dedup_key', 'summary']);

interface AlertLines {
  firing: string;
  summary: string;
}

export class FiringAlerts {
  private readonly lines = new Map<number, AlertLines>();

  update(alert: Alert): void {
    if (alert.state !== 'firing') {
      this.lines.delete(alert.id);
      return;
    }
    const identity: Array<[string, string]> = [['target', alert.target], ['rule', alert.ruleId], ['dedup_key', alert.dedupKey]];
    const pairs: Array<[string, string]> = [...identity, ['severity', alert.severity]];
    for (const key of Object.keys(alert.labels).sort()) {
      const name = labelName(key);
      if (OWN_LABELS.has(name) || name.startsWith('__') || pairs.some(([n]) => n === name)) continue;
      pairs.push([name, alert.labels[key]!]);
    }
    this.lines.set(alert.id, {
      firing: `${ALERT_FIRING_METRIC}${formatLabels(pairs)} 1\n`,
      summary: `${ALERT_CAUSE_METRIC}${formatLabels([...identity, ['summary', alert.summary]])} 1\n`,
    });
  }

  render(): string {
    if (this.lines.size === 0) return '';
    // Two alerts whose labels differ only in characters label names cannot hold would print the
    // same series twice, which Prometheus rejects: print each line once.
    const all = [...this.lines.values()];
    return FIRING_HEADER + [...new Set(all.map((l) => l.firing))].join('') +
      SUMMARY_HEADER + [...new Set(all.map((l) => l.summary))].join('');
  }
}
