/**
 * Event details for rule tests: every field a classifier fills, defaulted to what PostgreSQL
 * would print when it says nothing (null), so a test states only the fields its rule reads.
 */
import type {
  AutovacuumDetails,
  CheckpointDetails,
  DdlDetails,
  LockObject,
  LockTimeoutDetails,
  LockWaitDetails,
  RecoveryConflictWaitDetails,
  ServerCrashDetails,
  ServerRestartDetails,
  UsageFields,
} from '../domain/index.js';

const NO_USAGE: UsageFields = {
  delay_time_ms: null, io_read_ms: null, io_write_ms: null, read_rate_mbs: null, write_rate_mbs: null,
  buffer_hits: null, buffer_reads: null, buffer_dirtied: null, wal_records: null, wal_fpi: null, wal_bytes: null,
  wal_fpi_bytes: null, wal_buffers_full: null, cpu_user_s: null, cpu_system_s: null, elapsed_s: null,
};

export function autovacuumDetails(d: Partial<AutovacuumDetails> & Pick<AutovacuumDetails, 'database' | 'table'>): AutovacuumDetails {
  return {
    ...NO_USAGE,
    schema: 'public', aggressive: false, wraparound: false, index_scans: 1, pages_removed: null, pages_remain: null,
    pages_scanned: null, pages_scanned_pct: null, pages_eagerly_scanned: null, pages_skipped_pins: null,
    pages_skipped_frozen: null, tuples_removed: null, tuples_remain: null, tuples_dead_not_removable: null,
    tuples_missed_dead: null, tuples_missed_dead_pages: null, removable_cutoff_xid: null, removable_cutoff_age_xids: null,
    new_relfrozenxid: null, new_relfrozenxid_advance_xids: null, new_relminmxid: null, new_relminmxid_advance_mxids: null,
    frozen_pages: null, frozen_pages_pct: null, tuples_frozen: null, vm_pages_all_visible: null, vm_pages_all_frozen: null,
    vm_pages_were_all_visible: null, index_scan: null, parallel_workers_planned: null, parallel_workers_launched: null,
    parallel_cleanup_workers_planned: null, parallel_cleanup_workers_launched: null, indexes: [],
    dead_item_storage_mb: null, dead_item_storage_resets: null, dead_item_storage_limit_mb: null, unknown_lines: [],
    ...d,
  };
}

/** `relation <oid> of database <oid>`. */
export function relationLock(relationOid: number, databaseOid: number): LockObject {
  return {
    type: 'relation', description: `relation ${relationOid} of database ${databaseOid}`, relation_oid: relationOid,
    database_oid: databaseOid, block: null, offset: null, transaction_id: null, virtual_transaction: null,
    class_oid: null, object_id: null, subscription_oid: null, keys: null,
  };
}

export function lockWaitDetails(d: Partial<LockWaitDetails> & Pick<LockWaitDetails, 'waiting_pid' | 'lock_mode'>): LockWaitDetails {
  return {
    phase: 'waiting', lock_object: relationLock(16402, 16384), wait_ms: 1000, holder_pids: null, queue_pids: null,
    statement: null, context: null, ...d,
  };
}

export function lockTimeoutDetails(d: Partial<LockTimeoutDetails>): LockTimeoutDetails {
  return { pid: null, database: null, user: null, statement: null, lock_mode: null, lock_object: null, context: null, ...d };
}

export function recoveryWaitDetails(d: Partial<RecoveryConflictWaitDetails>): RecoveryConflictWaitDetails {
  return {
    phase: 'waiting', wait_ms: 1000, reason: 'lock', conflicting_pids: null, redo_lsn: null, redo_record: null,
    redo_description: null, lock_mode: null, lock_object: null, ...d,
  };
}

export function ddlDetails(command: DdlDetails['command'], relation: string, concurrently = false): DdlDetails {
  return { command, relation, relations: [relation], concurrently };
}

export function crashDetails(d: Partial<ServerCrashDetails> & Pick<ServerCrashDetails, 'pid'>): ServerCrashDetails {
  return {
    process_type: 'client backend', worker_type: null, signal: null, signal_name: null, exit_code: null,
    exception: null, statement: null, ...d,
  };
}

export function restartDetails(phase: ServerRestartDetails['phase']): ServerRestartDetails {
  return {
    phase, lsn: null, last_known_up: null, read_only: null, shutdown_mode: null, cpu_user_s: null, cpu_system_s: null,
    elapsed_s: null,
  };
}

export function checkpointDetails(d: Partial<CheckpointDetails> & Pick<CheckpointDetails, 'phase'>): CheckpointDetails {
  return {
    restartpoint: false, reasons: null, buffers_written: null, buffers_written_pct: null, slru_buffers_written: null,
    wal_files_added: null, wal_files_removed: null, wal_files_recycled: null, write_s: null, sync_s: null, total_s: null,
    sync_files: null, sync_longest_s: null, sync_average_s: null, distance_kb: null, estimate_kb: null, lsn: null,
    redo_lsn: null, seconds_apart: null, unknown_parts: [], ...d,
  };
}
