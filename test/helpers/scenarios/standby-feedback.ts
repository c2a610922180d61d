/**
 * A standby with hot_standby_feedback holds vacuum back on the primary in every database: its
 * feedback lands in its physical slot's xmin (or, without a slot, its walsender's xmin), which
 * belongs to no database, so autovacuum of tables in two databases reports the
 * same removable cutoff, with dead rows not removable, until the standby's query ends.
 */
import { waitUntil } from '../pg-server.js';
import { autovacuumLogSettings, vacuumHeader } from './autovacuum.js';
import { completeReport, repeatedReport } from './log-watcher.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { Session } from './session.js';

const OTHER_DATABASE = 'fb_other';
const TABLES = [{ database: 'postgres', table: 'fb_orders' }, { database: OTHER_DATABASE, table: 'fb_events' }];

const held = (database: string, table: string) =>
  completeReport(vacuumHeader(database, table), 'tuples: \\d+ removed, \\d+ remain, [1-9]\\d* are dead but not yet removable');
const released = (database: string, table: string) =>
  completeReport(vacuumHeader(database, table), 'tuples: [1-9]\\d* removed, \\d+ remain, 0 are dead but not yet removable');

/** Held runs per table before the standby's transaction ends. */
const HELD_RUNS = 6;


export const standbyFeedbackHoldsVacuum: Scenario = {
  name: 'standby-feedback-holds-vacuum',
  description:
    `A REPEATABLE READ transaction on a hot standby with hot_standby_feedback = on (and wal_receiver_status_interval = 1s), ` +
    'streaming through a physical replication slot, ' +
    `holds its snapshot while every row of a 5000-row table is updated in two databases of the primary (postgres, ${OTHER_DATABASE}): ` +
    `autovacuum reports, in both, dead tuples not yet removable at one removable cutoff, ${HELD_RUNS} runs per table, until the standby transaction ends.`,
  versions: ALL_VERSIONS,
  logOf: 'primary',
  withStandby: true,
  settings: autovacuumLogSettings,
  sessionSettings: {},
  async run({ primary, standby, log }) {
    if (!standby) throw new Error('standby-feedback-holds-vacuum needs a standby');
    await primary.query(`DROP DATABASE IF EXISTS ${OTHER_DATABASE}`);
    await primary.query(`CREATE DATABASE ${OTHER_DATABASE}`);
    for (const { database, table } of TABLES) {
      await primary.query(`CREATE TABLE ${table} (id int PRIMARY KEY, hits int NOT NULL)`, [], database);
      await primary.query(`INSERT INTO ${table} SELECT g, 0 FROM generate_series(1, 5000) g`, [], database);
    }
    // Wait for the insert-triggered runs, so the held runs come after the updates only.
    for (const { database, table } of TABLES) await log.waitFor(completeReport(vacuumHeader(database, table)));

    await standby.query('ALTER SYSTEM SET hot_standby_feedback = on');
    await standby.query('ALTER SYSTEM SET wal_receiver_status_interval = 1');
    await standby.query('SELECT pg_reload_conf()');
    await waitUntil(async () => (await standby.query(`SELECT 1 FROM pg_class WHERE relname = 'fb_orders'`)).length === 1, 30_000, 'fb_orders replayed on the standby');
    const reader = await Session.open(standby, 'standby reader');
    try {
      await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await reader.query('SELECT count(*) FROM fb_orders');
      const [snapshot] = await reader.query<{ xmin: string }>('SELECT txid_snapshot_xmin(txid_current_snapshot())::text AS xmin');
      // The primary holds the horizon once the standby's feedback carries the reader's snapshot:
      // in its physical slot's xmin (the harness's standby streams through a slot), or without a
      // slot in its walsender's backend_xmin.
      await waitUntil(async () => {
        const rows = await primary.query<{ held: boolean }>(
          `SELECT x::text::bigint <= $1::bigint AS held
           FROM (SELECT xmin AS x FROM pg_replication_slots UNION ALL SELECT backend_xmin FROM pg_stat_replication) h
           WHERE x IS NOT NULL`, [snapshot!.xmin]);
        return rows.some((row) => row.held);
      }, 30_000, 'standby feedback carrying the reader\'s snapshot');
      for (const { database, table } of TABLES) await primary.query(`UPDATE ${table} SET hits = hits + 1`, [], database);
      // Run after run for a few seconds (naptime 1s), so the hold outlasts a rules interval.
      for (const { database, table } of TABLES) await log.waitFor(repeatedReport(held(database, table), HELD_RUNS));
      await reader.query('COMMIT');
    } finally {
      await reader.close();
    }
    for (const { database, table } of TABLES) await log.waitFor(released(database, table));
    await standby.query('ALTER SYSTEM RESET hot_standby_feedback');
    await standby.query('ALTER SYSTEM RESET wal_receiver_status_interval');
    await standby.query('SELECT pg_reload_conf()');
  },
};
