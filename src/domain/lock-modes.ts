/**
 * PostgreSQL's table-level lock modes and which conflict (the table in the documentation's
 * "Explicit Locking" chapter, lock.c's LockConflicts). A queued request blocks every later request
 * that conflicts with it, even one compatible with the locks already granted: that is how one
 * waiting DDL makes a queue.
 */
export const LOCK_MODES = [
  'AccessShareLock', 'RowShareLock', 'RowExclusiveLock', 'ShareUpdateExclusiveLock',
  'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock',
] as const;

export type LockMode = (typeof LOCK_MODES)[number];

const CONFLICTS: Record<LockMode, readonly LockMode[]> = {
  AccessShareLock: ['AccessExclusiveLock'],
  RowShareLock: ['ExclusiveLock', 'AccessExclusiveLock'],
  RowExclusiveLock: ['ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareUpdateExclusiveLock: ['ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareLock: ['RowExclusiveLock', 'ShareUpdateExclusiveLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ShareRowExclusiveLock: ['RowExclusiveLock', 'ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  ExclusiveLock: ['RowShareLock', 'RowExclusiveLock', 'ShareUpdateExclusiveLock', 'ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock'],
  AccessExclusiveLock: LOCK_MODES,
};

export function isLockMode(mode: string): mode is LockMode {
  return (LOCK_MODES as readonly string[]).includes(mode);
}

/** Whether a request for `b` must wait for `a` (granted or queued ahead of it); unknown modes never conflict. */
export function lockModesConflict(a: string, b: string): boolean {
  return isLockMode(a) && isLockMode(b) && CONFLICTS[a].includes(b);
}
