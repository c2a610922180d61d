/**
 * What the pipeline must find in each scenario's log: the event kinds and the key fields of the
 * situation, asserted structurally (values vary from run to run; their presence and shape do not).
 * Shared by the golden test (on the recorded fixtures) and the live test (on a fresh server), so a
 * golden regenerated with UPDATE_GOLDEN=1 still has to show what the scenario provoked.
 */
import { expect } from 'vitest';
import type { AnyLogEvent, EventKind, LogEvent } from '../../../src/domain/index.js';
import type { PgVersion } from '../pg-harness.js';

type Events = readonly AnyLogEvent[];
type Check = (events: Events, major: number) => void;

function ofKind<K extends EventKind>(events: Events, kind: K): LogEvent<K>[] {
  return events.filter((event): event is Extract<AnyLogEvent, { kind: K }> => event.kind === kind) as unknown as LogEvent<K>[];
}

/** The first event of `kind` satisfying `predicate`; fails listing the events of that kind. */
export function findEvent<K extends EventKind>(events: Events, kind: K, what: string, predicate: (event: LogEvent<K>) => boolean = () => true): LogEvent<K> {
  const candidates = ofKind(events, kind);
  const found = candidates.find(predicate);
  if (found) return found;
  const seen = candidates.map((event) => `  ${event.message} ${JSON.stringify(event.details)}`.slice(0, 400)).join('\n');
  const kinds = [...new Set(events.map((event) => event.kind))].join(', ');
  throw new Error(`no ${kind} event: ${what}\n${candidates.length} ${kind} event(s):\n${seen || '  (none)'}\nkinds present: ${kinds}`);
}

/** Each named field is a number (PostgreSQL printed it and it was parsed), not null. */
export function expectNumbers(details: object, fields: readonly string[], where: string): void {
  const record = details as Record<string, unknown>;
  const missing = fields.filter((field) => typeof record[field] !== 'number' || Number.isNaN(record[field]));
  expect(missing, `${where}: fields not parsed as numbers (values: ${JSON.stringify(Object.fromEntries(missing.map((f) => [f, record[f]])))})`).toEqual([]);
}

/** Each named field is null: the version does not print it. */
export function expectNulls(details: object, fields: readonly string[], where: string): void {
  const record = details as Record<string, unknown>;
  const present = fields.filter((field) => record[field] !== null);
  expect(present, `${where}: fields this version does not print should be null`).toEqual([]);
}

// PG 18+ report lines, PG 19+ report lines (pg-messages.md §1.3).
const VACUUM_18_FIELDS = ['pages_eagerly_scanned', 'vm_pages_all_visible', 'vm_pages_all_frozen', 'vm_pages_were_all_visible', 'wal_buffers_full'];
const VACUUM_19_FIELDS = ['wal_fpi_bytes', 'dead_item_storage_mb', 'dead_item_storage_resets', 'dead_item_storage_limit_mb'];
// Every version's report (13+); what 14, 15 and 16 added (pg-messages.md §1.3, checked on real servers).
const VACUUM_ALWAYS = [
  'index_scans', 'pages_removed', 'pages_remain', 'tuples_removed', 'tuples_remain', 'tuples_dead_not_removable',
  'removable_cutoff_xid', 'read_rate_mbs', 'write_rate_mbs', 'buffer_hits', 'buffer_reads', 'buffer_dirtied', 'wal_records',
  'wal_fpi', 'wal_bytes', 'cpu_user_s', 'cpu_system_s', 'elapsed_s',
];
// PG 15: "N scanned (x% of total)" and "removable cutoff: X, which was N XIDs old" (13 and 14: "oldest xmin: X").
const VACUUM_15_FIELDS = ['pages_scanned', 'pages_scanned_pct', 'removable_cutoff_age_xids'];
// PG 16: the "frozen: ..." line.
const VACUUM_16_FIELDS = ['frozen_pages', 'tuples_frozen'];

