/**
 * pg_stat_database_conflicts: queries canceled on a standby by recovery conflicts, per database
 * and reason. Counts only on standbys, so the collector runs only there.
 */
import type { Collector, CollectorOptions } from './collector.js';
import { viewCollector, type ViewSpec } from './view-collector.js';

export const PG_STAT_DATABASE_CONFLICTS: ViewSpec = {
  name: 'pg_stat_database_conflicts',
  scope: 'server',
  intervalMs: 5_000,
  from: () => 'pg_stat_database_conflicts',
  labels: ['datname'],
  supports: (server) => server.inRecovery,
  columns: [
    { column: 'confl_tablespace', type: 'counter', help: 'Queries canceled because of dropped tablespaces.' },
    { column: 'confl_lock', type: 'counter', help: 'Queries canceled because of lock timeouts (max_standby_*_delay).' },
    { column: 'confl_snapshot', type: 'counter', help: 'Queries canceled because of old snapshots.' },
    { column: 'confl_bufferpin', type: 'counter', help: 'Queries canceled because of pinned buffers.' },
    { column: 'confl_deadlock', type: 'counter', help: 'Queries canceled because of deadlocks with the startup process.' },
    // PG 16+: logical decoding on standbys
    { column: 'confl_active_logicalslot', type: 'counter', since: 16, help: 'Logical slots invalidated by conflicts (PG 16+).' },
  ],
};

export function pgStatDatabaseConflictsCollector(options: CollectorOptions = {}): Collector {
  return viewCollector(PG_STAT_DATABASE_CONFLICTS, options);
}
