/**
 * Recovery conflicts on a standby (postgres.c, standby.c):
 * - recovery_conflict: the victim's `canceling statement due to conflict with recovery` (ERROR)
 *   or `terminating connection due to conflict with recovery` (FATAL); the reason is the DETAIL.
 * - recovery_conflict_wait: the startup process's log_recovery_conflict_waits lines (14+),
 *   `recovery still waiting after N ms: <reason>` / `recovery finished waiting after ...`.
 */
import type { LogEntry, RecoveryConflictReason, RecoveryConflictWaitDetails } from '../../domain/index.js';
import { sessionFields, type Classification } from './classification.js';
import { LSN_PATTERN, pidList, toFloat } from './fields.js';
import { lockFromContext } from './lock-object.js';

/** errdetail_recovery_conflict(), identical text 13-19 unless marked. */
const DETAIL_REASONS: ReadonlyMap<string, RecoveryConflictReason> = new Map<string, RecoveryConflictReason>([
  ['User was holding shared buffer pin for too long.', 'bufferpin'],
  ['User was holding a relation lock for too long.', 'lock'],
  ['User was or might have been using tablespace that must be dropped.', 'tablespace'],
  ['User query might have needed to see row versions that must be removed.', 'snapshot'],
  // PG 16+.
  ['User was using a logical replication slot that must be invalidated.', 'logical_slot'],
  ['User transaction caused buffer deadlock with recovery.', 'startup_deadlock'],
  // PG 19 development source only (not in 19rc1); kept so a release that prints it is understood.
  ['User transaction caused deadlock with recovery.', 'deadlock'],
  ['User was connected to a database that must be dropped.', 'database'],
]);

/** get_recovery_conflict_desc() (14+). */
const WAIT_REASONS: ReadonlyMap<string, RecoveryConflictReason> = new Map<string, RecoveryConflictReason>([
  ['recovery conflict on buffer pin', 'bufferpin'],
  ['recovery conflict on lock', 'lock'],
  ['recovery conflict on tablespace', 'tablespace'],
  ['recovery conflict on snapshot', 'snapshot'],
  // PG 16+.
  ['recovery conflict on replication slot', 'logical_slot'],
  // 14-18: the startup-deadlock reason; 19: the buffer-pin deadlock.
  ['recovery conflict on buffer deadlock', 'startup_deadlock'],
  // PG 19+: the lock deadlock.
  ['recovery conflict on deadlock', 'deadlock'],
  ['recovery conflict on database', 'database'],
]);

export function classifyRecoveryConflict(entry: LogEntry, fatal: boolean): Classification {
  const detail = entry.detail === null ? null : entry.detail.trim();
  return {
    kind: 'recovery_conflict',
    details: {
      reason: detail === null ? null : (DETAIL_REASONS.get(detail) ?? null),
      fatal,
      detail,
      ...sessionFields(entry),
    },
  };
}

const WAIT = /^recovery (still|finished) waiting after ([\d.]+) ms: (.*)$/;
const CONFLICTING = /^Conflicting process(?:es)?: (.*)\.$/;
const REDO = new RegExp(`^WAL redo at (${LSN_PATTERN}) for ([^:]+)(?:: (.*))?$`);

export function classifyRecoveryConflictWait(entry: LogEntry, message: string): Classification | null {
  const g = WAIT.exec(message);
  if (!g || g[3] === undefined) return null;
  const details: RecoveryConflictWaitDetails = {
    phase: g[1] === 'still' ? 'waiting' : 'finished',
    wait_ms: toFloat(g[2]),
    reason: WAIT_REASONS.get(g[3]) ?? null,
    conflicting_pids: null,
    redo_lsn: null,
    redo_record: null,
    redo_description: null,
    lock_mode: null,
    lock_object: null,
  };
  const conflicting = entry.detail === null ? null : CONFLICTING.exec(entry.detail.trim());
  if (conflicting?.[1] !== undefined) details.conflicting_pids = pidList(conflicting[1]);
  // PG 19: CONTEXT starts with `waiting for ...` and the `WAL redo at` text is a later line of it.
  for (const line of (entry.context ?? '').split('\n')) {
    const redo = REDO.exec(line.trim());
    if (redo) {
      details.redo_lsn = redo[1] ?? null;
      details.redo_record = redo[2] ?? null;
      details.redo_description = redo[3] ?? null;
      break;
    }
  }
  const lock = lockFromContext(entry.context);
  if (lock) Object.assign(details, lock);
  return { kind: 'recovery_conflict_wait', details };
}