/** The fields every autovacuum report of a recorded version must have, by version. */
export function expectVacuumReport(event: LogEvent<'autovacuum'>, major: number): void {
  const where = `autovacuum of ${event.details.database}.${event.details.schema}.${event.details.table} (PG ${major})`;
  const since = (version: number, fields: readonly string[]): void => {
    if (major >= version) expectNumbers(event.details, fields, where);
    else expectNulls(event.details, fields, where);
  };
  expectNumbers(event.details, VACUUM_ALWAYS, where);
  since(15, VACUUM_15_FIELDS);
  since(16, VACUUM_16_FIELDS);
  since(18, VACUUM_18_FIELDS);
  since(19, VACUUM_19_FIELDS);
  // PG 14: the "index scan needed / not needed / bypassed" line.
  if (major >= 14) expect(event.details.index_scan, `${where}: index_scan`).not.toBeNull();
  else expect(event.details.index_scan, `${where}: index_scan (PG 13 has no such line)`).toBeNull();
  expect(event.details.unknown_lines, `${where}: lines the classifier did not recognise`).toEqual([]);
}

function expectAnalyzeReport(event: LogEvent<'autoanalyze'>, major: number): void {
  const where = `autoanalyze of ${event.details.table} (PG ${major})`;
  expectNumbers(event.details, ['cpu_user_s', 'elapsed_s'], where);
  // PG 13's report is one line: `... of table "x" system usage: ...`, no rates and no buffers.
  const usage = ['read_rate_mbs', 'write_rate_mbs', 'buffer_hits', 'buffer_reads', 'buffer_dirtied'];
  if (major >= 14) expectNumbers(event.details, usage, where);
  else expectNulls(event.details, usage, where);
  if (major >= 18) expectNumbers(event.details, ['wal_records', 'wal_bytes', 'wal_buffers_full'], where);
  expect(event.details.unknown_lines, `${where}: lines the classifier did not recognise`).toEqual([]);
}

const autovacuumFourIndexes: Check = (events, major) => {
  const vacuum = findEvent(events, 'autovacuum', 'av_orders with an index pass', (e) => e.details.table === 'av_orders' && (e.details.index_scans ?? 0) >= 1);
  expectVacuumReport(vacuum, major);
  expect(vacuum.details).toMatchObject({ database: 'postgres', schema: 'public', aggressive: false, wraparound: false });
  // PG 13's report has no index-scan line, no per-index lines and no I/O timings line.
  const indexNames = major >= 14 ? ['av_orders_created_at', 'av_orders_customer', 'av_orders_note', 'av_orders_pkey'] : [];
  expect(vacuum.details.indexes.map((index) => index.name).sort()).toEqual(indexNames);
  for (const index of vacuum.details.indexes) expectNumbers(index, ['pages_total', 'pages_newly_deleted', 'pages_deleted', 'pages_free'], `index ${index.name}`);
  const timings = ['io_read_ms', 'io_write_ms', ...(major >= 18 ? ['delay_time_ms'] : [])];
  if (major >= 14) expectNumbers(vacuum.details, timings, 'track_io_timing / track_cost_delay_timing lines');
  else expectNulls(vacuum.details, timings, 'PG 13 prints no I/O timings in autovacuum reports');
  // PG 19: no parallel line when autovacuum_max_parallel_workers is at its default 0.
  expectNulls(vacuum.details, ['parallel_workers_planned', 'parallel_workers_launched'], 'serial autovacuum');
  const insertRun = findEvent(events, 'autovacuum', 'the insert-triggered av_orders run', (e) => e.details.table === 'av_orders' && e.details.index_scans === 0);
  if (major >= 14) {
    expect(vacuum.details.index_scan?.state).toBe('needed');
    expectNumbers(vacuum.details.index_scan ?? {}, ['pages', 'pages_pct', 'dead_item_ids'], 'index_scan');
    expect(insertRun.details.index_scan?.state).toBe('not_needed');
  }
  expectAnalyzeReport(findEvent(events, 'autoanalyze', 'av_orders', (e) => e.details.table === 'av_orders'), major);
};

