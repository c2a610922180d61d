/**
 * Every collector, built per target (some keep history: change rates, replay progress).
 * Interval overrides by name are applied by the poll scheduler.
 */
import type { Collector } from './collector.js';
import { pgDatabaseSizeCollector } from './pg-database-size.js';
import { pgDatabaseCollector } from './pg-database.js';
import { pgInvalidIndexesCollector } from './pg-invalid-indexes.js';
import { pgLockWaitsCollector } from './pg-lock-waits.js';
import { pgLongTransactionsCollector } from './pg-long-transactions.js';
import { pgMaintenanceSessionsCollector } from './pg-maintenance-sessions.js';
import { pgRepackLeftoversCollector } from './pg-repack-leftovers.js';
import { pgReplicationSlotsCollector } from './pg-replication-slots.js';
import { pgSettingsCollector } from './pg-settings.js';
import { pgStandbyCollector } from './pg-standby.js';
import { pgStatActivityCollector } from './pg-stat-activity.js';
import { pgStatArchiverCollector } from './pg-stat-archiver.js';
import { pgStatCheckpointerCollector } from './pg-stat-checkpointer.js';
import { pgStatDatabaseConflictsCollector } from './pg-stat-database-conflicts.js';
import { pgStatDatabaseCollector } from './pg-stat-database.js';
import { pgStatProgressRepackCollector } from './pg-stat-progress-repack.js';
import { pgStatProgressVacuumCollector } from './pg-stat-progress-vacuum.js';
import { pgStatReplicationCollector } from './pg-stat-replication.js';
import { pgStatUserTablesCollector } from './pg-stat-user-tables.js';
import { pgStatWalCollector } from './pg-stat-wal.js';
import { pgTotalRelationSizeCollector } from './pg-total-relation-size.js';
import { pgXminHorizonCollector } from './pg-xmin-horizon.js';

export * from './collector.js';

export interface CollectorsOptions {
  /** config collectors.max_tables_per_database */
  maxTablesPerDatabase?: number;
  /** config collectors.disabled */
  disabled?: readonly string[];
}

export function createCollectors(options: CollectorsOptions = {}): Collector[] {
  const all = [
    pgStatUserTablesCollector({ ...(options.maxTablesPerDatabase ? { maxTables: options.maxTablesPerDatabase } : {}) }),
    pgTotalRelationSizeCollector({ ...(options.maxTablesPerDatabase ? { maxTables: options.maxTablesPerDatabase } : {}) }),
    pgReplicationSlotsCollector(),
    pgXminHorizonCollector(),
    pgStatReplicationCollector(),
    pgStandbyCollector(),
    pgStatDatabaseConflictsCollector(),
    pgStatProgressVacuumCollector(),
    pgStatProgressRepackCollector(),
    pgMaintenanceSessionsCollector(),
    pgRepackLeftoversCollector(),
    pgInvalidIndexesCollector(),
    pgLockWaitsCollector(),
    pgSettingsCollector(),
    pgStatDatabaseCollector(),
    pgDatabaseCollector(),
    pgDatabaseSizeCollector(),
    pgStatWalCollector(),
    pgStatCheckpointerCollector(),
    pgStatArchiverCollector(),
    pgStatActivityCollector(),
    pgLongTransactionsCollector(),
  ];
  const disabled = new Set(options.disabled ?? []);
  return all.filter((c) => !disabled.has(c.name));
}

/** Collector names, for config validation (an unknown name in interval_ms or disabled is an error). */
export const COLLECTOR_NAMES: readonly string[] = createCollectors().map((c) => c.name);
