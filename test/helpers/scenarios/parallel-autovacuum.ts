/**
 * PG 19 parallel autovacuum (pg-messages.md §10, §13.7): a table with four indexes and the
 * reloption autovacuum_parallel_workers, vacuumed with parallel index workers; the same starved of
 * workers (max_parallel_workers lowered: fewer launched than planned, and no other log line says
 * so); and an insert-only run, which prints the `index cleanup` variant.
 *
 * 60000 rows make every index larger than min_parallel_index_scan_size (512kB), so all four take
 * part; the leader takes one, so 3 workers are planned.
 */
import type { PgVersion } from '../pg-harness.js';
import type { Settings } from '../pg-server.js';
import { autovacuumLogSettings, churnFourIndexTable, createFourIndexTable, fillFourIndexTable, vacuumHeader } from './autovacuum.js';
import { completeReport } from './log-watcher.js';
import { PG19_ONLY, type Scenario } from './scenario.js';

export const PARALLEL_ROWS = 60_000;
const WORKERS_PER_TABLE = 4;

export function parallelSettings(version: PgVersion, extra: Settings = {}): Settings {
  return { ...autovacuumLogSettings(version), autovacuum_max_parallel_workers: WORKERS_PER_TABLE, ...extra };
}

export function parallelTableOptions(...more: string[]): string {
  return ` WITH (${[`autovacuum_parallel_workers = ${WORKERS_PER_TABLE}`, ...more].join(', ')})`;
}

/**
 * Loads and churns the table with autovacuum off for it, then switches it on: the first
 * autovacuum sees inserts and dead tuples at once and runs one index-vacuum pass.
 */
function churnedTableScenario(name: string, description: string, extra: Settings): Scenario {
  return {
    name,
    description,
    versions: PG19_ONLY,
    logOf: 'primary',
    settings: (version) => parallelSettings(version, extra),
    sessionSettings: {},
    async run({ primary, log }) {
      const table = name.replace(/-/g, '_');
      await createFourIndexTable(primary, table, parallelTableOptions('autovacuum_enabled = false'));
      await fillFourIndexTable(primary, table, PARALLEL_ROWS);
      await churnFourIndexTable(primary, table);
      await primary.query(`ALTER TABLE ${table} SET (autovacuum_enabled = true)`);
      await log.waitFor(completeReport(vacuumHeader('postgres', table, '[1-9]'), 'parallel workers: index vacuum: \\d+ planned, \\d+ launched in total'));
    },
  };
}

export const parallelAutovacuum = churnedTableScenario(
  'parallel-autovacuum',
  `Table with 4 indexes and autovacuum_parallel_workers = ${WORKERS_PER_TABLE}, ${PARALLEL_ROWS} rows, a third updated on an indexed ` +
    'column and a seventh deleted: the autovacuum report has "parallel workers: index vacuum: N planned, N launched in total".',
  {},
);

export const parallelAutovacuumStarved = churnedTableScenario(
  'parallel-autovacuum-starved',
  'As parallel-autovacuum, with max_parallel_workers = 1: fewer workers launched than planned.',
  { max_parallel_workers: 1 },
);

export const parallelAutovacuumInsertOnly: Scenario = {
  name: 'parallel-autovacuum-insert-only',
  description:
    `Table with 4 indexes and autovacuum_parallel_workers = ${WORKERS_PER_TABLE} gets ${PARALLEL_ROWS} inserts and nothing else: the ` +
    'insert-triggered autovacuum has no index-vacuum pass and prints "parallel workers: index cleanup: N planned, N launched".',
  versions: PG19_ONLY,
  logOf: 'primary',
  settings: (version) => parallelSettings(version),
  sessionSettings: {},
  async run({ primary, log }) {
    const table = 'parallel_insert_only';
    await createFourIndexTable(primary, table, parallelTableOptions());
    await fillFourIndexTable(primary, table, PARALLEL_ROWS);
    await log.waitFor(completeReport(vacuumHeader('postgres', table), 'parallel workers: index cleanup: \\d+ planned, \\d+ launched'));
  },
};
