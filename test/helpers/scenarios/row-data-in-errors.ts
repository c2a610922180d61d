/**
 * Row data and statement text in the continuation lines of errors, for redaction (issue #24 §3):
 * every value the scenario writes holds a marker (`rdsecret_...`) that a test searches for after
 * `redact: literals`. The server prints them in
 * - DETAIL: a unique violation (`Key (email)=(...)`), a check and a not-null violation (`Failing
 *   row contains (...)`), a foreign-key violation, a JSON token (`Token "..." is invalid.`);
 * - HINT and DETAIL that PL/pgSQL code composes (`RAISE ... USING DETAIL, HINT`); its message holds
 *   no value: pgvigil keeps messages as written (src/lib/redact.ts);
 * - CONTEXT: a statement with literals run by PL/pgSQL (`SQL statement "INSERT ... VALUES
 *   ('...')"`), the JSON input (`JSON data, line 1: ...`), a COPY input line;
 * - QUERY: the internal query of a PL/pgSQL expression that fails to parse;
 * - STATEMENT: each statement as sent, literals and all.
 *
 * Not in SCENARIOS: no incident of its own; its fixtures live in test/fixtures/redaction
 * (`npm run fixtures:record -- --versions 18 --scenarios row-data-in-errors --out test/fixtures/redaction`).
 */
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

/** The marker every value carries: found anywhere after redaction, it leaked. */
// One JSON token (letters, digits, _), so the server's JSON DETAIL quotes it whole.
export const ROW_SECRET = 'rdsecret';

export const rowDataInErrors: Scenario = {
  name: 'row-data-in-errors',
  description: 'Errors whose DETAIL, HINT, CONTEXT, QUERY and STATEMENT lines quote values marked rdsecret: unique, check, not-null and foreign-key violations, a PL/pgSQL RAISE with DETAIL and HINT, dynamic SQL failing inside PL/pgSQL, invalid JSON, a COPY input line, a PL/pgSQL expression that does not parse.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({}),
  sessionSettings: {},
  async run({ primary, log }) {
    await withSessions(primary, { session: 'postgres' }, async ({ session }) => {
      await session.query('CREATE TABLE rd_users (id int PRIMARY KEY, email text UNIQUE NOT NULL, balance numeric CHECK (balance >= 0), note text)');
      await session.query('CREATE TABLE rd_orders (id int PRIMARY KEY, user_id int REFERENCES rd_users)');
      await session.query(`INSERT INTO rd_users VALUES (1, '${ROW_SECRET}_alice@example.com', 10)`);
      await session.expectError(`INSERT INTO rd_users VALUES (2, '${ROW_SECRET}_alice@example.com', 5)`, '23505');
      await session.expectError(`INSERT INTO rd_users VALUES (3, '${ROW_SECRET}_bob@example.com', -1)`, '23514');
      await session.expectError(`INSERT INTO rd_users (id, email, note) VALUES (4, NULL, '${ROW_SECRET}_carol')`, '23502');
      await session.expectError('INSERT INTO rd_orders VALUES (1, 424242)', '23503');
      await session.expectError(`SELECT '{"card": ${ROW_SECRET}_4111}'::json`, '22P02');
      await session.expectError([
        'DO $$ DECLARE card text := ' + `'${ROW_SECRET}_4111_1111';`,
        "BEGIN RAISE EXCEPTION 'payment refused' USING DETAIL = 'card ' || card, HINT = 'call the holder of ' || card; END $$",
      ].join(' '), 'P0001');
      await session.expectError(`DO $$ BEGIN EXECUTE format('INSERT INTO rd_users VALUES (1, %L, 0)', '${ROW_SECRET}_dave'); END $$`, '23505');
      await session.expectError(`DO $$ DECLARE x text; BEGIN x := no_such_column || '${ROW_SECRET}_erin'; END $$`, '42703');
      await session.expectError(`COPY rd_users FROM PROGRAM 'printf "9\\t${ROW_SECRET}_frank\\n"'`, '22P04');
      await log.waitFor(new RegExp(`\\[${session.pid}\\] [^\\n]*CONTEXT:  COPY rd_users`));
      await session.query('DROP TABLE rd_orders, rd_users');
    });
  },
};
