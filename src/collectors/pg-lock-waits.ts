/**
 * Sessions waiting on heavyweight locks and whom they wait for (pg_blocking_pids), and the
 * longest wait per relation. Per database: relation names resolve only in their own database.
 * A row-lock wait waits on the holder's transactionid; the relation then comes from the tuple
 * lock the waiter holds.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { majorVersion } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { LOCK_WAIT_SESSIONS_REPORTED } from '../domain/series-limits.js';
import { queryCollector } from './query-collector.js';
import { label, num } from './row.js';

const ROW_LIMIT = 1000;

export function lockWaitsSql(major: number): string {
  // PG 14+: pg_locks.waitstart; 13 has only the query's start, an upper bound of the wait.
  const waitStart = major >= 14 ? 'coalesce(w.waitstart, a.query_start)' : 'a.query_start';
  return `
SELECT a.pid, a.usename, a.application_name, w.locktype, w.mode, n.nspname AS schemaname, c.relname,
       array_to_string(pg_blocking_pids(a.pid), ',') AS blocking_pids,
       extract(epoch FROM now() - ${waitStart})::float8 AS wait_seconds,
       left(regexp_replace(a.query, '\\s+', ' ', 'g'), 100) AS query
FROM pg_stat_activity a
JOIN LATERAL (SELECT * FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted LIMIT 1) w ON true
LEFT JOIN pg_class c ON c.oid = coalesce(
  w.relation, (SELECT t.relation FROM pg_locks t WHERE t.pid = a.pid AND t.locktype = 'tuple' AND t.granted LIMIT 1))
LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE a.wait_event_type = 'Lock' AND a.datname = current_database()
ORDER BY wait_seconds DESC NULLS LAST
LIMIT ${ROW_LIMIT}`;
}

const P = 'pg_lock_waits';
const M = metricDefs(P, {
  session_wait_seconds: gauge('How long sessions have waited for their lock, the longest per user, application, lock and relation (the store also keeps pid, blocking_pids and query).'),
  relation_max_wait_seconds: gauge('Longest current lock wait on the relation.'),
  relation_waiters: gauge('Sessions waiting for a lock on the relation.'),
  sessions: gauge('Sessions waiting for a heavyweight lock in the database.'),
  max_wait_seconds: gauge('Longest current lock wait in the database (0 when none).'),
});

/** Pure: rows of lockWaitsSql (longest wait first) -> samples. */
export function mapLockWaits(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const datname = ctx.database ?? '';
  const relations = new Map<string, { schemaname: string; relname: string; maxWait: number | null; waiters: number }>();
  let maxWait = 0;
  rows.forEach((row, i) => {
    const wait = num(row, 'wait_seconds');
    if (wait !== null) maxWait = Math.max(maxWait, wait);
    const schemaname = label(row, 'schemaname');
    const relname = label(row, 'relname');
    if (i < LOCK_WAIT_SESSIONS_REPORTED) {
      b.add(M.session_wait_seconds, {
        datname, pid: label(row, 'pid'), usename: label(row, 'usename'), application_name: label(row, 'application_name'),
        locktype: label(row, 'locktype'), mode: label(row, 'mode'), schemaname, relname,
        blocking_pids: label(row, 'blocking_pids'), query: label(row, 'query'),
      }, wait);
    }
    if (relname === '') return;
    const key = `${schemaname}.${relname}`;
    const rel = relations.get(key) ?? { schemaname, relname, maxWait: null, waiters: 0 };
    rel.waiters += 1;
    if (wait !== null && (rel.maxWait === null || wait > rel.maxWait)) rel.maxWait = wait;
    relations.set(key, rel);
  });
  for (const rel of relations.values()) {
    const labels = { datname, schemaname: rel.schemaname, relname: rel.relname };
    b.add(M.relation_max_wait_seconds, labels, rel.maxWait);
    b.add(M.relation_waiters, labels, rel.waiters);
  }
  b.add(M.sessions, { datname }, rows.length);
  b.add(M.max_wait_seconds, { datname }, maxWait);
  return b.samples;
}

export function pgLockWaitsCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 5_000,
    metrics: Object.values(M),
    activeDatabasesSql: () => "SELECT DISTINCT datname FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname IS NOT NULL",
    sql: (server) => lockWaitsSql(majorVersion(server)),
    map: mapLockWaits,
  }, options);
}
