/**
 * The alerts of `pgvigil analyze --rules` (the rules replayed over the log): their JSON form and
 * the "Alerts" section of the text. Pure: alerts in, text out. Times are UTC ISO strings, so the
 * output is the same in every time zone.
 */
import type { AlertBasis, Severity } from '../domain/index.js';

/** One alert as `analyze --json` prints it; evidence events are positions in the log files. */
export interface OfflineAlert {
  rule: string;
  severity: Severity;
  target: string;
  summary: string;
  started_at: string;
  /** Null: still open at the end of the log. */
  ended_at: string | null;
  basis: AlertBasis;
  evidence: {
    events: Array<{ file: string; line: number | null }>;
    series: Array<{ name: string; labels: Record<string, string>; value: number | null; ts: string }>;
    facts: Record<string, string | number | boolean | null>;
  };
}

/** Evidence positions shown per alert in the text; the JSON has them all. */
const MAX_POSITIONS = 5;

/** The "Alerts" section as text lines (a blank line, the title, the alerts); none without --rules. */
export function renderAlertsSection(alerts: readonly OfflineAlert[] | undefined): string[] {
  if (alerts === undefined) return [];
  const out = ['', `Alerts (${alerts.length})`];
  if (alerts.length === 0) out.push('  none: no rule fired on this log');
  for (const a of alerts) {
    const until = a.ended_at === null ? 'still open at the end of the log' : `to ${a.ended_at}`;
    out.push(`  ${a.severity.toUpperCase()} ${a.rule} (basis: ${a.basis}) from ${a.started_at} ${until}`);
    out.push(`    ${a.summary}`);
    const positions = a.evidence.events.map((e) => (e.line === null ? e.file : `${e.file}:${e.line}`));
    if (positions.length > 0) {
      const more = positions.length > MAX_POSITIONS ? ` (+${positions.length - MAX_POSITIONS} more)` : '';
      out.push(`    evidence: ${positions.slice(0, MAX_POSITIONS).join(', ')}${more}`);
    }
    const certainWith = a.evidence.facts.would_be_certain_with;
    if (typeof certainWith === 'string') out.push(`    would be certain with: ${certainWith}`);
  }
  return out;
}
