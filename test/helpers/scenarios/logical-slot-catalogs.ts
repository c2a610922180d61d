/**
 * A logical replication slot nobody consumes holds its catalog_xmin: autovacuum of the system
 * catalogs, in every database, reports dead rows not removable at one removable cutoff, while
 * user tables are not held. Catalog churn (CREATE and DROP TABLE) makes the dead catalog rows.
 */
import { autovacuumLogSettings } from './autovacuum.js';
import { completeReport, repeatedReport } from './log-watcher.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { literal } from './session.js';

const SLOT = 'pgvigil_unconsumed';
const OTHER_DATABASE = 'ls_other';
const DATABASES = ['postgres', OTHER_DATABASE];
/** CREATE + DROP TABLE cycles per database: each leaves ~10 dead pg_attribute rows, past autovacuum's threshold. */
const CHURN_CYCLES = 150;
/** Held runs of pg_attribute per database before the slot is dropped (naptime 1s). */
const HELD_RUNS = 6;

const attributeReport = (database: string, body: string) =>
  completeReport(`automatic vacuum of table "${literal(`${database}.pg_catalog.pg_attribute`)}": index scans: \\d+`, body);
const held = (database: string) => attributeReport(database, 'tuples: \\d+ removed, \\d+ remain, [1-9]\\d* are dead but not yet removable');
const released = (database: string) => attributeReport(database, 'tuples: [1-9]\\d* removed, \\d+ remain, 0 are dead but not yet removable');

export const logicalSlotHoldsCatalogs: Scenario = {
  name: 'logical-slot-holds-catalogs',
  description:
    `A logical replication slot (${SLOT}, plugin pgoutput) that nobody consumes, then ${CHURN_CYCLES} CREATE TABLE + DROP TABLE ` +
    `cycles in each of two databases (postgres, ${OTHER_DATABASE}): autovacuum of pg_catalog tables reports, in both, dead rows ` +
    `not yet removable at the slot's catalog_xmin, ${HELD_RUNS} runs of pg_attribute per database, until the slot is dropped.`,
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: autovacuumLogSettings,
  sessionSettings: {},
  async run({ primary, log }) {
    await primary.query(`DROP DATABASE IF EXISTS ${OTHER_DATABASE}`);
    await primary.query(`CREATE DATABASE ${OTHER_DATABASE}`);
    await primary.query(`SELECT pg_create_logical_replication_slot('${SLOT}', 'pgoutput')`);
    try {
      for (const database of DATABASES) {
        await primary.query(`DO $$ BEGIN FOR i IN 1..${CHURN_CYCLES} LOOP
          EXECUTE format('CREATE TABLE ls_churn_%s (a int, b text, c timestamptz)', i);
          EXECUTE format('DROP TABLE ls_churn_%s', i);
        END LOOP; END $$`, [], database);
      }
      for (const database of DATABASES) await log.waitFor(repeatedReport(held(database), HELD_RUNS), 60_000);
    } finally {
      await primary.query(`SELECT pg_drop_replication_slot('${SLOT}')`);
    }
    for (const database of DATABASES) await log.waitFor(released(database), 60_000);
  },
};
