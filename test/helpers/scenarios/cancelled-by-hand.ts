/**
 * Statements and sessions ended by someone, not by a timeout, for the log report's cancellations
 * by cause (src/report/log-report/locks.ts, issue #26): pg_cancel_backend() (57014, `canceling
 * statement due to user request`), pg_terminate_backend() (57P01, `terminating connection due to
 * administrator command`), and an autovacuum worker cancelled by a lock request that conflicts
 * with it (`canceling autovacuum task`).
 *
 * Not in SCENARIOS: recorded on request into test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 18 --scenarios cancelled-by-hand --out test/fixtures/log-report`).
 */
import type { PgServer } from '../pg-harness.js';
import { waitUntil } from '../pg-server.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { Session } from './session.js';

const WAIT_MS = 60_000;

/** Runs `sql` in a new session, waits until it is active, lets `end(pid)` end it; resolves with the session's error code. */
async function endedBy(server: PgServer, sql: string, end: (pid: number) => Promise<unknown>): Promise<string | undefined> {
  const victim = await Session.open(server, 'victim');
  try {
    const running = victim.query(sql).then(() => undefined, (error: { cause?: { code?: string } }) => error.cause?.code);
    await waitUntil(async () => (await server.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = $2', [victim.pid, 'active'])).length === 1, WAIT_MS, `pid ${victim.pid} running ${sql}`);
    await end(victim.pid);
    return await running;
  } finally {
    await victim.close();
  }
}

export const cancelledByHand: Scenario = {
  name: 'cancelled-by-hand',
  description:
    'pg_cancel_backend() on a session in pg_sleep (user request), pg_terminate_backend() on another (administrator command), ' +
    'and LOCK TABLE on a table an autovacuum worker is vacuuming slowly (cost delay), which cancels the autovacuum task.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_autovacuum_min_duration: 0, autovacuum_naptime: '1s', log_lock_waits: true }),
  sessionSettings: {},
  async run({ primary, log }) {
    const cancelled = await endedBy(primary, 'SELECT pg_sleep(60)', (pid) => primary.query('SELECT pg_cancel_backend($1)', [pid]));
    if (cancelled !== '57014') throw new Error(`pg_cancel_backend: expected SQLSTATE 57014, got ${cancelled}`);
    await log.waitFor(/canceling statement due to user request/);
    await endedBy(primary, 'SELECT pg_sleep(60)', (pid) => primary.query('SELECT pg_terminate_backend($1)', [pid]));
    await log.waitFor(/terminating connection due to administrator command/);

    await primary.query('DROP TABLE IF EXISTS cbh_slow');
    // A vacuum this slow is still running when the lock request comes.
    await primary.query('CREATE TABLE cbh_slow (id int, pad text) WITH (autovacuum_vacuum_cost_delay = 100, autovacuum_vacuum_cost_limit = 1)');
    await primary.query("INSERT INTO cbh_slow SELECT g, repeat('x', 200) FROM generate_series(1, 50000) g");
    await primary.query('DELETE FROM cbh_slow WHERE id % 2 = 0');
    await waitUntil(async () => (await primary.query("SELECT 1 FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND query LIKE '%cbh_slow%'")).length === 1, WAIT_MS, 'autovacuum of cbh_slow to start');
    const locker = await Session.open(primary, 'locker');
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE cbh_slow IN ACCESS EXCLUSIVE MODE');
      await log.waitFor(/canceling autovacuum task/, WAIT_MS);
      await locker.query('COMMIT');
    } finally {
      await locker.close();
    }
    await primary.query('DROP TABLE cbh_slow');
  },
};
