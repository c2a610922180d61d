/**
 * How a locked object reads to a person: the names the daemon resolved (`appdb.public.orders`)
 * first, the OIDs as PostgreSQL printed them beside them, since a name can be renamed or dropped
 * later and the OIDs are what the server log says.
 */
import type { LockObject } from './event-details.js';

/** `appdb.public.orders`, `appdb`, or null when nothing was resolved. */
export function resolvedLockName(lock: LockObject): string | null {
  const database = lock.database_name ?? null;
  const relation = lock.relation_name ?? null;
  if (relation !== null) return database !== null ? `${database}.${relation}` : relation;
  return database;
}

/** `appdb.public.orders (relation 16394 of database 5)`, or the printed description alone. */
export function lockObjectName(lock: LockObject): string {
  const printed = lock.description || lock.type;
  const name = resolvedLockName(lock);
  return name === null ? printed : `${name} (${printed})`;
}
