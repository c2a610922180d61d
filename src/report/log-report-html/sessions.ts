/**
 * Sessions and connections (pgBadger's "Connections" and "Sessions"): connections per user,
 * database, application and host, the most sessions open at once, how long sessions lasted, and
 * authentication failures; per minute connections, disconnections and failures. Pure.
 */
import type { NameCount, SessionsResult, SessionTimeRow } from '../log-report/sessions.js';
import { count, seconds } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_CONNECTIONS = 'no connection line: set log_connections = on (PostgreSQL 18: log_connections = all) and log_disconnections = on';

export function sessionsSection(result: SessionsResult, window: TimeWindow): PageSection {
  const { connections, disconnections, session_time: time, auth_failures: failures } = result;
  const title = `Sessions and connections: ${count(connections.total)}`;
  if (result.received + connections.total + disconnections.total + failures.total === 0) return { id: 'sessions', title, body: absent(NO_CONNECTIONS) };
  const peak = result.peak_concurrent_sessions;
  return {
    id: 'sessions',
    title,
    body: [
      chartGrid([minuteChart('sessions_per_minute', 'Connections, disconnections and authentication failures per minute', 'count', result.per_minute, [
        { counter: 'connections', label: 'connections' }, { counter: 'disconnections', label: 'disconnections' }, { counter: 'auth_failures', label: 'authentication failures' },
      ], NO_CONNECTIONS)], window),
      factsTable([
        ['connections received', count(result.received)],
        ['connections authorized', `${count(connections.total)} (replication ${count(connections.replication)}, refused after authorization ${count(connections.refused_after_authorization)})`],
        ['disconnections', count(disconnections.total)],
        ['peak concurrent sessions', peak === null ? '-' : `${count(peak.count)} at ${peak.minute}${peak.opened_before_log > 0 ? ` (${count(peak.opened_before_log)} opened before the log)` : ''}`],
        ['session time', time.count === 0 ? '-' : `${count(time.count)} sessions, ${seconds(time.total_s)} s, mean ${seconds(time.mean_s)} s, longest ${seconds(time.max_s)} s`],
        ['authentication failures', count(failures.total)],
      ]),
      subheading('Connections by user, database, application and host'),
      htmlTable<[string, NameCount[]]>([
        { header: 'by', align: 'left', cell: ([by]) => by },
        { header: 'connections', align: 'left', cell: ([, names]) => namesText(names) },
      ], [['user', connections.by_user], ['database', connections.by_database], ['application', connections.by_application], ['host', connections.by_host]], NO_CONNECTIONS),
      subheading('Session time by user and database'),
      htmlTable<[string, SessionTimeRow]>([
        { header: 'by', align: 'left', cell: ([by, r]) => `${by} ${r.name}` },
        { header: 'sessions', align: 'right', cell: ([, r]) => count(r.count) },
        { header: 'total s', align: 'right', cell: ([, r]) => seconds(r.total_s) },
        { header: 'mean s', align: 'right', cell: ([, r]) => seconds(r.mean_s) },
        { header: 'max s', align: 'right', cell: ([, r]) => seconds(r.max_s) },
      ], [...time.by_user.map((r): [string, SessionTimeRow] => ['user', r]), ...time.by_database.map((r): [string, SessionTimeRow] => ['database', r])],
      'no session ended in this log: log_disconnections = on logs each one with its duration'),
      subheading('Authentication failures'),
      failures.total === 0 ? absent('no authentication failure') : factsTable([
        ['by reason', namesText(failures.by_reason)],
        ['by user', namesText(failures.by_user)],
        ['by host', namesText(failures.by_host)],
      ]),
    ].join('\n'),
  };
}

/** "app 40, postgres 2", most first; "-" when none. */
function namesText(names: readonly NameCount[]): string {
  return names.length === 0 ? '-' : names.map((n) => `${n.name} ${count(n.count)}`).join(', ');
}
