/**
 * Per-kind fields of LogEvent.details, in snake_case: they are what an operator reads in JSON.
 * The classifiers (src/parsers/classify/, one file per family) fill them; they are defined here
 * so rules and outputs depend on the domain only, never on a parser.
 *
 * Invariants for every kind
 * - A number PostgreSQL did not print is null, never 0 (a field a version lacks stays null).
 * - `statement` is the entry's STATEMENT text (or the crash DETAIL's query), null when absent.
 * - LSNs are kept as printed (`0/160A3F8` in 13-18, `0/0160A3F8` in 19).
 * - Lines or parts of a message a classifier did not recognise are kept (`unknown_lines`,
 *   `unknown_parts`) so a new PostgreSQL release degrades to "partly parsed", never to "lost".
 *
 * Glossary
 * - removable cutoff: the oldest XID vacuum had to keep rows for (OldestXmin); printed as
 *   `removable cutoff` from 15 and as `oldest xmin` in 13/14, both land in removable_cutoff_xid.
 * - lock object: the locked thing as PostgreSQL describes it (`relation 16402 of database 16384`),
 *   see LockObject.
 */

// ---------------------------------------------------------------- shared pieces

/** Buffer, I/O, WAL and CPU figures shared by the vacuum and analyze reports. */
export interface UsageFields {
  /** PG 18+, only with track_cost_delay_timing. */
  delay_time_ms: number | null;
  /** Only with track_io_timing (14+). */
  io_read_ms: number | null;
  io_write_ms: number | null;
  read_rate_mbs: number | null;
  write_rate_mbs: number | null;
  buffer_hits: number | null;
  /** "misses" up to 17, "reads" from 18: the same count of blocks read. */
  buffer_reads: number | null;
  buffer_dirtied: number | null;
  wal_records: number | null;
  wal_fpi: number | null;
  wal_bytes: number | null;
  /** PG 19+. */
  wal_fpi_bytes: number | null;
  /** PG 18+. */
  wal_buffers_full: number | null;
  cpu_user_s: number | null;
  cpu_system_s: number | null;
  elapsed_s: number | null;
}

/** pg_locks.locktype names, plus 'unknown' for a description no version prints. */
export type LockObjectType =
  | 'relation' | 'extend' | 'frozenid' | 'page' | 'tuple' | 'transactionid' | 'virtualxid'
  | 'spectoken' | 'object' | 'userlock' | 'advisory' | 'applytransaction' | 'unknown';

/** A locked object as printed by DescribeLockTag(); fields the type lacks are null. */
export interface LockObject {
  type: LockObjectType;
  /** The text as printed, e.g. "tuple (12,7) of relation 16402 of database 16384". */
  description: string;
  relation_oid: number | null;
  database_oid: number | null;
  block: number | null;
  offset: number | null;
  transaction_id: number | null;
  /** "procNumber/lxid" of a virtualxid lock. */
  virtual_transaction: string | null;
  class_oid: number | null;
  object_id: number | null;
  subscription_oid: number | null;
  /** The raw fields of advisory and user locks. */
  keys: number[] | null;
  /**
   * Filled by the daemon from its cached catalog (src/sources/relation-names.ts) when it knows
   * database_oid's name; absent offline, or before the cache has the OID.
   */
  database_name?: string;
  /** `schema.table` (or index) of relation_oid, filled like database_name. */
  relation_name?: string;
}

/** Recovery-conflict reasons (13-18 STARTUP_DEADLOCK is startup_deadlock; `deadlock` is 19's split). */
export const RECOVERY_CONFLICT_REASONS = [
  'bufferpin', 'lock', 'tablespace', 'snapshot', 'logical_slot', 'startup_deadlock', 'deadlock', 'database',
] as const;
export type RecoveryConflictReason = (typeof RECOVERY_CONFLICT_REASONS)[number];

/** Who, where and what, for kinds raised in a client backend. */
export interface SessionFields {
  pid: number | null;
  database: string | null;
  user: string | null;
  statement: string | null;
}

// ---------------------------------------------------------------- vacuum and analyze

export type IndexScanState = 'needed' | 'not_needed' | 'bypassed' | 'bypassed_by_failsafe';

export interface IndexScan {
  state: IndexScanState;
  /** Heap pages with LP_DEAD items. */
  pages: number | null;
  pages_pct: number | null;
  dead_item_ids: number | null;
}

