/**
 * The demo's terminal story: one line per alert as it fires and as it resolves, from successive
 * reads of /api/alerts. Pure: the caller fetches and prints.
 */

/** An alert as /api/alerts returns it (the fields the story needs). */
export interface ApiAlert {
  id: number;
  rule_id: string;
  severity: string;
  state: 'firing' | 'resolved';
  target: string;
  summary: string;
}

export interface AlertLine {
  id: number;
  state: 'firing' | 'resolved';
  text: string;
}

/**
 * The lines to print since the last read: an alert seen firing for the first time, and one seen
 * resolved that was firing (or first seen already resolved: it fired and resolved between two
 * reads). `printed` (alert id -> last state printed) is updated in place.
 */
export function alertLines(alerts: readonly ApiAlert[], printed: Map<number, string>, pageUrl: (id: number) => string): AlertLine[] {
  const lines: AlertLine[] = [];
  // /api/alerts lists the newest first; the story reads oldest first.
  for (const alert of [...alerts].sort((a, b) => a.id - b.id)) {
    const last = printed.get(alert.id);
    if (alert.state === 'firing' && last === undefined) {
      lines.push({ id: alert.id, state: 'firing', text: `FIRING   ${alert.rule_id} (${alert.severity}, ${alert.target}): ${alert.summary}\n         ${pageUrl(alert.id)}` });
    } else if (alert.state === 'resolved' && last !== 'resolved') {
      lines.push({ id: alert.id, state: 'resolved', text: `RESOLVED ${alert.rule_id} (${alert.target}): ${alert.summary}` });
    } else {
      continue;
    }
    printed.set(alert.id, alert.state);
  }
  return lines;
}
