/**
 * The client sessions whose transactions have been open longest (pg_stat_activity.xact_start),
 * with the relation locks each holds (pg_locks). A transaction keeps every lock it took until it
 * ends, with or without an xmin, so these are who a blocked ALTER TABLE or DROP waits for.
 * Server scope: pg_stat_activity and pg_locks are cluster-wide.
 *
 * Left out before the oldest few are kept, so that a normal day's long runs never push the real
 * holder out of the list: every process that is not a client backend (walsenders, pg_basebackup,
 * autovacuum, logical replication workers, parallel workers, judged by their leader), pg_dump
 * (one REPEATABLE READ transaction per dump, by design), lazy VACUUM and ANALYZE, CREATE INDEX
 * and REINDEX CONCURRENTLY (maintenance that takes only locks that let writes go on), and
 * pgvigil's own connections. VACUUM FULL and a plain CREATE INDEX stay: they block writers.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { POLLER_APPLICATION_NAME } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num } from './row.js';

/** Sessions reported, the oldest transactions first. */
export const LONG_TRANSACTIONS_REPORTED = 5;
const QUERY_LABEL_CHARS = 100;

// pg_locks is read once, for the few sessions kept. Modes from the weakest to the strongest;
// SERIALIZABLE's SIReadLock blocks nobody.
export const LONG_TRANSACTIONS_SQL = `
WITH oldest AS (
  SELECT a.pid, a.datname, a.usename, a.application_name, a.state,
         extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_seconds,
         left(regexp_replace(a.query, '\\s+', ' ', 'g'), ${QUERY_LABEL_CHARS}) AS query
  FROM pg_stat_activity a
  WHERE a.backend_type = 'client backend'
    AND a.xact_start IS NOT NULL
    AND a.pid <> pg_backend_pid()
    AND a.application_name IS DISTINCT FROM '${POLLER_APPLICATION_NAME}'
    AND a.application_name IS DISTINCT FROM 'pg_dump'
    AND NOT coalesce(
      (a.query ~* '^\\s*(vacuum|analy[sz]e)\\M' AND a.query !~* '^\\s*vacuum\\s*(full\\M|\\([^)]*\\mfull\\M)')
      OR a.query ~* '^\\s*(create\\s+(unique\\s+)?index|reindex)\\M[^;]*\\mconcurrently\\M',
      false)
  ORDER BY a.xact_start
  LIMIT $1
)
SELECT o.*, coalesce(l.relation_locks, 0) AS relation_locks, l.strongest_lock
FROM oldest o
LEFT JOIN (
  SELECT pid, count(*)::int AS relation_locks,
         (array_agg(mode ORDER BY array_position(ARRAY['AccessShareLock', 'RowShareLock', 'RowExclusiveLock',
           'ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'], mode) DESC NULLS LAST))[1] AS strongest_lock
  FROM pg_locks
  WHERE granted AND locktype = 'relation' AND mode <> 'SIReadLock' AND pid IN (SELECT pid FROM oldest)
  GROUP BY pid
) l USING (pid)
ORDER BY o.xact_age_seconds DESC`;

const P = 'pg_long_transactions';
export const LONG_TRANSACTIONS_METRICS = metricDefs(P, {
  xact_age_seconds: gauge(
    `How long the session's transaction has been open, by the server's clock; the ${LONG_TRANSACTIONS_REPORTED} oldest client sessions ` +
    '(labels datname, usename, application_name, state, strongest_lock; the store also keeps pid and query).',
  ),
  relation_locks: gauge('Relation locks (tables, indexes, sequences) the session holds, granted.'),
});

/** Pure: rows of LONG_TRANSACTIONS_SQL -> samples. */
export function mapLongTransactions(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const M = LONG_TRANSACTIONS_METRICS;
  for (const row of rows) {
    const labels = { pid: label(row, 'pid'), datname: label(row, 'datname'), usename: label(row, 'usename'), application_name: label(row, 'application_name') };
    b.add(M.xact_age_seconds, { ...labels, state: label(row, 'state'), strongest_lock: label(row, 'strongest_lock'), query: label(row, 'query') }, num(row, 'xact_age_seconds'));
    b.add(M.relation_locks, labels, num(row, 'relation_locks'));
  }
  return b.samples;
}

export function pgLongTransactionsCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 15_000,
    metrics: Object.values(LONG_TRANSACTIONS_METRICS),
    sql: () => LONG_TRANSACTIONS_SQL,
    params: [LONG_TRANSACTIONS_REPORTED],
    map: mapLongTransactions,
  }, options);
}
