/**
 * The relation a lock report is about, as one key per table: a lock on a relation or on a page or
 * tuple of it names the relation by OID (and by name when the daemon resolved it); a wait for a
 * row lock is a wait for the transaction holding the row, which the log names only in the
 * CONTEXT (`while updating tuple (0,1) in relation "accounts"`). Offline (no catalog) the same
 * table can so appear twice: by OID for table locks, by name for row locks.
 */
import type { LockObject } from '../../domain/index.js';
import { lockObjectName, resolvedLockName } from '../../domain/index.js';

/** The key of waits for a transaction or virtual transaction whose CONTEXT names no relation. */
export const RELATION_NOT_LOGGED = '(row or transaction lock: relation not logged)';

const CONTEXT_RELATION = /\bin relation "((?:[^"]|"")+)"/;

/** `appdb.public.orders (relation 16394 of database 5)`, `accounts` (from the CONTEXT), or the lock as printed. */
export function lockedRelation(lock: LockObject | null, context: string | null): string {
  if (lock !== null && lock.relation_oid !== null) {
    const printed = `relation ${lock.relation_oid} of database ${lock.database_oid ?? '?'}`;
    const name = resolvedLockName(lock);
    return name === null ? printed : `${name} (${printed})`;
  }
  const named = context === null ? null : CONTEXT_RELATION.exec(context);
  if (named?.[1] !== undefined) return named[1].replaceAll('""', '"');
  if (lock === null || lock.type === 'transactionid' || lock.type === 'virtualxid') return RELATION_NOT_LOGGED;
  return lockObjectName(lock);
}