const autovacuumHeldBack: Check = (events, major) => {
  const held = findEvent(events, 'autovacuum', 'av_held with dead tuples not yet removable', (e) => e.details.table === 'av_held' && (e.details.tuples_dead_not_removable ?? 0) > 0);
  expectVacuumReport(held, major);
  const released = findEvent(events, 'autovacuum', 'av_held removing the tuples once released', (e) => e.details.table === 'av_held' && (e.details.tuples_removed ?? 0) > 0);
  expect(released.details.tuples_dead_not_removable).toBe(0);
  expect(released.details.removable_cutoff_xid ?? 0).toBeGreaterThan(held.details.removable_cutoff_xid ?? 0);
};

const standbyFeedbackHoldsVacuum: Check = (events, major) => {
  const held = (table: string) => findEvent(events, 'autovacuum', `${table} with dead tuples not yet removable`,
    (e) => e.details.table === table && (e.details.tuples_dead_not_removable ?? 0) > 0);
  const [orders, other] = [held('fb_orders'), held('fb_events')];
  expectVacuumReport(orders, major);
  expect([orders.details.database, other.details.database]).toEqual(['postgres', 'fb_other']);
  // The standby's feedback holds every database at one horizon.
  expect(other.details.removable_cutoff_xid).toBe(orders.details.removable_cutoff_xid);
  const released = findEvent(events, 'autovacuum', 'fb_events removing the tuples once released',
    (e) => e.details.table === 'fb_events' && (e.details.tuples_removed ?? 0) > 0);
  expect(released.details.tuples_dead_not_removable).toBe(0);
};

const logicalSlotHoldsCatalogs: Check = (events, major) => {
  const held = (database: string) => findEvent(events, 'autovacuum', `${database}.pg_catalog.pg_attribute with dead tuples not yet removable`,
    (e) => e.details.database === database && e.details.table === 'pg_attribute' && (e.details.tuples_dead_not_removable ?? 0) > 0);
  const [postgres, other] = [held('postgres'), held('ls_other')];
  expectVacuumReport(postgres, major);
  // The slot's catalog_xmin holds the catalogs of every database at one horizon.
  expect(other.details.removable_cutoff_xid).toBe(postgres.details.removable_cutoff_xid);
};

const lockWaitsAndLockTimeout: Check = (events, major) => {
  const rowWait = findEvent(events, 'lock_wait', 'waiting for ShareLock on a transaction', (e) => e.details.phase === 'waiting' && e.details.lock_object.type === 'transactionid');
  expect(rowWait.details).toMatchObject({ lock_mode: 'ShareLock', statement: expect.stringContaining('UPDATE lw_accounts') });
  expect(rowWait.details.holder_pids).toHaveLength(1);
  expect(rowWait.details.queue_pids).toContain(rowWait.details.waiting_pid);
  expectNumbers(rowWait.details, ['wait_ms'], 'row lock wait');
  expectNumbers(rowWait.details.lock_object, ['transaction_id'], 'row lock wait object');
  findEvent(events, 'lock_wait', 'acquired ShareLock', (e) => e.details.phase === 'acquired' && e.details.lock_mode === 'ShareLock' && e.details.wait_ms !== null);
  const relationWait = findEvent(events, 'lock_wait', 'waiting for AccessShareLock on a relation', (e) => e.details.phase === 'waiting' && e.details.lock_object.type === 'relation');
  expect(relationWait.details.lock_mode).toBe('AccessShareLock');
  expectNumbers(relationWait.details, ['wait_ms'], 'relation lock wait (message ends with "at character N")');
  expectNumbers(relationWait.details.lock_object, ['relation_oid', 'database_oid'], 'relation lock object');
  const timeout = findEvent(events, 'lock_timeout', 'the SELECT cancelled by lock_timeout');
  expect(timeout.details.statement).toBe('SELECT count(*) FROM lw_accounts');
  // PG 19+: the lock is named in a CONTEXT line; before 19 it is not printed.
  if (major >= 19) expect(timeout.details).toMatchObject({ lock_mode: 'AccessShareLock', lock_object: { type: 'relation' } });
  else expect(timeout.details.lock_mode).toBeNull();
};

