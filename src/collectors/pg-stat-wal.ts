/**
 * pg_stat_wal (PG 14+): WAL records, full-page images and bytes generated, and times the WAL
 * buffers were full. The write/sync counters of 14-17 moved to pg_stat_io in 18.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { majorVersion } from './collector.js';
import { viewCollector, type ViewSpec } from './view-collector.js';

export const PG_STAT_WAL: ViewSpec = {
  name: 'pg_stat_wal',
  scope: 'server',
  intervalMs: 15_000,
  from: () => 'pg_stat_wal',
  labels: [],
  supports: (server) => majorVersion(server) >= 14,
  columns: [
    { column: 'wal_records', type: 'counter', help: 'WAL records generated.' },
    { column: 'wal_fpi', type: 'counter', help: 'WAL full page images generated.' },
    { column: 'wal_bytes', type: 'counter', unit: 'bytes', help: 'WAL generated, in bytes.' },
    { column: 'wal_fpi_bytes', type: 'counter', unit: 'bytes', since: 19, help: 'Bytes of full page images (PG 19+).' },
    { column: 'wal_buffers_full', type: 'counter', help: 'Times WAL was written because the WAL buffers were full.' },
    // PG 14-17 only: moved to pg_stat_io in 18
    { column: 'wal_write', type: 'counter', until: 17, help: 'WAL buffer writes (PG 14-17).' },
    { column: 'wal_sync', type: 'counter', until: 17, help: 'WAL file syncs (PG 14-17).' },
    { column: 'wal_write_time', type: 'counter', unit: 'ms', until: 17, help: 'Time writing WAL (PG 14-17, track_wal_io_timing).' },
    { column: 'wal_sync_time', type: 'counter', unit: 'ms', until: 17, help: 'Time syncing WAL (PG 14-17, track_wal_io_timing).' },
  ],
};

export function pgStatWalCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_STAT_WAL, options);
}
