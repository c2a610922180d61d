/**
 * The role a target last had, as the previous run stored it (its newest `pg_in_recovery` sample):
 * what the poller compares the first probe with, so a failover while pgvigil was not running is
 * still said. Null when nothing is stored (a new store, or retention removed it).
 */
import { labelsKey } from '../domain/index.js';
import type { Db } from './open-store.js';

export function storedInRecovery(db: Db, target: string): boolean | null {
  const value = db.prepare(`
    SELECT s.value FROM samples s JOIN series r ON r.id = s.series_id
    WHERE r.target = ? AND r.name = 'pg_in_recovery' AND r.labels = ?
    ORDER BY s.ts_ms DESC LIMIT 1`).pluck().get(target, labelsKey({})) as number | null | undefined;
  return value === undefined || value === null ? null : value === 1;
}
