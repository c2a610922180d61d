/**
 * Every column the collectors' SQL names exists in that version of the view: the check that
 * stands in for a server on the versions no test runs (13, 14, 16, 17), against the column lists
 * of pg-messages.md §8 (test/fixtures/collector-rows/catalog-columns.ts).
 */
import { describe, expect, it } from 'vitest';
import { VIEW_COLUMNS } from '../../test/fixtures/collector-rows/catalog-columns.js';
import { INVALID_INDEXES_SQL } from './pg-invalid-indexes.js';
import { lockWaitsSql } from './pg-lock-waits.js';
import { LONG_TRANSACTIONS_SQL } from './pg-long-transactions.js';
import { MAINTENANCE_SESSIONS_SQL } from './pg-maintenance-sessions.js';
import { REPACK_LEFTOVERS_SQL } from './pg-repack-leftovers.js';
import { replicationSlotsSql } from './pg-replication-slots.js';
import { standbySql } from './pg-standby.js';
import { ACTIVITY_SQL } from './pg-stat-activity.js';
import { ARCHIVER_SQL } from './pg-stat-archiver.js';
import { PG_STAT_CHECKPOINTER } from './pg-stat-checkpointer.js';
import { PG_STAT_DATABASE_CONFLICTS } from './pg-stat-database-conflicts.js';
import { PG_STAT_DATABASE } from './pg-stat-database.js';
import { progressRepackSql } from './pg-stat-progress-repack.js';
import { progressVacuumSql } from './pg-stat-progress-vacuum.js';
import { STAT_REPLICATION_SQL } from './pg-stat-replication.js';
import { userTablesSql } from './pg-stat-user-tables.js';
import { PG_STAT_WAL } from './pg-stat-wal.js';
import { viewSql } from './view-collector.js';
import { XMIN_HORIZON_SQL } from './pg-xmin-horizon.js';

const MAJORS = [13, 14, 15, 16, 17, 18, 19];

/** Collector SQL by version, and which view each table alias in it stands for. */
const QUERIES: Array<{ name: string; sql: (major: number) => string; aliases: (major: number) => Record<string, string>; since?: number }> = [
  { name: 'pg_stat_user_tables', sql: userTablesSql, aliases: () => ({ s: 'pg_stat_user_tables' }) },
  { name: 'pg_replication_slots', sql: replicationSlotsSql, aliases: () => ({ s: 'pg_replication_slots', a: 'pg_stat_activity' }) },
  { name: 'pg_xmin_horizon', sql: () => XMIN_HORIZON_SQL,
    aliases: () => ({ a: 'pg_stat_activity', s: 'pg_replication_slots', r: 'pg_stat_replication', p: 'pg_prepared_xacts' }) },
  { name: 'pg_stat_replication', sql: () => STAT_REPLICATION_SQL,
    aliases: () => ({ r: 'pg_stat_replication', a: 'pg_stat_activity', s: 'pg_replication_slots' }) },
  { name: 'pg_standby', sql: standbySql, aliases: () => ({ w: 'pg_stat_wal_receiver', rc: 'pg_stat_recovery' }) },
  { name: 'pg_stat_progress_vacuum', sql: progressVacuumSql, aliases: () => ({ p: 'pg_stat_progress_vacuum', a: 'pg_stat_activity' }) },
  { name: 'pg_stat_progress_repack', sql: progressRepackSql,
    aliases: (major) => ({ p: major >= 19 ? 'pg_stat_progress_repack' : 'pg_stat_progress_cluster', a: 'pg_stat_activity' }) },
  { name: 'pg_maintenance_sessions', sql: () => MAINTENANCE_SESSIONS_SQL, aliases: () => ({ a: 'pg_stat_activity' }) },
  { name: 'pg_lock_waits', sql: lockWaitsSql, aliases: () => ({ a: 'pg_stat_activity', w: 'pg_locks', t: 'pg_locks' }) },
  { name: 'pg_repack_leftovers', sql: () => REPACK_LEFTOVERS_SQL, aliases: () => ({ l: 'pg_locks' }) },
  { name: 'pg_invalid_indexes', sql: () => INVALID_INDEXES_SQL, aliases: () => ({ p: 'pg_stat_progress_create_index', l: 'pg_locks' }) },
  { name: 'pg_stat_archiver', sql: () => ARCHIVER_SQL, aliases: () => ({ a: 'pg_stat_archiver' }) },
  { name: 'pg_stat_activity', sql: () => ACTIVITY_SQL, aliases: () => ({ a: 'pg_stat_activity' }) },
  { name: 'pg_long_transactions', sql: () => LONG_TRANSACTIONS_SQL, aliases: () => ({ a: 'pg_stat_activity' }) },
  { name: 'pg_stat_checkpointer', sql: (major) => viewSql(PG_STAT_CHECKPOINTER, major),
    aliases: () => ({ c: 'pg_stat_checkpointer', b: 'pg_stat_bgwriter' }) },
];

// Views read without aliases: every plain column of the spec.
const PLAIN_VIEWS = [
  { spec: PG_STAT_DATABASE, view: 'pg_stat_database', since: 13 },
  { spec: PG_STAT_DATABASE_CONFLICTS, view: 'pg_stat_database_conflicts', since: 13 },
  { spec: PG_STAT_WAL, view: 'pg_stat_wal', since: 14 },
];

function referencedColumns(sql: string, aliases: Record<string, string>): Array<{ view: string; column: string }> {
  const out: Array<{ view: string; column: string }> = [];
  for (const [, alias, column] of sql.matchAll(/\b([a-z]+)\.([a-z_]+)\b/g)) {
    const view = aliases[alias ?? ''];
    if (view && column) out.push({ view, column });
  }
  return out;
}

describe('collector SQL names only columns its version has', () => {
  for (const major of MAJORS) {
    it(`PostgreSQL ${major}`, () => {
      const missing: string[] = [];
      for (const q of QUERIES) {
        for (const { view, column } of referencedColumns(q.sql(major), q.aliases(major))) {
          const columns = VIEW_COLUMNS[view]?.(major);
          if (!columns?.has(column)) missing.push(`${q.name}: ${view}.${column}`);
        }
      }
      for (const { spec, view, since } of PLAIN_VIEWS) {
        if (major < since) continue;
        const sql = viewSql(spec, major);
        for (const column of [...spec.labels, ...spec.columns.filter((c) => !c.expr).map((c) => c.column)]) {
          if (sql.includes(column) && !VIEW_COLUMNS[view]?.(major).has(column)) missing.push(`${spec.name}: ${column}`);
        }
      }
      expect(missing).toEqual([]);
    });
  }

  it('finds the column references it checks (the check itself can fail)', () => {
    const refs = referencedColumns(userTablesSql(18), { s: 'pg_stat_user_tables' }).map((r) => r.column);
    expect(refs).toEqual(expect.arrayContaining(['n_dead_tup', 'total_vacuum_time']));
    expect(VIEW_COLUMNS.pg_stat_user_tables?.(15).has('total_vacuum_time')).toBe(false);
    expect(referencedColumns(userTablesSql(15), { s: 'pg_stat_user_tables' }).map((r) => r.column)).not.toContain('total_vacuum_time');
  });
});
