/**
 * pg_total_relation_size (heap, TOAST and every index) of the largest tables of every database,
 * every 5 minutes. It opens each index and the TOAST table and stat()s every fork and segment of
 * them all: ~15 us a table on a warm connection, ~3x that on a fresh one, which every 15 s for
 * 200 tables a database would cost more than the rest of pg_stat_user_tables. Total sizes grow
 * slowly; the heap alone, cheap to read, is pg_stat_user_tables_relation_size_bytes every 15 s.
 *
 * The tables: the `maxTables` largest by estimated total size (pg_class.relpages of the heap,
 * its TOAST table and its indexes), the same cap as pg_stat_user_tables. A table whose heap,
 * TOAST table or index someone holds or awaits ACCESS EXCLUSIVE on (VACUUM FULL, REINDEX, DROP,
 * REPACK's swap) reads NULL: the function would queue behind the lock.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { majorVersion } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { LOCKED_RELATIONS_CTE, userTablesFrom } from './pg-stat-user-tables.js';
import { queryCollector } from './query-collector.js';
import { label, num } from './row.js';

export function totalRelationSizeSql(major: number): string {
  return `
WITH largest AS (
  SELECT u.oid, u.reltoastrelid, u.schemaname, u.relname
  FROM (SELECT c.oid, c.reltoastrelid, c.relpages, n.nspname AS schemaname, c.relname FROM ${userTablesFrom(major)}) u
  LEFT JOIN pg_class t ON t.oid = u.reltoastrelid
  LEFT JOIN (SELECT x.indrelid, sum(i.relpages) AS relpages
             FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid GROUP BY x.indrelid) ix ON ix.indrelid = u.oid
  ORDER BY u.relpages::bigint + coalesce(t.relpages, 0) + coalesce(ix.relpages, 0) DESC, u.oid
  LIMIT $1
), ${LOCKED_RELATIONS_CTE}
SELECT r.schemaname, r.relname,
       CASE WHEN NOT EXISTS (
         SELECT 1 FROM locked l
         WHERE l.relation IN (r.oid, r.reltoastrelid)
            OR l.relation IN (SELECT x.indexrelid FROM pg_index x WHERE x.indrelid = r.oid))
       THEN pg_total_relation_size(r.oid) END AS bytes
FROM largest r`;
}

const P = 'pg_total_relation_size';
const M = metricDefs(P, {
  bytes: gauge('pg_total_relation_size: heap, TOAST and indexes of the largest tables, every 5 minutes (NULL while ACCESS EXCLUSIVE is held or awaited).'),
});

export interface TotalRelationSizeOptions extends CollectorOptions {
  /** Tables per database (config collectors.max_tables_per_database). */
  maxTables?: number;
}

export function pgTotalRelationSizeCollector(options: TotalRelationSizeOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 300_000,
    metrics: Object.values(M),
    sql: (server) => totalRelationSizeSql(majorVersion(server)),
    params: [options.maxTables ?? 200],
    map: (rows, ctx) => {
      const b = new SampleBuilder(ctx.target, ctx.nowMs);
      const datname = ctx.database ?? '';
      for (const row of rows) b.add(M.bytes, { datname, schemaname: label(row, 'schemaname'), relname: label(row, 'relname') }, num(row, 'bytes'));
      return b.samples;
    },
  }, options);
}
