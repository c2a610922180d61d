/**
 * The log report's workload (issue #26): a small day of an application, logged with everything a
 * pgBadger report reads (log_min_duration_statement = 0, connections and disconnections,
 * checkpoints, temp files, lock waits), so that pgBadger and `pgvigil analyze` can be compared on
 * the same bytes (test/integration/pgbadger-side-by-side.test.ts).
 *
 * A handful of statement shapes with varying literals, in the simple protocol and the extended one
 * (unnamed and named prepared statements, parameters logged as DETAIL), from sessions of two users
 * and three applications that open and close (two at a time), errors of several classes
 * (22, 23, 42, 57, and refused connections: 3D, 28), two checkpoints, sorts spilling to temporary
 * files and one lock wait.
 *
 * Not in SCENARIOS: it is no incident of its own, and its fixtures live in test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 15,18 --scenarios log-report-workload --out test/fixtures/log-report`).
 * Every file stays under 200 KB: the counts below are what fits.
 */
import pg from 'pg';
import type { PgServer } from '../pg-harness.js';
import { seededRandom } from '../seeded-random.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { literal } from './session.js';

const ACCOUNTS = 500;
/** Sessions of the web application, run two at a time; each runs STATEMENTS_PER_SESSION. */
const WEB_SESSIONS = 10;
const STATEMENTS_PER_SESSION = 14;

interface Client {
  pid: number;
  run(sql: string, params?: unknown[], name?: string): Promise<void>;
  /** Runs a statement that must fail with `sqlstate`. */
  fail(sql: string, sqlstate: string): Promise<void>;
  close(): Promise<void>;
}

async function connect(server: PgServer, application: string, user = 'postgres'): Promise<Client> {
  const url = new URL(server.dsn());
  const client = new pg.Client({ host: url.hostname, port: Number(url.port), database: 'postgres', user, application_name: application });
  client.on('error', () => undefined);
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  if (pid === undefined) throw new Error(`${application}: pg_backend_pid() returned no row`);
  const context = (sql: string): string => `${application} (pid ${pid}, user ${user}): ${sql}`;
  return {
    pid,
    async run(sql, params, name) {
      try {
        await client.query({ text: sql, values: params, name });
      } catch (error) {
        throw new Error(`${context(sql)}: ${(error as Error).message}`, { cause: error });
      }
    },
    async fail(sql, sqlstate) {
      const code = await client.query(sql).then(() => 'none', (error: { code?: string }) => error.code ?? 'no code');
      if (code !== sqlstate) throw new Error(`${context(sql)}: expected SQLSTATE ${sqlstate}, got ${code}`);
    },
    close: () => client.end().catch(() => undefined),
  };
}

/** One statement of a web session: the shapes a report groups, literals and parameters drawn from `random`. */
async function webStatement(client: Client, random: () => number): Promise<void> {
  const id = 1 + Math.floor(random() * ACCOUNTS);
  const amount = 1 + Math.floor(random() * 100);
  const pick = random();
  if (pick < 0.3) return client.run('SELECT balance FROM rw_accounts WHERE id = $1', [id], 'balance_by_id');
  if (pick < 0.45) return client.run('UPDATE rw_accounts SET balance = balance + $1 WHERE id = $2', [amount, id]);
  if (pick < 0.65) return client.run(`INSERT INTO rw_history (account_id, delta) VALUES (${id}, ${amount})`);
  if (pick < 0.8) return client.run(`SELECT count(*) FROM rw_accounts WHERE balance > ${amount * 10}`);
  const ids = Array.from({ length: 1 + Math.floor(random() * 5) }, (_, index) => id + index);
  return client.run(`SELECT id, balance FROM rw_accounts WHERE id IN (${ids.join(', ')})`);
}

async function webSession(server: PgServer, index: number): Promise<void> {
  const random = seededRandom(26_000 + index);
  const client = await connect(server, 'rw-web', index % 2 === 0 ? 'postgres' : 'rw_app');
  try {
    for (let n = 0; n < STATEMENTS_PER_SESSION; n++) await webStatement(client, random);
  } finally {
    await client.close();
  }
}

/** Errors of several classes, each with its statement in the log. */
async function errors(server: PgServer): Promise<void> {
  const client = await connect(server, 'rw-web', 'rw_app');
  try {
    await client.fail('SELECT balance / 0 FROM rw_accounts WHERE id = 1', '22012');
    await client.fail('SELECT balance / 0 FROM rw_accounts WHERE id = 2', '22012');
    await client.fail('INSERT INTO rw_accounts (id, balance) VALUES (1, 0)', '23505');
    await client.fail('SELECT * FROM rw_missing WHERE id = 3', '42P01');
    await client.fail('SELECT nope FROM rw_accounts', '42703');
    await client.run("SET statement_timeout = '100ms'");
    await client.fail('SELECT pg_sleep(2)', '57014');
  } finally {
    await client.close();
  }
  // Refused before a session exists, after the connection was received.
  await refusedConnection(server, server.dsn('rw_no_such_db'), '3D000');
  const nobody = new URL(server.dsn());
  nobody.username = 'rw_nobody';
  await refusedConnection(server, nobody.toString(), '28000');
}

