/**
 * Table rewrites in progress: PG 19's pg_stat_progress_repack (REPACK, and VACUUM FULL / CLUSTER
 * which now run the same code), or pg_stat_progress_cluster in 13-18 (CLUSTER, VACUUM FULL).
 * Exported under one name so dashboards and rules need no version switch. In 19 a REPACK
 * (CONCURRENTLY) goes through `catch-up` (applying concurrent changes decoded from WAL), and sits
 * in `catch-up` while it waits for its final ACCESS EXCLUSIVE lock (measured on 19rc1).
 * Per database, to resolve table and index names.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { majorVersion } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num, relationLabels } from './row.js';

// PG 19+: pg_stat_progress_repack replaces pg_stat_progress_cluster.
const progressView = (major: number): string => (major >= 19 ? 'pg_stat_progress_repack' : 'pg_stat_progress_cluster');

export function progressRepackSql(major: number): string {
  const specific = major >= 19
    ? `p.repack_index_relid AS index_relid, p.heap_tuples_inserted + p.heap_tuples_updated AS heap_tuples_written,
       p.heap_tuples_inserted, p.heap_tuples_updated, p.heap_tuples_deleted` // PG 19+: pg_stat_progress_repack
    : `p.cluster_index_relid AS index_relid, p.heap_tuples_written,
       NULL::bigint AS heap_tuples_inserted, NULL::bigint AS heap_tuples_updated, NULL::bigint AS heap_tuples_deleted`;
  return `
SELECT p.pid, p.datname, n.nspname AS schemaname, c.relname, p.command, p.phase, ic.relname AS index_name,
       p.heap_tuples_scanned, p.heap_blks_total, p.heap_blks_scanned, p.index_rebuild_count, ${specific},
       extract(epoch FROM a.xact_start)::float8 AS xact_start
FROM ${progressView(major)} p
LEFT JOIN pg_class c ON c.oid = p.relid
LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class ic ON ic.oid = p.${major >= 19 ? 'repack_index_relid' : 'cluster_index_relid'}
LEFT JOIN pg_stat_activity a ON a.pid = p.pid
WHERE p.datname = current_database()`;
}

const P = 'pg_stat_progress_repack';
const M = metricDefs(P, {
  info: gauge('Always 1 per running REPACK / VACUUM FULL / CLUSTER; labels pid, command, phase, index_name.'),
  heap_tuples_scanned: gauge('Heap tuples scanned.'),
  heap_tuples_written: gauge('Heap tuples written to the new heap (19: inserted + updated).'),
  heap_tuples_inserted: gauge('Tuples inserted into the new heap (PG 19+).'),
  heap_tuples_updated: gauge('Concurrent updates applied in catch-up (PG 19+).'),
  heap_tuples_deleted: gauge('Concurrent deletes applied in catch-up (PG 19+).'),
  heap_blocks: gauge('heap_blks_total: heap blocks in the table.'),
  heap_blocks_scanned: gauge('heap_blks_scanned: heap blocks scanned.'),
  indexes_rebuilt: gauge('index_rebuild_count: indexes rebuilt.'),
  xact_start_timestamp_seconds: gauge('When the command\'s transaction started, epoch seconds.'),
});

const COMMON: ReadonlyArray<readonly [string, (typeof M)[keyof typeof M]]> = [
  ['heap_tuples_scanned', M.heap_tuples_scanned], ['heap_tuples_written', M.heap_tuples_written],
  ['heap_blks_total', M.heap_blocks], ['heap_blks_scanned', M.heap_blocks_scanned],
  ['index_rebuild_count', M.indexes_rebuilt], ['xact_start', M.xact_start_timestamp_seconds],
];
const SINCE_19: ReadonlyArray<readonly [string, (typeof M)[keyof typeof M]]> = [
  ['heap_tuples_inserted', M.heap_tuples_inserted], ['heap_tuples_updated', M.heap_tuples_updated],
  ['heap_tuples_deleted', M.heap_tuples_deleted],
];

/** Pure: rows of progressRepackSql -> samples. */
export function mapProgressRepack(rows: readonly Row[], ctx: MapContext): Sample[] {
  const major = majorVersion(ctx.server);
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  for (const row of rows) {
    const labels = relationLabels(row);
    b.add(M.info, {
      ...labels,
      pid: label(row, 'pid'),
      command: label(row, 'command'),
      phase: label(row, 'phase'),
      index_name: label(row, 'index_name'),
    }, 1);
    for (const [column, def] of major >= 19 ? [...COMMON, ...SINCE_19] : COMMON) b.add(def, labels, num(row, column));
  }
  return b.samples;
}

export function pgStatProgressRepackCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 5_000,
    metrics: Object.values(M),
    activeDatabasesSql: (server) => `SELECT DISTINCT datname FROM ${progressView(majorVersion(server))}`,
    sql: (server) => progressRepackSql(majorVersion(server)),
    map: mapProgressRepack,
  }, options);
}
