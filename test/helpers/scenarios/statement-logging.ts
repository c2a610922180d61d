/**
 * Statements logged by log_statement, their times by log_duration or by
 * log_min_duration_statement (issue #26: the queries section pairs a statement line with the
 * duration line of its process). Two phases in one session:
 * 1. log_statement = all, log_duration = on: `statement: X` then `duration: N ms` alone, and for the
 *    extended protocol `duration:` alone for parse and bind, `execute <unnamed>: X` with its
 *    parameters, then `duration:` alone for the execute;
 * 2. the session sets log_duration = off and log_min_duration_statement = 50ms: fast statements
 *    leave only their `statement:` line (untimed); a slow one is followed by `duration: N ms`
 *    alone (its text was logged already: postgres.c's check_log_duration).
 *
 * Not in SCENARIOS: its fixtures live in test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 15,18 --scenarios statement-logging --out test/fixtures/log-report`).
 */
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { literal, Session } from './session.js';

const ROUNDS = 6;

export const statementLogging: Scenario = {
  name: 'statement-logging',
  description:
    `log_statement = all with log_duration: ${ROUNDS} rounds of a simple-protocol UPDATE with literals and an extended-protocol SELECT with a parameter; ` +
    'then the session sets log_duration = off and log_min_duration_statement = 50ms: fast statements stay untimed, two pg_sleep(0.06) are timed.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_statement: 'all', log_duration: true, lc_messages: 'C' }),
  sessionSettings: { log_duration: false, log_min_duration_statement: '50ms' },
  async run({ primary, log }) {
    const app = await Session.open(primary, 'app');
    try {
      await app.query('CREATE TABLE sl_items (id int PRIMARY KEY, qty int NOT NULL)');
      await app.query('INSERT INTO sl_items SELECT g, 0 FROM generate_series(1, 4) g');
      for (let round = 1; round <= ROUNDS; round++) {
        await app.query(`UPDATE sl_items SET qty = qty + ${round} WHERE id = ${1 + (round % 4)}`);
        await app.query('SELECT qty FROM sl_items WHERE id = $1', [1 + (round % 4)]);
      }
      await app.query('SET log_duration = off');
      await app.query("SET log_min_duration_statement = '50ms'");
      for (let round = 1; round <= 2; round++) {
        await app.query(`SELECT qty FROM sl_items WHERE id = ${round}`);
        await app.query('SELECT pg_sleep(0.06)');
      }
      await app.query('DROP TABLE sl_items');
      await log.waitFor(new RegExp(`\\[${app.pid}\\] [^\\n]*${literal('statement: DROP TABLE sl_items')}`));
    } finally {
      await app.close();
    }
  },
};