async function refusedConnection(server: PgServer, connectionString: string, sqlstate: string): Promise<void> {
  const client = new pg.Client({ connectionString, application_name: 'rw-web' });
  client.on('error', () => undefined);
  const code = await client.connect().then(() => 'none', (error: { code?: string }) => error.code ?? 'no code');
  await client.end().catch(() => undefined);
  if (code !== sqlstate) throw new Error(`PG ${server.version}: connecting with ${connectionString}: expected SQLSTATE ${sqlstate}, got ${code}`);
}

/** Sorts over work_mem: one temporary file each, of growing sizes. */
async function reports(server: PgServer): Promise<void> {
  const client = await connect(server, 'rw-reports');
  try {
    await client.run("SET work_mem = '64kB'");
    await client.run('SET max_parallel_workers_per_gather = 0');
    for (const rows of [20_000, 30_000, 40_000]) {
      await client.run(`SELECT count(*) FROM (SELECT g FROM generate_series(1, ${rows}) g ORDER BY md5(g::text)) sorted`);
    }
  } finally {
    await client.close();
  }
}

/** A batch that holds a row while a web session waits for it past deadlock_timeout. */
async function lockWait(server: PgServer, log: { waitFor(pattern: RegExp): Promise<unknown> }): Promise<void> {
  const [holder, waiter] = [await connect(server, 'rw-batch'), await connect(server, 'rw-web', 'rw_app')];
  try {
    await holder.run('BEGIN');
    await holder.run('UPDATE rw_accounts SET balance = 0 WHERE id = 7');
    const waiting = waiter.run('UPDATE rw_accounts SET balance = balance + 1 WHERE id = 7');
    await log.waitFor(new RegExp(`\\[${waiter.pid}\\] [^\\n]*LOG:  process ${waiter.pid} still waiting for ShareLock`));
    await holder.run('COMMIT');
    await waiting;
    await log.waitFor(new RegExp(`\\[${waiter.pid}\\] [^\\n]*LOG:  process ${waiter.pid} acquired ShareLock`));
  } finally {
    await Promise.all([holder.close(), waiter.close()]);
  }
}

export const logReportWorkload: Scenario = {
  name: 'log-report-workload',
  description:
    `Set-up (a role, two tables, ${ACCOUNTS} accounts), a checkpoint, ${WEB_SESSIONS} web sessions (two at a time, users postgres and rw_app) ` +
    `of ${STATEMENTS_PER_SESSION} statements each in five shapes (named and unnamed extended protocol, simple protocol with varying literals ` +
    'and IN lists), errors of classes 22, 23, 42 and 57, connections to a missing database (3D) and as a missing role (28), three sorts spilling to temporary ' +
    'files (work_mem 64kB), a lock wait past deadlock_timeout, a second checkpoint.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({
    log_min_duration_statement: 0,
    log_connections: true,
    log_disconnections: true,
    log_checkpoints: true,
    log_temp_files: 0,
    log_lock_waits: true,
    lc_messages: 'C',
  }),
  sessionSettings: { work_mem: '64kB', max_parallel_workers_per_gather: 0, statement_timeout: '100ms' },
  async run({ primary, log }) {
    const setup = await connect(primary, 'rw-setup');
    try {
      await setup.run('CREATE ROLE rw_app LOGIN');
      await setup.run('CREATE TABLE rw_accounts (id int PRIMARY KEY, balance int NOT NULL)');
      await setup.run('CREATE TABLE rw_history (account_id int NOT NULL, delta int NOT NULL, at timestamptz NOT NULL DEFAULT now())');
      await setup.run(`INSERT INTO rw_accounts SELECT g, 0 FROM generate_series(1, ${ACCOUNTS}) g`);
      await setup.run('GRANT SELECT, INSERT, UPDATE ON rw_accounts, rw_history TO rw_app');
      await setup.run('CHECKPOINT');
    } finally {
      await setup.close();
    }
    for (let index = 0; index < WEB_SESSIONS; index += 2) await Promise.all([webSession(primary, index), webSession(primary, index + 1)]);
    await errors(primary);
    await reports(primary);
    await lockWait(primary, log);
    const teardown = await connect(primary, 'rw-setup');
    try {
      await teardown.run('CHECKPOINT');
      await log.waitFor(/checkpoint complete:[^\n]*\n(?:[^\n]*\n)*?[^\n]*checkpoint complete:/);
      await teardown.run('DROP TABLE rw_accounts, rw_history');
      await teardown.run('DROP ROLE rw_app');
      await log.waitFor(new RegExp(`\\[${teardown.pid}\\] [^\\n]*${literal('statement: DROP ROLE rw_app')}`));
    } finally {
      await teardown.close();
    }
  },
};
