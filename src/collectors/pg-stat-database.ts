/**
 * pg_stat_database: transactions, deadlocks, recovery conflicts, temp files and bytes, block
 * I/O, sessions (14+) and parallel workers (18+) per database. One row per database for the
 * whole cluster, so server scope. The row with datname NULL (shared catalogs) is left out.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { viewCollector, type ViewSpec } from './view-collector.js';

export const PG_STAT_DATABASE: ViewSpec = {
  name: 'pg_stat_database',
  scope: 'server',
  intervalMs: 15_000,
  from: () => 'pg_stat_database',
  where: 'datname IS NOT NULL',
  labels: ['datname'],
  columns: [
    { column: 'numbackends', type: 'gauge', help: 'Backends connected to the database.' },
    { column: 'xact_commit', type: 'counter', help: 'Transactions committed.' },
    { column: 'xact_rollback', type: 'counter', help: 'Transactions rolled back.' },
    { column: 'blks_read', type: 'counter', help: 'Blocks read from disk (or the OS cache).' },
    { column: 'blks_hit', type: 'counter', help: 'Blocks found in shared buffers.' },
    { column: 'tup_returned', type: 'counter', help: 'Rows returned by sequential scans and index entries returned.' },
    { column: 'tup_fetched', type: 'counter', help: 'Live rows fetched by index scans.' },
    { column: 'tup_inserted', type: 'counter', help: 'Rows inserted.' },
    { column: 'tup_updated', type: 'counter', help: 'Rows updated.' },
    { column: 'tup_deleted', type: 'counter', help: 'Rows deleted.' },
    { column: 'conflicts', type: 'counter', help: 'Queries canceled by recovery conflicts (standbys).' },
    { column: 'temp_files', type: 'counter', help: 'Temporary files created.' },
    { column: 'temp_bytes', type: 'counter', unit: 'bytes', help: 'Bytes written to temporary files.' },
    { column: 'deadlocks', type: 'counter', help: 'Deadlocks detected.' },
    { column: 'checksum_failures', type: 'counter', help: 'Data page checksum failures (NULL without checksums).' },
    { column: 'blk_read_time', type: 'counter', unit: 'ms', help: 'Time reading blocks (track_io_timing).' },
    { column: 'blk_write_time', type: 'counter', unit: 'ms', help: 'Time writing blocks (track_io_timing).' },
    // PG 14+: session statistics
    { column: 'session_time', type: 'counter', unit: 'ms', since: 14, help: 'Time spent by sessions (PG 14+).' },
    { column: 'active_time', type: 'counter', unit: 'ms', since: 14, help: 'Time spent executing statements (PG 14+).' },
    { column: 'idle_in_transaction_time', type: 'counter', unit: 'ms', since: 14, help: 'Time idle in a transaction (PG 14+).' },
    { column: 'sessions', type: 'counter', since: 14, help: 'Sessions established (PG 14+).' },
    { column: 'sessions_abandoned', type: 'counter', since: 14, help: 'Sessions ended by the client going away (PG 14+).' },
    { column: 'sessions_fatal', type: 'counter', since: 14, help: 'Sessions ended by a FATAL error (PG 14+).' },
    { column: 'sessions_killed', type: 'counter', since: 14, help: 'Sessions terminated by an operator (PG 14+).' },
    // PG 18+
    { column: 'parallel_workers_to_launch', type: 'counter', since: 18, help: 'Parallel workers planned (PG 18+).' },
    { column: 'parallel_workers_launched', type: 'counter', since: 18, help: 'Parallel workers launched (PG 18+).' },
  ],
};

export function pgStatDatabaseCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_STAT_DATABASE, options);
}
