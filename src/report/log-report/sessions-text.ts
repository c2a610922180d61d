/**
 * The `Sessions` section of `pgvigil analyze`'s text: connections, the peak of concurrent
 * sessions, session times and refused logins, each on a line, the busiest names first.
 * Pure: result in, lines out.
 */
import { count, seconds } from '../text-format.js';
import type { NameCount, SessionsResult } from './sessions.js';

const NAMES = 5;

/** The section's lines (a blank line first), or none when the log had no session line. */
export function renderSessionsText(result: SessionsResult | undefined): string[] {
  if (result === undefined) return [];
  const { connections, disconnections, session_time: time, auth_failures: failures, peak_concurrent_sessions: peak } = result;
  if (result.received + connections.total + disconnections.total + failures.total === 0) return [];
  const lines = [
    `connections: ${count(connections.total)} (by user ${names(connections.by_user)}; by database ${names(connections.by_database)}; ` +
      `by application ${names(connections.by_application)}; by host ${names(connections.by_host)})`,
  ];
  if (connections.refused_after_authorization > 0) lines.push(`refused after authorization: ${count(connections.refused_after_authorization)}`);
  if (peak !== null) {
    lines.push(`peak concurrent sessions: ${count(peak.count)} in the minute of ${peak.minute}` +
      (peak.opened_before_log > 0 ? ` (${count(peak.opened_before_log)} opened before the log)` : ''));
  }
  if (time.count > 0) {
    lines.push(`sessions ended: ${count(time.count)}, mean ${seconds(time.mean_s)} s, longest ${seconds(time.max_s)} s`);
  }
  if (failures.total > 0) {
    lines.push(`refused logins: ${count(failures.total)} (by user ${names(failures.by_user)}; by host ${names(failures.by_host)}; by reason ${names(failures.by_reason)})`);
  }
  return ['', 'Sessions', ...lines.map((line) => `  ${line}`)];
}

function names(rows: readonly NameCount[]): string {
  return rows.length === 0 ? '-' : rows.slice(0, NAMES).map((row) => `${row.name} ${count(row.count)}`).join(', ');
}
