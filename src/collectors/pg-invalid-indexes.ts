/**
 * Invalid indexes (pg_index.indisvalid = false) in every database: what a failed or cancelled
 * CREATE INDEX CONCURRENTLY leaves, or a REINDEX CONCURRENTLY (its `_ccnew` copy before the
 * swap, the `_ccold` one after it). The planner never uses one; a retried CREATE INDEX
 * CONCURRENTLY of the same name fails with "already exists" (or, with IF NOT EXISTS, does
 * nothing). One whose build got as far as indisready = true is maintained on every write; one
 * whose build failed (a unique index over duplicate keys: recorded on 13 to 19) stays indisready = false
 * and costs only its name.
 *
 * An index being built right now is invalid too, so each is marked as worked on while a CREATE
 * INDEX or REINDEX runs on its table (pg_stat_progress_create_index, PG 12+: every version
 * pgvigil reads) or while someone holds or awaits SHARE UPDATE EXCLUSIVE or stronger on the index
 * itself (DROP INDEX [CONCURRENTLY], REINDEX, ALTER INDEX; queries take weaker locks). A
 * partitioned index (relkind 'I') is left out: it stays invalid on purpose until every
 * partition's index is attached, and has no storage.
 *
 * Primaries only: a standby shows the primary's catalogs but neither its progress rows nor its
 * locks, so an index being built there would look abandoned. At most MAX_INDEXES per database
 * (the largest first) get series; `indexes` counts them all.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { flag, label, num, requiredNum, text } from './row.js';

/** Per-index series kept per database: invalid indexes are few unless a migration tool loops. */
export const MAX_INDEXES = 50;

// The search_path is pinned to pg_catalog (src/lib/pg-connection.ts); the names are qualified all the same.
export const INVALID_INDEXES_SQL = `
WITH db AS (SELECT oid FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database()),
invalid AS (
  SELECT i.indexrelid, i.indrelid, i.indisready, n.nspname::text AS schemaname, t.relname::text AS relname,
         c.relname::text AS indexrelname, c.relpages
  FROM pg_catalog.pg_index i
  JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
  JOIN pg_catalog.pg_class t ON t.oid = i.indrelid
  JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
  WHERE NOT i.indisvalid AND c.relkind = 'i'
),
kept AS (SELECT * FROM invalid ORDER BY relpages DESC, indexrelid LIMIT $1),
locks AS (
  SELECT l.relation, l.mode FROM pg_catalog.pg_locks l
  WHERE l.locktype = 'relation' AND l.database = (SELECT oid FROM db)
    AND l.relation IN (SELECT indexrelid FROM kept UNION ALL SELECT indrelid FROM kept)
)
SELECT (SELECT count(*) FROM invalid)::int AS indexes_total,
       k.schemaname, k.relname, k.indexrelname, k.indisready AS ready,
       EXISTS (SELECT 1 FROM pg_catalog.pg_stat_progress_create_index p WHERE p.datid = (SELECT oid FROM db) AND p.relid = k.indrelid)
         OR EXISTS (SELECT 1 FROM locks l WHERE l.relation = k.indexrelid
                      AND l.mode IN ('ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'))
         AS worked_on,
       -- pg_relation_size takes ACCESS SHARE: it would queue behind an ACCESS EXCLUSIVE held or awaited.
       CASE WHEN NOT EXISTS (SELECT 1 FROM locks l WHERE l.relation IN (k.indexrelid, k.indrelid) AND l.mode = 'AccessExclusiveLock')
            THEN pg_catalog.pg_relation_size(k.indexrelid) END AS size_bytes
FROM (SELECT 1) one
LEFT JOIN kept k ON true`;

const P = 'pg_invalid_indexes';
export const INVALID_INDEX_METRICS = metricDefs(P, {
  left_behind: gauge('One per invalid index: 1 when nothing works on it (left by a failed or cancelled build), 0 while a CREATE INDEX or REINDEX runs on its table or a DROP / REINDEX / ALTER holds it.'),
  ready: gauge('1 when the invalid index is maintained on every write (indisready), 0 when its build failed before that.'),
  size_bytes: gauge('pg_relation_size of the invalid index (NULL while ACCESS EXCLUSIVE is held or awaited on it or its table).'),
  indexes: gauge('Invalid indexes in this database, those being built included.'),
  indexes_omitted: gauge(`Invalid indexes left out of the per-index series (at most ${MAX_INDEXES} per database, the largest).`),
});

/** Pure: rows of INVALID_INDEXES_SQL -> samples. */
export function mapInvalidIndexes(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const M = INVALID_INDEX_METRICS;
  const datname = ctx.database ?? '';
  let total = 0;
  let kept = 0;
  for (const row of rows) {
    total = requiredNum(row, 'indexes_total');
    // The one row of a database without invalid indexes carries only the count.
    if (text(row, 'indexrelname') === null) continue;
    kept++;
    const labels = { datname, schemaname: label(row, 'schemaname'), relname: label(row, 'relname'), indexrelname: label(row, 'indexrelname') };
    const workedOn = flag(row, 'worked_on');
    b.add(M.left_behind, labels, workedOn === null ? null : 1 - workedOn);
    b.add(M.ready, labels, flag(row, 'ready'));
    b.add(M.size_bytes, labels, num(row, 'size_bytes'));
  }
  b.add(M.indexes, { datname }, total);
  b.add(M.indexes_omitted, { datname }, total - kept);
  return b.samples;
}

export function pgInvalidIndexesCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 60_000,
    metrics: Object.values(INVALID_INDEX_METRICS),
    supports: (server) => !server.inRecovery,
    sql: () => INVALID_INDEXES_SQL,
    params: [MAX_INDEXES],
    map: mapInvalidIndexes,
  }, options);
}
