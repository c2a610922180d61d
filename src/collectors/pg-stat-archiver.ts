/**
 * pg_stat_archiver: WAL archiving (archive_mode, archive_command or archive_library), one row for
 * the cluster. Its columns are the same from 13 to 19: archived_count, last_archived_wal/_time,
 * failed_count, last_failed_wal/_time, stats_reset.
 *
 * Ages are computed by the server (`now() - last_*_time`), so the rule compares the two times on
 * one clock and never pgvigil's against the server's. The WAL segments waiting for the archiver
 * are the `.ready` files of pg_wal/archive_status (pg_ls_archive_statusdir(), granted to
 * pg_monitor): each stays in pg_wal until archived, so their count is what a failing archiver
 * costs in disk. The WAL file names are labels of `_info`, descriptive (src/store/series-identity.ts):
 * a new segment archived is not a new series.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { counter, gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num } from './row.js';

export const ARCHIVER_SQL = `
SELECT a.archived_count, a.failed_count,
  extract(epoch FROM now() - a.last_archived_time)::float8 AS last_archived_age_seconds,
  extract(epoch FROM now() - a.last_failed_time)::float8 AS last_failed_age_seconds,
  a.last_archived_wal, a.last_failed_wal,
  (SELECT count(*) FROM pg_ls_archive_statusdir() f WHERE f.name LIKE '%.ready')::int AS ready_wal_files
FROM pg_stat_archiver a`;

const P = 'pg_stat_archiver';
export const ARCHIVER_METRICS = metricDefs(P, {
  archived_count_total: counter('WAL files archived successfully.'),
  failed_count_total: counter('Failed attempts to archive a WAL file (each retry counts).'),
  last_archived_age_seconds: gauge('Seconds since the last WAL file was archived, by the server\'s clock (NULL: never).'),
  last_failed_age_seconds: gauge('Seconds since the last failed archiving attempt, by the server\'s clock (NULL: never).'),
  ready_wal_files: gauge('WAL files waiting to be archived (.ready in pg_wal/archive_status); each stays in pg_wal until archived.'),
  info: gauge('Always 1; labels last_archived_wal and last_failed_wal (\'\' when none).'),
});

/** Pure: the one row of ARCHIVER_SQL -> samples. */
export function mapArchiver(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const M = ARCHIVER_METRICS;
  for (const row of rows) {
    b.add(M.archived_count_total, {}, num(row, 'archived_count'));
    b.add(M.failed_count_total, {}, num(row, 'failed_count'));
    b.add(M.last_archived_age_seconds, {}, num(row, 'last_archived_age_seconds'));
    b.add(M.last_failed_age_seconds, {}, num(row, 'last_failed_age_seconds'));
    b.add(M.ready_wal_files, {}, num(row, 'ready_wal_files'));
    b.add(M.info, { last_archived_wal: label(row, 'last_archived_wal'), last_failed_wal: label(row, 'last_failed_wal') }, 1);
  }
  return b.samples;
}

export function pgStatArchiverCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({ name: P, scope: 'server', intervalMs: 15_000, metrics: Object.values(ARCHIVER_METRICS), sql: () => ARCHIVER_SQL, map: mapArchiver }, options);
}
