/**
 * Autovacuum and autoanalyze reports on a table with four indexes, and a vacuum held back by an
 * open snapshot (dead tuples that are not yet removable, an old removable cutoff).
 */
import type { PgServer, PgVersion } from '../pg-harness.js';
import type { Settings } from '../pg-server.js';
import { completeReport } from './log-watcher.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { literal, withSessions } from './session.js';

/** Autovacuum visits each database every second and reports every run. */
export function autovacuumLogSettings(version: PgVersion): Settings {
  return {
    autovacuum_naptime: '1s',
    log_autovacuum_min_duration: 0,
    // PG 19+: autoanalyze reports have their own threshold, or they are not logged at all.
    ...(version >= 19 ? { log_autoanalyze_min_duration: 0 } : {}),
  };
}

/** A table shaped like the ones the issue talks about: a primary key and three secondary indexes. */
export async function createFourIndexTable(server: PgServer, table: string, options = ''): Promise<void> {
  await server.query(`CREATE TABLE ${table} (id int PRIMARY KEY, customer int NOT NULL, note text NOT NULL, created_at timestamptz NOT NULL)${options}`);
  await server.query(`CREATE INDEX ${table}_customer ON ${table} (customer)`);
  await server.query(`CREATE INDEX ${table}_note ON ${table} (note)`);
  await server.query(`CREATE INDEX ${table}_created_at ON ${table} (created_at)`);
}

export async function fillFourIndexTable(server: PgServer, table: string, rows: number): Promise<void> {
  await server.query(
    `INSERT INTO ${table} SELECT g, g % 1000, md5(g::text), timestamptz '2026-01-01' + g * interval '1 second' FROM generate_series(1, ${rows}) g`,
  );
}

/** Dead tuples in every index: a non-HOT update of a third of the rows and a delete of a seventh. */
export async function churnFourIndexTable(server: PgServer, table: string): Promise<void> {
  await server.query(`UPDATE ${table} SET customer = customer + 1 WHERE id % 3 = 0`);
  await server.query(`DELETE FROM ${table} WHERE id % 7 = 0`);
}

export function vacuumHeader(database: string, table: string, indexScans = '\\d+'): string {
  return `automatic vacuum of table "${literal(`${database}.public.${table}`)}": index scans: ${indexScans}`;
}

export function analyzeHeader(database: string, table: string): string {
  return `automatic analyze of table "${literal(`${database}.public.${table}`)}"`;
}

export const autovacuumFourIndexes: Scenario = {
  name: 'autovacuum-4-indexes',
  description:
    'Table with a primary key and 3 secondary indexes: 20000 rows inserted (insert-triggered autovacuum, autoanalyze), ' +
    'then a third of the rows updated on an indexed column and a seventh deleted (autovacuum with an index pass, autoanalyze). ' +
    'I/O timing (and, 18+, cost-delay timing) is on, so the optional report lines appear.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: (version) => ({
    ...autovacuumLogSettings(version),
    track_io_timing: true,
    // PG 18+: the report's "delay time:" line.
    ...(version >= 18 ? { track_cost_delay_timing: true } : {}),
  }),
  sessionSettings: {},
  async run({ primary, log }) {
    const table = 'av_orders';
    await createFourIndexTable(primary, table);
    await fillFourIndexTable(primary, table, 20_000);
    await log.waitFor(completeReport(analyzeHeader('postgres', table)));
    await churnFourIndexTable(primary, table);
    await log.waitFor(completeReport(vacuumHeader('postgres', table, '[1-9]')));
    // The same worker analyzes right after the vacuum: wait for that second report too.
    await log.waitFor(new RegExp(`${completeReport(vacuumHeader('postgres', table, '[1-9]')).source}[^]*${completeReport(analyzeHeader('postgres', table)).source}`));
  },
};

export const autovacuumHeldBackBySnapshot: Scenario = {
  name: 'autovacuum-held-back-by-snapshot',
  description:
    'A REPEATABLE READ transaction holds its snapshot while every row of a 5000-row table is updated: autovacuum reports ' +
    'dead tuples that are not yet removable and an old removable cutoff, run after run, until the transaction ends and a run removes them.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: autovacuumLogSettings,
  sessionSettings: {},
  async run({ primary, log }) {
    const table = 'av_held';
    await primary.query(`CREATE TABLE ${table} (id int PRIMARY KEY, hits int NOT NULL, note text NOT NULL)`);
    await primary.query(`CREATE INDEX ${table}_note ON ${table} (note)`);
    await primary.query(`INSERT INTO ${table} SELECT g, 0, md5(g::text) FROM generate_series(1, 5000) g`);
    await log.waitFor(completeReport(analyzeHeader('postgres', table)));
    await withSessions(primary, { holder: 'postgres' }, async ({ holder }) => {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query(`SELECT count(*) FROM ${table}`);
      await primary.query(`UPDATE ${table} SET hits = hits + 1`);
      await log.waitFor(completeReport(vacuumHeader('postgres', table), 'tuples: \\d+ removed, \\d+ remain, [1-9]\\d* are dead but not yet removable'));
      await holder.query('COMMIT');
      await log.waitFor(completeReport(vacuumHeader('postgres', table), 'tuples: [1-9]\\d* removed, \\d+ remain, 0 are dead but not yet removable'));
    });
  },
};
