/**
 * Session-level timeouts: statement_timeout (ERROR), idle_in_transaction_session_timeout and
 * transaction_timeout (FATAL: the server ends the connection).
 */
import type { PgVersion } from '../pg-harness.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

interface TimeoutCase {
  name: string;
  description: string;
  versions: readonly PgVersion[];
  setting: string;
  value: string;
  /** Opens a transaction first. */
  inTransaction: boolean;
  statement: string;
  /** SQLSTATE the statement fails with; null when it succeeds and the session then idles. */
  sqlstate: string | null;
  /** The log line that ends the scenario: `<LEVEL>:  <message>`. */
  logged: string;
}

function timeoutScenario(spec: TimeoutCase): Scenario {
  return {
    name: spec.name,
    description: spec.description,
    versions: spec.versions,
    logOf: 'primary',
    settings: () => ({}),
    sessionSettings: { [spec.setting]: spec.value },
    async run({ primary, log }) {
      await withSessions(primary, { session: 'postgres' }, async ({ session }) => {
        await session.query(`SET ${spec.setting} = '${spec.value}'`);
        if (spec.inTransaction) await session.query('BEGIN');
        if (spec.sqlstate) await session.expectError(spec.statement, spec.sqlstate);
        else await session.query(spec.statement);
        await log.waitFor(new RegExp(`\\[${session.pid}\\] [^\\n]*${spec.logged}`));
      });
    },
  };
}

export const statementTimeout = timeoutScenario({
  name: 'statement-timeout',
  description: 'SELECT pg_sleep(5) with statement_timeout = 200ms is cancelled.',
  versions: ALL_VERSIONS,
  setting: 'statement_timeout',
  value: '200ms',
  inTransaction: false,
  statement: 'SELECT pg_sleep(5)',
  sqlstate: '57014',
  logged: 'ERROR:  canceling statement due to statement timeout',
});

export const idleInTransactionTimeout = timeoutScenario({
  name: 'idle-in-transaction-timeout',
  description: 'A session opens a transaction, runs one SELECT and stays idle: idle_in_transaction_session_timeout = 200ms ends it.',
  versions: ALL_VERSIONS,
  setting: 'idle_in_transaction_session_timeout',
  value: '200ms',
  inTransaction: true,
  statement: 'SELECT 1',
  sqlstate: null,
  logged: 'FATAL:  terminating connection due to idle-in-transaction timeout',
});

export const transactionTimeout = timeoutScenario({
  name: 'transaction-timeout',
  description: 'A transaction running SELECT pg_sleep(5) with transaction_timeout = 300ms: the server ends the connection.',
  // PG 17+: transaction_timeout.
  versions: ALL_VERSIONS.filter((version) => version >= 17),
  setting: 'transaction_timeout',
  value: '300ms',
  inTransaction: true,
  statement: 'SELECT pg_sleep(5)',
  sqlstate: '25P04',
  logged: 'FATAL:  terminating connection due to transaction timeout',
});

/**
 * Errors that carry continuation lines: a statement_timeout inside a PL/pgSQL function (CONTEXT),
 * and errors no classifier family knows, with their DETAIL (unique violation), HINT (unknown
 * function) and CONTEXT (inside a DO block). Generic events must keep them.
 */
export const errorsWithContext: Scenario = {
  name: 'errors-with-context',
  description: 'A statement_timeout inside PL/pgSQL function pgvigil_slow() (200ms), a unique violation, an unknown function and a division by zero in a DO block.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({}),
  sessionSettings: { statement_timeout: '200ms (for SELECT pgvigil_slow() only)' },
  async run({ primary, log }) {
    await withSessions(primary, { session: 'postgres' }, async ({ session }) => {
      await session.query('CREATE FUNCTION pgvigil_slow() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(5); END $$');
      await session.query('CREATE TABLE pgvigil_unique (id int PRIMARY KEY)');
      await session.query('INSERT INTO pgvigil_unique VALUES (1)');
      await session.query("SET statement_timeout = '200ms'");
      await session.expectError('SELECT pgvigil_slow()', '57014');
      await session.query('RESET statement_timeout');
      await session.expectError('INSERT INTO pgvigil_unique VALUES (1)', '23505');
      await session.expectError('SELECT pgvigil_no_such_function(1)', '42883');
      await session.expectError('DO $$ BEGIN PERFORM 1 / 0; END $$', '22012');
      await log.waitFor(new RegExp(`\\[${session.pid}\\] [^\\n]*ERROR:  division by zero`));
      await session.query('DROP TABLE pgvigil_unique');
      await session.query('DROP FUNCTION pgvigil_slow()');
    });
  },
};