export interface VacuumIndexStats {
  name: string;
  pages_total: number | null;
  pages_newly_deleted: number | null;
  pages_deleted: number | null;
  pages_free: number | null;
}

export interface AutovacuumDetails extends UsageFields {
  database: string;
  schema: string;
  table: string;
  aggressive: boolean;
  wraparound: boolean;
  index_scans: number | null;
  pages_removed: number | null;
  pages_remain: number | null;
  /** PG 15+. */
  pages_scanned: number | null;
  pages_scanned_pct: number | null;
  /** PG 18+. */
  pages_eagerly_scanned: number | null;
  /** PG 13/14 only. */
  pages_skipped_pins: number | null;
  pages_skipped_frozen: number | null;
  tuples_removed: number | null;
  tuples_remain: number | null;
  tuples_dead_not_removable: number | null;
  /** PG 15+, only when some dead tuples were missed for cleanup-lock contention. */
  tuples_missed_dead: number | null;
  tuples_missed_dead_pages: number | null;
  /** `removable cutoff` (15+) or `oldest xmin` (13/14). */
  removable_cutoff_xid: number | null;
  /** PG 15+: how old the cutoff was when the vacuum ended. */
  removable_cutoff_age_xids: number | null;
  /** PG 15+, only when relfrozenxid advanced. */
  new_relfrozenxid: number | null;
  new_relfrozenxid_advance_xids: number | null;
  new_relminmxid: number | null;
  new_relminmxid_advance_mxids: number | null;
  /** PG 16+. */
  frozen_pages: number | null;
  frozen_pages_pct: number | null;
  tuples_frozen: number | null;
  /** PG 18+ visibility map line. */
  vm_pages_all_visible: number | null;
  vm_pages_all_frozen: number | null;
  vm_pages_were_all_visible: number | null;
  /** PG 14+ (14 omits it for an empty table). */
  index_scan: IndexScan | null;
  /** PG 19+, `parallel workers: index vacuum: N planned, N launched in total`. */
  parallel_workers_planned: number | null;
  parallel_workers_launched: number | null;
  /** PG 19+, `parallel workers: index cleanup: N planned, N launched`. */
  parallel_cleanup_workers_planned: number | null;
  parallel_cleanup_workers_launched: number | null;
  /** PG 14+. */
  indexes: VacuumIndexStats[];
  /** PG 19+ memory usage line. */
  dead_item_storage_mb: number | null;
  dead_item_storage_resets: number | null;
  dead_item_storage_limit_mb: number | null;
  unknown_lines: string[];
}

export interface AutoanalyzeDetails extends UsageFields {
  database: string;
  schema: string;
  table: string;
  unknown_lines: string[];
}

// ---------------------------------------------------------------- standby

export interface RecoveryConflictDetails extends SessionFields {
  /** From the DETAIL; null when there was none or its text is not one PostgreSQL prints. */
  reason: RecoveryConflictReason | null;
  /** true when the connection was terminated (FATAL), false when only the statement was cancelled. */
  fatal: boolean;
  detail: string | null;
}

export interface RecoveryConflictWaitDetails {
  phase: 'waiting' | 'finished';
  wait_ms: number | null;
  reason: RecoveryConflictReason | null;
  /** From DETAIL `Conflicting process(es): ...`; null without that DETAIL. */
  conflicting_pids: number[] | null;
  /** From CONTEXT `WAL redo at <lsn> for <rmgr/record>: <description>`. */
  redo_lsn: string | null;
  redo_record: string | null;
  redo_description: string | null;
  /** PG 19+: CONTEXT `waiting for <mode> on <lock>`. */
  lock_mode: string | null;
  lock_object: LockObject | null;
}

// ---------------------------------------------------------------- locks and timeouts

export type LockWaitPhase =
  | 'waiting' | 'acquired' | 'avoided_deadlock' | 'detected_deadlock' | 'failed' | 'could_not_obtain';

export interface LockWaitDetails {
  phase: LockWaitPhase;
  /** The PID in the message (the waiting process). */
  waiting_pid: number;
  lock_mode: string;
  lock_object: LockObject;
  /** null for `could not obtain` (18+), which has no duration. */
  wait_ms: number | null;
  /** From the DETAIL; null when the message has none (`acquired`). */
  holder_pids: number[] | null;
  queue_pids: number[] | null;
  statement: string | null;
  context: string | null;
}

