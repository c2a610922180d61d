/**
 * Routine server work that leaves a log line: a requested checkpoint, temporary files of a sort
 * over work_mem, and statement logging of DDL and maintenance commands.
 */
import type { Settings } from '../pg-server.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions, type Session } from './session.js';

export const checkpointRequested: Scenario = {
  name: 'checkpoint-requested',
  description: 'A table of 5000 rows is written, then CHECKPOINT: checkpoint starting / complete with buffer and WAL counts.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_checkpoints: true }),
  sessionSettings: {},
  async run({ primary, log }) {
    await primary.query('CREATE TABLE ck_notes AS SELECT g AS id, md5(g::text) AS note FROM generate_series(1, 5000) g');
    await primary.query('CHECKPOINT');
    await log.waitFor(/checkpoint complete:[^\n]*\n/);
  },
};

export const tempFilesSort: Scenario = {
  name: 'temp-files-sort',
  description: 'With work_mem = 64kB, a sort of 100000 rows by md5 spills to temporary files (log_temp_files = 0).',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_temp_files: 0 }),
  sessionSettings: { work_mem: '64kB' },
  async run({ primary, log }) {
    await withSessions(primary, { sorter: 'postgres' }, async ({ sorter }) => {
      await sorter.query("SET work_mem = '64kB'");
      await sorter.query('SELECT count(*) FROM (SELECT g FROM generate_series(1, 100000) g ORDER BY md5(g::text)) sorted');
      await log.waitFor(new RegExp(`\\[${sorter.pid}\\] [^\\n]*LOG:  temporary file: path "[^"]+", size \\d+\\n[^\\n]*STATEMENT:  SELECT count`));
    });
  },
};

/** DDL and maintenance commands on one table, ending with DROP TABLE. */
async function runDdlCommands(session: Session): Promise<void> {
  await session.query('CREATE TABLE ddl_orders (id int PRIMARY KEY, note text NOT NULL)');
  await session.query('INSERT INTO ddl_orders SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
  await session.query('TRUNCATE ddl_orders');
  await session.query('INSERT INTO ddl_orders SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
  await session.query('VACUUM FULL ddl_orders');
  await session.query('CLUSTER ddl_orders USING ddl_orders_pkey');
  await session.query('DROP TABLE ddl_orders');
}

function ddlScenario(logStatement: 'ddl' | 'all', description: string): Scenario {
  const settings: Settings = { log_statement: logStatement };
  return {
    name: `log-statement-${logStatement}`,
    description,
    versions: ALL_VERSIONS,
    logOf: 'primary',
    settings: () => settings,
    sessionSettings: {},
    async run({ primary, log }) {
      await withSessions(primary, { dba: 'postgres' }, async ({ dba }) => {
        await runDdlCommands(dba);
        await log.waitFor(new RegExp(`\\[${dba.pid}\\] [^\\n]*LOG:  statement: DROP TABLE ddl_orders`));
      });
    },
  };
}

export const logStatementDdl = ddlScenario(
  'ddl',
  'CREATE TABLE, INSERT, TRUNCATE, VACUUM FULL, CLUSTER, DROP TABLE with log_statement = ddl. Only CREATE, CLUSTER and ' +
    'DROP are logged: PostgreSQL classes TRUNCATE as "mod" and VACUUM as "all".',
);

export const logStatementAll = ddlScenario(
  'all',
  'The same commands as log-statement-ddl with log_statement = all: TRUNCATE and VACUUM FULL appear too.',
);
