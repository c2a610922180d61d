/**
 * Sessions and errors for the log report's `sessions` and `errors` sections (issue #26): sessions
 * of two users and applications in two databases that open, overlap and close; a wrong password
 * over TCP against a `host ... scram-sha-256` line (twice), a role no pg_hba.conf line admits, and
 * errors of four classes (unique violation twice with other values, syntax error, division by
 * zero twice, undefined table) beside a WARNING.
 *
 * Not in SCENARIOS: it is no incident of its own, and its fixtures live in test/fixtures/log-report
 * (`npm run fixtures:record -- --versions 15,18 --scenarios sessions-and-errors --out test/fixtures/log-report`).
 * PG 18+ logs with `log_connections = all`, so its `connection ready: setup total=...` lines are
 * in the log too.
 */
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { PgServer } from '../pg-harness.js';
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import type { LogWatcher } from './log-watcher.js';

const APP_PASSWORD = 'se-right-password';

// The password role over TCP with SCRAM; the superuser (the harness's own connections) and the
// report role with trust; se_intruder has no line at all.
const PG_HBA = [
  'local all all trust',
  'host all se_app 127.0.0.1/32 scram-sha-256',
  'host all postgres,se_report 127.0.0.1/32 trust',
  'host replication all 127.0.0.1/32 trust',
  '',
].join('\n');

interface Connection {
  pid: number;
  client: pg.Client;
}

interface Login {
  user: string;
  database: string;
  application: string;
  password?: string;
}

function clientFor(server: PgServer, login: Login): pg.Client {
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    user: login.user,
    database: login.database,
    application_name: login.application,
    password: login.password,
  });
  client.on('error', () => undefined);
  return client;
}

async function open(server: PgServer, login: Login): Promise<Connection> {
  const client = clientFor(server, login);
  await client.connect();
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  if (pid === undefined) throw new Error(`${login.application}: pg_backend_pid() returned no row`);
  return { pid, client };
}

/** A connection attempt the server must refuse with `sqlstate`. */
async function refused(server: PgServer, login: Login, sqlstate: string): Promise<void> {
  const client = clientFor(server, login);
  const code = await client.connect().then(() => 'none', (error: { code?: string }) => error.code ?? 'no code');
  await client.end().catch(() => undefined);
  if (code !== sqlstate) throw new Error(`connecting as ${login.user}: expected SQLSTATE ${sqlstate}, got ${code}`);
}

async function fails(connection: Connection, sql: string, sqlstate: string): Promise<void> {
  const code = await connection.client.query(sql).then(() => 'none', (error: { code?: string }) => error.code ?? 'no code');
  if (code !== sqlstate) throw new Error(`pid ${connection.pid}: ${sql}: expected SQLSTATE ${sqlstate}, got ${code}`);
}

/** Closes the connection and waits for its disconnection line, so the log holds the whole session. */
async function close(connection: Connection, log: LogWatcher): Promise<void> {
  await connection.client.end();
  await log.waitFor(new RegExp(`\\[${connection.pid}\\] [^\\n]*disconnection: session time: `));
}

/** Writes pg_hba.conf and waits until the postmaster has reloaded it. */
async function useHba(server: PgServer, log: LogWatcher, content: string): Promise<void> {
  const file = path.join(server.dataDir, 'pg_hba.conf');
  // Same owner and mode: the file exists, its contents are replaced in place.
  fs.writeFileSync(file, content);
  const reloads = (log.text().match(/received SIGHUP, reloading configuration files/g) ?? []).length;
  await server.query('SELECT pg_reload_conf()');
  await log.waitFor(new RegExp(`(?:received SIGHUP, reloading configuration files[\\s\\S]*){${reloads + 1}}`));
}

export const sessionsAndErrors: Scenario = {
  name: 'sessions-and-errors',
  description:
    'Roles se_app (SCRAM password over TCP, application se-orders, database se_shop) and se_report (trust, se-reports, postgres); ' +
    'sessions that overlap (up to three at once) and close; two wrong passwords for se_app and a connection of se_intruder that ' +
    'no pg_hba.conf line admits; a unique violation twice, a syntax error, a division by zero twice, an undefined table and a ' +
    'WARNING (COMMIT outside a transaction).',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: (version) => ({
    // PG 18+: log_connections is a list; `all` adds the connection ready: setup total=... line.
    log_connections: version >= 18 ? 'all' : true,
    log_disconnections: true,
    password_encryption: 'scram-sha-256',
  }),
  sessionSettings: {},
  async run({ primary, log }) {
    const original = fs.readFileSync(path.join(primary.dataDir, 'pg_hba.conf'), 'utf8');
    await primary.query(`CREATE ROLE se_app LOGIN PASSWORD '${APP_PASSWORD}'`);
    await primary.query('CREATE ROLE se_report LOGIN');
    await primary.query('CREATE DATABASE se_shop OWNER se_app');
    await useHba(primary, log, PG_HBA);
    try {
      const orders: Login = { user: 'se_app', database: 'se_shop', application: 'se-orders', password: APP_PASSWORD };
      const reports: Login = { user: 'se_report', database: 'postgres', application: 'se-reports' };
      const app = await open(primary, orders);
      await app.client.query('CREATE TABLE se_orders (id int PRIMARY KEY, total int NOT NULL)');
      await app.client.query('INSERT INTO se_orders VALUES (1, 10), (2, 20)');
      const report = await open(primary, reports);
      const shortLived = await open(primary, orders);
      await shortLived.client.query('SELECT count(*) FROM se_orders');
      await close(shortLived, log);

      await refused(primary, { ...orders, password: 'se-wrong-password' }, '28P01');
      await refused(primary, { ...orders, password: 'se-wrong-again' }, '28P01');
      await refused(primary, { user: 'se_intruder', database: 'se_shop', application: 'se-probe' }, '28000');

      await fails(app, 'INSERT INTO se_orders VALUES (1, 11)', '23505');
      await fails(app, 'INSERT INTO se_orders VALUES (2, 12)', '23505');
      await fails(app, 'SELEC id FROM se_orders', '42601');
      await fails(app, 'SELECT total / 0 FROM se_orders WHERE id = 1', '22012');
      await fails(app, 'SELECT total / (id - 2) FROM se_orders WHERE id = 2', '22012');
      await fails(report, 'SELECT * FROM se_missing WHERE id = 3', '42P01');
      await app.client.query('COMMIT');
      await close(report, log);
      await app.client.query('DROP TABLE se_orders');
      await close(app, log);
    } finally {
      await useHba(primary, log, original);
      await primary.query('DROP DATABASE se_shop');
      await primary.query('DROP ROLE se_app');
      await primary.query('DROP ROLE se_report');
    }
  },
};