export interface LockTimeoutDetails extends SessionFields {
  /** PG 19+: from CONTEXT `waiting for <mode> on <lock>`; null before 19. */
  lock_mode: string | null;
  lock_object: LockObject | null;
  context: string | null;
}

/** CONTEXT: where the cancelled statement ran, e.g. the PL/pgSQL function line. */
export type StatementTimeoutDetails = SessionFields & { context: string | null };
export type IdleInTransactionTimeoutDetails = SessionFields;
export type TransactionTimeoutDetails = SessionFields;

export interface DeadlockProcess {
  pid: number;
  /** null when the DETAIL had only the `Process N: query` line for this PID. */
  lock_mode: string | null;
  lock_object: LockObject | null;
  blocked_by_pid: number | null;
  query: string | null;
}

export interface DeadlockDetails extends SessionFields {
  /** In cycle order, as the DETAIL lists them. */
  processes: DeadlockProcess[];
  context: string | null;
}

// ---------------------------------------------------------------- server life cycle

export interface CheckpointDetails {
  phase: 'starting' | 'complete' | 'too_frequent';
  restartpoint: boolean;
  /** Flags as printed (`time`, `wal`, `immediate`/19 `fast`, ...); null when the line has none. */
  reasons: string[] | null;
  buffers_written: number | null;
  buffers_written_pct: number | null;
  /** PG 18+. */
  slru_buffers_written: number | null;
  wal_files_added: number | null;
  wal_files_removed: number | null;
  wal_files_recycled: number | null;
  write_s: number | null;
  sync_s: number | null;
  total_s: number | null;
  sync_files: number | null;
  sync_longest_s: number | null;
  sync_average_s: number | null;
  distance_kb: number | null;
  estimate_kb: number | null;
  /** PG 16+. */
  lsn: string | null;
  redo_lsn: string | null;
  /** `checkpoints are occurring too frequently (N seconds apart)`. */
  seconds_apart: number | null;
  unknown_parts: string[];
}

export interface ServerCrashDetails {
  /** As printed: `server process` (13-17), `client backend`, `autovacuum worker` (18+), `background worker`, `checkpointer process`... */
  process_type: string;
  /** bgw_type of a background worker, e.g. "REPACK decoding worker". */
  worker_type: string | null;
  pid: number;
  signal: number | null;
  signal_name: string | null;
  exit_code: number | null;
  /** Windows `terminated by exception 0x...`. */
  exception: string | null;
  /** DETAIL `Failed process was running: ...`. */
  statement: string | null;
}

export type ServerRestartPhase =
  | 'terminating_others' | 'reinitializing' | 'not_restarting' | 'interrupted' | 'automatic_recovery'
  | 'redo_start' | 'redo_done' | 'redo_not_required' | 'ready' | 'shutdown_requested' | 'shut_down'
  // A standby promoted: the request, then the timeline it starts.
  | 'promote_requested' | 'new_timeline';

export interface ServerRestartDetails {
  phase: ServerRestartPhase;
  /** redo start / redo done position. */
  lsn: string | null;
  /** `last known up at ...` / `... in recovery at ...` timestamp text, as printed. */
  last_known_up: string | null;
  /** `ready to accept read-only connections` (a standby). */
  read_only: boolean | null;
  shutdown_mode: 'smart' | 'fast' | 'immediate' | null;
  /** PG 14+ redo done system usage. */
  cpu_user_s: number | null;
  cpu_system_s: number | null;
  elapsed_s: number | null;
  /** new_timeline only: the timeline a promoted standby starts (2 after a first failover). */
  timeline_id?: number;
}

// ---------------------------------------------------------------- storage, slots, DDL

export interface TempFileDetails {
  path: string;
  size_bytes: number;
  statement: string | null;
}

export type SlotInvalidationReason = 'wal_removed' | 'rows_removed' | 'wal_level_insufficient' | 'idle_timeout';

export interface SlotInvalidatedDetails {
  slot: string;
  /** `terminating_holder`: the process using the slot is killed first (same DETAIL follows). */
  phase: 'invalidated' | 'terminating_holder';
  reason: SlotInvalidationReason | null;
  terminated_pid: number | null;
  restart_lsn: string | null;
  exceeded_bytes: number | null;
  conflict_xid: number | null;
  idle_s: number | null;
  idle_timeout_s: number | null;
  detail: string | null;
}