const deadlock: Check = (events) => {
  const detected = findEvent(events, 'deadlock', 'deadlock detected');
  expect(detected.details.processes).toHaveLength(2);
  for (const process of detected.details.processes) {
    expect(process).toMatchObject({ lock_mode: 'ShareLock', lock_object: { type: 'transactionid' }, query: expect.stringContaining('UPDATE dl_accounts') });
    expectNumbers(process, ['pid', 'blocked_by_pid'], 'deadlock process');
  }
  expect(detected.details.statement).toContain('UPDATE dl_accounts');
  expect(detected.sqlstate ?? '40P01').toBe('40P01');
  findEvent(events, 'lock_wait', 'the victim\'s "detected deadlock while waiting"', (e) => e.details.phase === 'detected_deadlock');
  findEvent(events, 'lock_wait', 'the survivor acquiring its lock', (e) => e.details.phase === 'acquired');
};

const statementTimeout: Check = (events) => {
  const timeout = findEvent(events, 'statement_timeout', 'pg_sleep cancelled');
  expect(timeout).toMatchObject({ level: 'ERROR', database: 'postgres', user: 'postgres', details: { statement: 'SELECT pg_sleep(5)' } });
};

/** The continuation lines of errors survive: on the statement_timeout event, and on generic ones. */
const errorsWithContext: Check = (events, major) => {
  const timeout = findEvent(events, 'statement_timeout', 'pgvigil_slow() cancelled');
  expect(timeout.details).toMatchObject({ statement: 'SELECT pgvigil_slow()', context: expect.stringMatching(/PL\/pgSQL function pgvigil_slow\(\) line \d+ at PERFORM/) });
  const generic = (message: string) => findEvent(events, 'generic', message, (e) => e.level === 'ERROR' && e.message.startsWith(message)).details;
  expect(generic('duplicate key value violates unique constraint')).toEqual({
    classified: false, detail: 'Key (id)=(1) already exists.', statement: 'INSERT INTO pgvigil_unique VALUES (1)',
  });
  expect(generic('function pgvigil_no_such_function(integer) does not exist')).toEqual({
    classified: false, statement: 'SELECT pgvigil_no_such_function(1)',
    // PG 19+: a DETAIL saying why instead of the HINT.
    ...(major >= 19 ? { detail: 'There is no function of that name.' } : { hint: expect.stringMatching(/^No function matches the given name and argument types/) }),
  });
  expect(generic('division by zero')).toEqual({
    classified: false, context: expect.stringMatching(/PL\/pgSQL function inline_code_block line \d+ at PERFORM/), statement: 'DO $$ BEGIN PERFORM 1 / 0; END $$',
  });
};

const idleInTransactionTimeout: Check = (events) => {
  const timeout = findEvent(events, 'idle_in_transaction_timeout', 'the idle session terminated');
  expect(timeout).toMatchObject({ level: 'FATAL', database: 'postgres', user: 'postgres' });
};

const transactionTimeout: Check = (events) => {
  const timeout = findEvent(events, 'transaction_timeout', 'the long transaction terminated');
  expect(timeout).toMatchObject({ level: 'FATAL', details: { statement: 'SELECT pg_sleep(5)' } });
};

