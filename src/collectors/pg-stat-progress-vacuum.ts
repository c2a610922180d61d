/**
 * pg_stat_progress_vacuum, in every database (the view is cluster-wide, but a table's name can
 * only be resolved in its own database): one row per running VACUUM or autovacuum, with phase,
 * heap progress, dead-tuple memory and, 18+, cost-delay time. The dead-tuple columns were renamed
 * and changed units in 17 (counts -> bytes and item ids). Columns named *_total / *_count are
 * gauges here, exported without those suffixes (heap_blks_total -> heap_blocks) so they do not
 * read as counters.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { majorVersion } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, msToSeconds, num, relationLabels } from './row.js';

export function progressVacuumSql(major: number): string {
  const columns = major >= 17
    ? ['p.max_dead_tuple_bytes', 'p.dead_tuple_bytes', 'p.num_dead_item_ids', 'p.indexes_total', 'p.indexes_processed'] // PG 17+
    : ['p.max_dead_tuples', 'p.num_dead_tuples'];
  if (major >= 18) columns.push('p.delay_time'); // PG 18+
  columns.push(major >= 19 ? 'p.mode, p.started_by' : 'NULL::text AS mode, NULL::text AS started_by'); // PG 19+
  return `
SELECT p.pid, p.datname, n.nspname AS schemaname, c.relname, p.phase,
       p.heap_blks_total, p.heap_blks_scanned, p.heap_blks_vacuumed, p.index_vacuum_count,
       ${columns.join(', ')},
       a.backend_type, extract(epoch FROM a.xact_start)::float8 AS xact_start
FROM pg_stat_progress_vacuum p
LEFT JOIN pg_class c ON c.oid = p.relid
LEFT JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_activity a ON a.pid = p.pid
WHERE p.datname = current_database()`;
}

const P = 'pg_stat_progress_vacuum';
const M = metricDefs(P, {
  info: gauge('Always 1 per running vacuum; labels pid, phase, backend_type, mode and started_by (PG 19+).'),
  heap_blocks: gauge('heap_blks_total: heap blocks in the table.'),
  heap_blocks_scanned: gauge('heap_blks_scanned: heap blocks scanned.'),
  heap_blocks_vacuumed: gauge('heap_blks_vacuumed: heap blocks vacuumed.'),
  index_vacuum_cycles: gauge('index_vacuum_count: index vacuum cycles completed.'),
  max_dead_tuples: gauge('Dead tuples that fit before an index vacuum cycle (PG 13-16).'),
  num_dead_tuples: gauge('Dead tuples collected since the last index vacuum cycle (PG 13-16).'),
  max_dead_tuple_bytes: gauge('Dead-tuple memory before an index vacuum cycle (PG 17+).'),
  dead_tuple_bytes: gauge('Dead-tuple memory collected since the last index vacuum cycle (PG 17+).'),
  num_dead_item_ids: gauge('Dead item ids collected since the last index vacuum cycle (PG 17+).'),
  indexes: gauge('indexes_total: indexes to vacuum or clean up (PG 17+).'),
  indexes_processed: gauge('Indexes processed in the current phase (PG 17+).'),
  delay_time_seconds: gauge('Time slept for cost-based delay (PG 18+, track_cost_delay_timing).'),
  xact_start_timestamp_seconds: gauge('When the vacuum\'s transaction started, epoch seconds.'),
});

const BY_VERSION: ReadonlyArray<readonly [column: string, def: (typeof M)[keyof typeof M], since: number, until: number]> = [
  ['heap_blks_total', M.heap_blocks, 13, 99], ['heap_blks_scanned', M.heap_blocks_scanned, 13, 99],
  ['heap_blks_vacuumed', M.heap_blocks_vacuumed, 13, 99], ['index_vacuum_count', M.index_vacuum_cycles, 13, 99],
  ['max_dead_tuples', M.max_dead_tuples, 13, 16], ['num_dead_tuples', M.num_dead_tuples, 13, 16],
  ['max_dead_tuple_bytes', M.max_dead_tuple_bytes, 17, 99], ['dead_tuple_bytes', M.dead_tuple_bytes, 17, 99],
  ['num_dead_item_ids', M.num_dead_item_ids, 17, 99], ['indexes_total', M.indexes, 17, 99],
  ['indexes_processed', M.indexes_processed, 17, 99], ['xact_start', M.xact_start_timestamp_seconds, 13, 99],
];

/** Pure: rows of progressVacuumSql -> samples. */
export function mapProgressVacuum(rows: readonly Row[], ctx: MapContext): Sample[] {
  const major = majorVersion(ctx.server);
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  for (const row of rows) {
    const labels = relationLabels(row);
    b.add(M.info, {
      ...labels,
      pid: label(row, 'pid'),
      phase: label(row, 'phase'),
      backend_type: label(row, 'backend_type'),
      mode: label(row, 'mode'),
      started_by: label(row, 'started_by'),
    }, 1);
    for (const [column, def, since, until] of BY_VERSION) {
      if (major >= since && major <= until) b.add(def, labels, num(row, column));
    }
    if (major >= 18) b.add(M.delay_time_seconds, labels, msToSeconds(row, 'delay_time'));
  }
  return b.samples;
}

export function pgStatProgressVacuumCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 5_000,
    metrics: Object.values(M),
    activeDatabasesSql: () => 'SELECT DISTINCT datname FROM pg_stat_progress_vacuum',
    sql: (server) => progressVacuumSql(majorVersion(server)),
    map: mapProgressVacuum,
  }, options);
}