export type DdlCommand = 'DROP TABLE' | 'TRUNCATE' | 'REPACK' | 'VACUUM FULL' | 'CLUSTER';

export interface DdlDetails {
  command: DdlCommand;
  /** First relation named, normalised: quotes removed, unquoted parts lower-cased; null when none. */
  relation: string | null;
  relations: string[];
  /** REPACK (CONCURRENTLY). */
  concurrently: boolean;
}

// ---------------------------------------------------------------- wraparound

/**
 * The server's own wraparound warnings (varsup.c, multixact.c): WARNING once past the warn limit
 * (40M XIDs / 10M multixacts before the wrap limit), on every assignment; ERROR once it refuses to
 * assign more (`database is not accepting commands ...`).
 */
export interface WraparoundWarningDetails {
  /** multixact_member: the members space (2^32 members) runs short before the multixact IDs do. */
  counter: 'xid' | 'multixact' | 'multixact_member';
  /** null when the server named the database by OID only (it could not look the name up). */
  datname: string | null;
  database_oid: number | null;
  /** Transactions (multixacts, members) left before the wrap limit; null in the ERROR, which has none left. */
  remaining: number | null;
  /** true for the ERROR: the server no longer assigns new ones. */
  refusing: boolean;
}

// ---------------------------------------------------------------- generic and the map

export interface GenericDetails {
  /** Always present for generic events so "what did we not understand" can be counted. */
  classified: false;
  /** Set when a classifier failed on this entry (a bug); the entry is still stored. */
  classify_error?: string;
  /**
   * The entry's continuation lines, each present only when logged: an error no family recognises
   * still says what ran (STATEMENT), where (CONTEXT: a PL/pgSQL line, a worker's task) and why
   * (DETAIL, HINT). Absent rather than null so the many bare lines of a busy log stay small.
   */
  statement?: string;
  context?: string;
  detail?: string;
  hint?: string;
}

/**
 * A data page that failed verification when read (bufmgr.c, bufpage.c; SQLSTATE XX001):
 * `invalid page in block N of relation base/5/16384` (ERROR in the reading backend; PG 18+
 * quotes the path and its I/O worker also logs it at LOG) and, with data checksums, the line
 * before it from the same process: `page verification failed, calculated checksum X but expected
 * Y` (WARNING; LOG from 18's I/O workers). With zero_damaged_pages the first ends in `; zeroing
 * out page` at WARNING: the page's rows are gone.
 */
export interface DataCorruptionDetails {
  problem: 'invalid_page' | 'checksum_mismatch';
  /** The relation's file as printed (`base/5/16384`, `global/1262`, `pg_tblspc/...`), unquoted; null on a checksum line, which names none. */
  relation_path: string | null;
  /** From a `base/<database oid>/<filenode>` path; null otherwise. */
  database_oid: number | null;
  /** The file's relfilenode (`pg_filenode_relation(0, N)` names its relation), the path's last number; null without a path. */
  relfilenode: number | null;
  block: number | null;
  /** `; zeroing out page`: zero_damaged_pages replaced the page with zeros. */
  zeroed: boolean;
  calculated_checksum: number | null;
  expected_checksum: number | null;
}

export interface EventDetailsByKind {
  autovacuum: AutovacuumDetails;
  autoanalyze: AutoanalyzeDetails;
  recovery_conflict: RecoveryConflictDetails;
  recovery_conflict_wait: RecoveryConflictWaitDetails;
  lock_wait: LockWaitDetails;
  lock_timeout: LockTimeoutDetails;
  statement_timeout: StatementTimeoutDetails;
  idle_in_transaction_timeout: IdleInTransactionTimeoutDetails;
  transaction_timeout: TransactionTimeoutDetails;
  deadlock: DeadlockDetails;
  checkpoint: CheckpointDetails;
  server_crash: ServerCrashDetails;
  server_restart: ServerRestartDetails;
  temp_file: TempFileDetails;
  slot_invalidated: SlotInvalidatedDetails;
  wraparound_warning: WraparoundWarningDetails;
  data_corruption: DataCorruptionDetails;
  ddl: DdlDetails;
  generic: GenericDetails;
}