const checkpointRequested: Check = (events, major) => {
  const starting = findEvent(events, 'checkpoint', 'checkpoint starting', (e) => e.details.phase === 'starting');
  // PG 19: "immediate" became "fast".
  expect(starting.details.reasons).toEqual([major >= 19 ? 'fast' : 'immediate', 'force', 'wait']);
  const complete = findEvent(events, 'checkpoint', 'checkpoint complete', (e) => e.details.phase === 'complete');
  expectNumbers(complete.details, [
    'buffers_written', 'buffers_written_pct', 'wal_files_added', 'wal_files_removed', 'wal_files_recycled', 'write_s', 'sync_s',
    'total_s', 'sync_files', 'sync_longest_s', 'sync_average_s', 'distance_kb', 'estimate_kb', ...(major >= 18 ? ['slru_buffers_written'] : []),
  ], `checkpoint complete (PG ${major})`);
  if (major >= 16) expect(complete.details.lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
  expect(complete.details.unknown_parts).toEqual([]);
};

const tempFilesSort: Check = (events) => {
  const temp = findEvent(events, 'temp_file', 'a sort spilling to disk');
  expect(temp.details.path).toMatch(/^base\/pgsql_tmp\/pgsql_tmp\d+\.\d+$/);
  expect(temp.details.size_bytes).toBeGreaterThan(0);
  expect(temp.details.statement).toContain('ORDER BY md5(g::text)');
};

function ddlCheck(commands: readonly string[]): Check {
  return (events) => {
    const ddl = ofKind(events, 'ddl');
    expect(ddl.map((event) => [event.details.command, event.details.relation])).toEqual(commands.map((command) => [command, 'ddl_orders']));
  };
}

const logicalSlotInvalidated: Check = (events, major) => {
  const invalidated = findEvent(events, 'slot_invalidated', 'pgvigil_cdc invalidated', (e) => e.details.slot === 'pgvigil_cdc' && e.details.phase === 'invalidated');
  expect(invalidated.details.reason).toBe('wal_removed');
  expect(invalidated.details.restart_lsn).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
  // PG 16+: the DETAIL says by how many bytes; 13-15 print no DETAIL.
  if (major >= 16) expectNumbers(invalidated.details, ['exceeded_bytes'], 'slot invalidation DETAIL');
};

/** The record VACUUM's pruning replays as (the one that waits on a snapshot or a buffer pin). */
function pruneRecord(major: number): string {
  // PG 17+: pruning and freezing became one record.
  return major >= 17 ? 'Heap2/PRUNE_VACUUM_SCAN' : 'Heap2/PRUNE';
}

/** Every recovery_conflict event has `reason`: the recipe provoked no other conflict (a snapshot one, say). */
function expectOnlyConflictsOn(events: Events, reason: string): void {
  const reasons = ofKind(events, 'recovery_conflict').map((event) => event.details.reason);
  expect(reasons.length, `recovery_conflict events on ${reason}`).toBeGreaterThan(0);
  expect(reasons.filter((found) => found !== reason), `recovery_conflict events not on ${reason}`).toEqual([]);
}

/** The startup process's "still waiting" and "finished waiting" lines on `reason`, `count` of each, with the record it replays. */
function expectReplayWaits(events: Events, reason: string, count: number, redoRecord: string, major: number): LogEvent<'recovery_conflict_wait'>[] {
  const waits = ofKind(events, 'recovery_conflict_wait');
  // log_recovery_conflict_waits is new in 14.
  if (major < 14) count = 0;
  expect(waits.map((event) => event.details.reason).filter((found) => found !== reason), `replay waits not on ${reason}`).toEqual([]);
  const waiting = waits.filter((event) => event.details.phase === 'waiting');
  expect(waiting, `"recovery still waiting" lines on ${reason}`).toHaveLength(count);
  expect(waits.filter((event) => event.details.phase === 'finished'), `"recovery finished waiting" lines on ${reason}`).toHaveLength(count);
  for (const event of waits) {
    expectNumbers(event.details, ['wait_ms'], `recovery wait on ${reason}`);
    expect(event.details.redo_lsn, `recovery wait on ${reason}: redo LSN`).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(event.details.redo_record).toBe(redoRecord);
  }
  return waiting;
}

const standbyBufferPinConflicts: Check = (events, major) => {
  expectOnlyConflictsOn(events, 'bufferpin');
  const idle = findEvent(events, 'recovery_conflict', 'the idle session holding the cursor terminated', (e) => e.details.reason === 'bufferpin' && e.details.fatal && e.details.statement === null);
  const busy = findEvent(events, 'recovery_conflict', 'pg_sleep cancelled while its cursor holds the pin', (e) => e.details.reason === 'bufferpin' && !e.details.fatal);
  expect(idle).toMatchObject({ level: 'FATAL', details: { detail: 'User was holding shared buffer pin for too long.' } });
  expect(busy).toMatchObject({ level: 'ERROR', details: { statement: 'SELECT pg_sleep(60)' } });
  expect(busy.details.pid).not.toBe(idle.details.pid);
  for (const event of [idle, busy]) expect(event.sqlstate ?? '40001').toBe('40001');
  // LockBufferForCleanup() logs its wait without a process list: the pin's holder is not known.
  for (const waiting of expectReplayWaits(events, 'bufferpin', 2, pruneRecord(major), major)) expect(waiting.details.conflicting_pids).toBeNull();
};

const standbyTablespaceConflict: Check = (events, major) => {
  expectOnlyConflictsOn(events, 'tablespace');
  const cancelled = findEvent(events, 'recovery_conflict', 'pg_sleep cancelled while its cursor keeps a temp file', (e) => e.details.reason === 'tablespace' && !e.details.fatal);
  expect(cancelled).toMatchObject({ level: 'ERROR', details: { statement: 'SELECT pg_sleep(60)', detail: 'User was or might have been using tablespace that must be dropped.' } });
  expect(cancelled.sqlstate ?? '40001').toBe('40001');
  const [waiting] = expectReplayWaits(events, 'tablespace', 1, 'Tablespace/DROP', major);
  if (major >= 14) expect(waiting?.details.conflicting_pids).toEqual([cancelled.details.pid]);
};

const standbyRecoveryConflicts: Check = (events, major) => {
  const snapshot = findEvent(events, 'recovery_conflict', 'snapshot conflict cancelling pg_sleep', (e) => e.details.reason === 'snapshot');
  expect(snapshot).toMatchObject({ level: 'ERROR', details: { fatal: false, statement: 'SELECT pg_sleep(60)' } });
  findEvent(events, 'recovery_conflict', 'lock conflict terminating the idle reader', (e) => e.details.reason === 'lock' && e.details.fatal);
  findEvent(events, 'recovery_conflict', 'database conflict', (e) => e.details.reason === 'database' && e.details.fatal);
  if (major < 14) {
    expect(ofKind(events, 'recovery_conflict_wait'), 'PG 13 has no log_recovery_conflict_waits').toEqual([]);
    return;
  }
  for (const reason of ['snapshot', 'lock'] as const) {
    const waiting = findEvent(events, 'recovery_conflict_wait', `replay waiting on ${reason}`, (e) => e.details.reason === reason && e.details.phase === 'waiting');
    expect(waiting.details.conflicting_pids).toHaveLength(1);
    expectNumbers(waiting.details, ['wait_ms'], `recovery wait on ${reason}`);
    expect(waiting.details.redo_lsn, `recovery wait on ${reason}: redo LSN`).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(waiting.details.redo_record).toBe(reason === 'lock' ? 'Standby/LOCK' : pruneRecord(major));
    findEvent(events, 'recovery_conflict_wait', `replay finished waiting on ${reason}`, (e) => e.details.reason === reason && e.details.phase === 'finished' && e.details.wait_ms !== null);
  }
  // PG 19+: the standby's lock wait names the lock in a CONTEXT line before "WAL redo at".
  const lockWait = findEvent(events, 'recovery_conflict_wait', 'replay waiting on lock', (e) => e.details.reason === 'lock' && e.details.phase === 'waiting');
  if (major >= 19) expect(lockWait.details).toMatchObject({ lock_mode: 'AccessExclusiveLock', lock_object: { type: 'relation' } });
  else expect(lockWait.details.lock_mode).toBeNull();
};

const backendKilledCrashRestart: Check = (events, major) => {
  const crash = findEvent(events, 'server_crash', 'the backend killed by signal 9');
  // PG 18+: the process is named by its backend type.
  expect(crash.details).toMatchObject({ process_type: major >= 18 ? 'client backend' : 'server process', signal: 9, signal_name: 'Killed', statement: 'SELECT pg_sleep(60)' });
  for (const phase of ['terminating_others', 'reinitializing', 'interrupted', 'automatic_recovery', 'redo_start', 'redo_done', 'ready'] as const) {
    findEvent(events, 'server_restart', `phase ${phase}`, (e) => e.details.phase === phase);
  }
  findEvent(events, 'checkpoint', 'the end-of-recovery checkpoint', (e) => e.details.phase === 'starting' && (e.details.reasons ?? []).includes('end-of-recovery'));
};

const serverKilledCrashRecovery: Check = (events) => {
  // Nobody lived to log the death: no crash line, no reset; only the next start's recovery.
  expect(events.filter((e) => e.kind === 'server_crash')).toEqual([]);
  for (const phase of ['interrupted', 'automatic_recovery', 'redo_start', 'redo_done', 'ready'] as const) {
    findEvent(events, 'server_restart', `phase ${phase}`, (e) => e.details.phase === phase);
  }
  expect(events.some((e) => e.kind === 'server_restart' && ['terminating_others', 'reinitializing'].includes(e.details.phase))).toBe(false);
};

const multixactMembersRunShort: Check = (events) => {
  const warning = findEvent(events, 'wraparound_warning', 'the members space warning', (e) => e.details.counter === 'multixact_member');
  expect(warning.details).toMatchObject({ datname: null, database_oid: expect.any(Number), remaining: expect.any(Number), refusing: false });
  expect(warning.level).toBe('WARNING');
  // pg_resetwal needs the server down: a clean stop and start around it.
  for (const phase of ['shutdown_requested', 'shut_down', 'ready'] as const) {
    findEvent(events, 'server_restart', `phase ${phase}`, (e) => e.details.phase === phase);
  }
};

function parallelVacuum(table: string, launched: (planned: number, launched: number) => void): Check {
  return (events, major) => {
    const vacuum = findEvent(events, 'autovacuum', `${table} with an index pass`, (e) => e.details.table === table && (e.details.index_scans ?? 0) >= 1);
    expectVacuumReport(vacuum, major);
    expect(vacuum.details.indexes).toHaveLength(4);
    expectNumbers(vacuum.details, ['parallel_workers_planned', 'parallel_workers_launched'], 'parallel workers: index vacuum line');
    launched(vacuum.details.parallel_workers_planned ?? -1, vacuum.details.parallel_workers_launched ?? -1);
  };
}

const parallelAutovacuumInsertOnly: Check = (events, major) => {
  const vacuum = findEvent(events, 'autovacuum', 'parallel_insert_only', (e) => e.details.table === 'parallel_insert_only');
  expectVacuumReport(vacuum, major);
  expectNumbers(vacuum.details, ['parallel_cleanup_workers_planned', 'parallel_cleanup_workers_launched'], 'parallel workers: index cleanup line');
  expectNulls(vacuum.details, ['parallel_workers_planned', 'parallel_workers_launched'], 'no index-vacuum pass');
};

const repackHoldsBackVacuum: Check = (events, major) => {
  const held = findEvent(events, 'autovacuum', 'hot_counters in database other held back', (e) => e.details.database === 'other' && e.details.table === 'hot_counters' && (e.details.tuples_dead_not_removable ?? 0) > 0);
  expectVacuumReport(held, major);
  const repack = findEvent(events, 'ddl', 'REPACK (CONCURRENTLY) logged by log_statement = ddl', (e) => e.details.command === 'REPACK');
  expect(repack.details).toMatchObject({ relation: 'orders', concurrently: true });
};

const repackLockTimeoutAtSwap: Check = (events) => {
  const wait = findEvent(events, 'lock_wait', 'REPACK waiting for ACCESS EXCLUSIVE at the swap', (e) => e.details.phase === 'waiting' && e.details.lock_mode === 'AccessExclusiveLock');
  expect(wait.details.statement).toBe('REPACK (CONCURRENTLY) accounts');
  const timeout = findEvent(events, 'lock_timeout', 'REPACK cancelled by lock_timeout');
  expect(timeout.details).toMatchObject({ statement: 'REPACK (CONCURRENTLY) accounts', lock_mode: 'AccessExclusiveLock', lock_object: { type: 'relation' } });
  const repack = findEvent(events, 'ddl', 'REPACK (CONCURRENTLY) logged by log_statement = ddl', (e) => e.details.command === 'REPACK');
  expect(repack.details).toMatchObject({ relation: 'accounts', concurrently: true });
  // The decoding worker's `exited with exit code 1` is an ordinary worker exit, not a crash
  // (src/parsers/classify/server-crash.ts): it must not look like one.
  expect(events.filter((event) => event.kind === 'server_crash')).toEqual([]);
};

const CHECKS: Record<string, Check> = {
  'autovacuum-4-indexes': autovacuumFourIndexes,
  'autovacuum-held-back-by-snapshot': autovacuumHeldBack,
  'lock-waits-and-lock-timeout': lockWaitsAndLockTimeout,
  deadlock,
  'statement-timeout': statementTimeout,
  'errors-with-context': errorsWithContext,
  'idle-in-transaction-timeout': idleInTransactionTimeout,
  'transaction-timeout': transactionTimeout,
  'checkpoint-requested': checkpointRequested,
  'temp-files-sort': tempFilesSort,
  // log_statement = ddl logs neither TRUNCATE ("mod") nor VACUUM ("all").
  'log-statement-ddl': ddlCheck(['CLUSTER', 'DROP TABLE']),
  'log-statement-all': ddlCheck(['TRUNCATE', 'VACUUM FULL', 'CLUSTER', 'DROP TABLE']),
  'logical-slot-invalidated': logicalSlotInvalidated,
  'standby-recovery-conflicts': standbyRecoveryConflicts,
  'standby-buffer-pin-conflicts': standbyBufferPinConflicts,
  'standby-tablespace-conflict': standbyTablespaceConflict,
  'standby-feedback-holds-vacuum': standbyFeedbackHoldsVacuum,
  'logical-slot-holds-catalogs': logicalSlotHoldsCatalogs,
  'backend-killed-crash-restart': backendKilledCrashRestart,
  'server-killed-crash-recovery': serverKilledCrashRecovery,
  'multixact-members-run-short': multixactMembersRunShort,
  'parallel-autovacuum': parallelVacuum('parallel_autovacuum', (planned, launched) => {
    expect(planned).toBe(3);
    expect(launched).toBe(planned);
  }),
  'parallel-autovacuum-starved': parallelVacuum('parallel_autovacuum_starved', (planned, launched) => {
    expect(planned).toBe(3);
    expect(launched).toBeLessThan(planned);
  }),
  'parallel-autovacuum-insert-only': parallelAutovacuumInsertOnly,
  'repack-concurrently-holds-back-vacuum': repackHoldsBackVacuum,
  'repack-lock-timeout-at-swap': repackLockTimeoutAtSwap,
};

/** Asserts what scenario `name` must have produced; throws for a scenario without expectations. */
export function expectScenarioEvents(name: string, events: Events, major: PgVersion | number): void {
  const check = CHECKS[name];
  if (!check) throw new Error(`no expectations for scenario ${name}: add them to test/helpers/scenarios/expectations.ts`);
  check(events, major);
}

export function hasExpectations(name: string): boolean {
  return name in CHECKS;
}
