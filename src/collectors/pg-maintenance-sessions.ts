/**
 * Table rewrites running now, seen in pg_stat_activity: REPACK (CONCURRENTLY or not) and its PG 19
 * decoding worker, VACUUM FULL, CLUSTER, the pg_repack client and pg_squeeze workers
 * (maintenance-kind.ts). Each with its pid, leader (a decoding worker's leader_pid is its REPACK
 * session), database, wait event, transaction start and the XID age it pins in its database.
 * Server scope: pg_stat_activity is cluster-wide.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { POLLER_APPLICATION_NAME } from './collector.js';
import { classifyMaintenance, type MaintenanceKind } from './maintenance-kind.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num, text } from './row.js';

const KINDS: readonly MaintenanceKind[] = [
  'repack_concurrently', 'repack', 'repack_decoding_worker', 'vacuum_full', 'cluster', 'pg_repack', 'pg_squeeze_worker',
];
const QUERY_LABEL_CHARS = 100;

// A coarse filter; classifyMaintenance decides. Idle sessions show their last query: skipped.
export const MAINTENANCE_SESSIONS_SQL = `
SELECT a.pid, a.leader_pid, a.datname, a.usename, a.application_name, a.backend_type, a.state,
       a.wait_event_type, a.wait_event,
       extract(epoch FROM a.xact_start)::float8 AS xact_start,
       greatest(age(a.backend_xmin), age(a.backend_xid)) AS xmin_age_xids,
       left(a.query, 2000) AS query
FROM pg_stat_activity a
WHERE a.pid <> pg_backend_pid()
  AND a.application_name IS DISTINCT FROM '${POLLER_APPLICATION_NAME}'
  AND (a.backend_type IN ('REPACK decoding worker', 'squeeze worker')
       OR a.application_name = 'pg_repack'
       OR (a.state IS DISTINCT FROM 'idle' AND a.query ~* '\\y(repack|vacuum|cluster)\\y'))
ORDER BY a.pid`;

const P = 'pg_maintenance_sessions';
const M = metricDefs(P, {
  info: gauge('Always 1 per kind of session running; labels kind, datname, user, application, state, wait event (the store also keeps pid, leader_pid and query).'),
  xact_start_timestamp_seconds: gauge('When the session\'s transaction started, epoch seconds.'),
  xmin_age_xids: gauge('Age of the session\'s xmin / xid: what it keeps vacuum from removing in its database.'),
  running: gauge('Sessions of each kind running now.'),
});

/** Pure: rows of MAINTENANCE_SESSIONS_SQL -> samples. */
export function mapMaintenanceSessions(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const running = new Map<MaintenanceKind, number>(KINDS.map((k) => [k, 0]));
  for (const row of rows) {
    const query = text(row, 'query');
    const kind = classifyMaintenance({
      backendType: text(row, 'backend_type'),
      applicationName: text(row, 'application_name'),
      query,
    });
    if (kind === null) continue;
    running.set(kind, (running.get(kind) ?? 0) + 1);
    const labels = { kind, pid: label(row, 'pid'), datname: label(row, 'datname') };
    b.add(M.info, {
      ...labels,
      leader_pid: label(row, 'leader_pid'),
      usename: label(row, 'usename'),
      application_name: label(row, 'application_name'),
      backend_type: label(row, 'backend_type'),
      state: label(row, 'state'),
      wait_event_type: label(row, 'wait_event_type'),
      wait_event: label(row, 'wait_event'),
      query: (query ?? '').replace(/\s+/g, ' ').trim().slice(0, QUERY_LABEL_CHARS),
    }, 1);
    b.add(M.xact_start_timestamp_seconds, labels, num(row, 'xact_start'));
    b.add(M.xmin_age_xids, labels, num(row, 'xmin_age_xids'));
  }
  for (const [kind, count] of running) b.add(M.running, { kind }, count);
  return b.samples;
}

export function pgMaintenanceSessionsCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 5_000,
    metrics: Object.values(M),
    sql: () => MAINTENANCE_SESSIONS_SQL,
    map: mapMaintenanceSessions,
  }, options);
}
