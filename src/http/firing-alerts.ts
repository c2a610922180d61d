/**
 * pgvigil_alert_firing: pgvigil's conclusions as a metric, one series per firing alert with the
 * alert's identifying labels, so Prometheus can graph and alert on them too. Kept current from
 * AlertStore transitions; a resolved alert's series disappears.
 */
import type { Alert } from '../domain/index.js';
import { labelName } from '../notify/alertmanager.js';
import { familyHeader, formatLabels } from './exposition.js';

export const ALERT_FIRING_METRIC = 'pgvigil_alert_firing';
const HEADER = familyHeader(ALERT_FIRING_METRIC, 'gauge', 'Alerts pgvigil has firing (1 per alert), with the rule, severity and identifying labels.');
const OWN_LABELS = new Set(['target', 'rule', 'severity']);

export class FiringAlerts {
  private readonly lines = new Map<number, string>();

  update(alert: Alert): void {
    if (alert.state !== 'firing') {
      this.lines.delete(alert.id);
      return;
    }
    const pairs: Array<[string, string]> = [['target', alert.target], ['rule', alert.ruleId], ['severity', alert.severity]];
    for (const key of Object.keys(alert.labels).sort()) {
      const name = labelName(key);
      if (OWN_LABELS.has(name) || name.startsWith('__') || pairs.some(([n]) => n === name)) continue;
      pairs.push([name, alert.labels[key]!]);
    }
    this.lines.set(alert.id, `${ALERT_FIRING_METRIC}${formatLabels(pairs)} 1\n`);
  }

  render(): string {
    if (this.lines.size === 0) return '';
    // Two alerts whose labels differ only in characters label names cannot hold would print the
    // same series twice, which Prometheus rejects: print each line once.
    return HEADER + [...new Set(this.lines.values())].join('');
  }
}
