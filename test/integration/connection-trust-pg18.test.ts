/**
 * What pgvigil's connections trust, against a real PostgreSQL 18 that asks for SCRAM over TCP:
 *
 * - the password of password_file, never the dsn's lack of one: node-postgres let a dsn without a
 *   password replace it with '', so every target and forwarder configured with password_file
 *   failed authentication (the other tests connect with trust). The poller, its log-settings
 *   lookup, `pgvigil check` and the forwarder each connect with it here.
 * - pg_catalog, never a database's search_path: a database owned by an unprivileged role shadows
 *   every pg_catalog function, operator and relation in a schema it puts first on the database's
 *   search_path (and in public), each shadow recording its calls. A full poll cycle of every
 *   collector, as pg_monitor, calls none of them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateCentral } from '../../src/central/migrate-central.js';
import { runChecks } from '../../src/cli/check.js';
import { createCollectors } from '../../src/collectors/index.js';
import { loadConfig, type Config } from '../../src/config/load-config.js';
import { systemClock } from '../../src/domain/clock.js';
import type { Sample } from '../../src/domain/index.js';
import { buildForwarder } from '../../src/forward/build-forwarder.js';
import { silentLogger } from '../../src/lib/logger.js';
import { clientConfigFor } from '../../src/lib/pg-connection.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import { readServerLogSettings } from '../../src/sources/server-log-settings.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { documentedGrants } from '../helpers/fleet-grants.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

// The harness's superuser keeps trust (it sets the test up); every other role needs its password.
const PG_HBA = [
  'host all postgres 127.0.0.1/32 trust',
  'host all all 127.0.0.1/32 scram-sha-256',
  '',
].join('\n');

const MONITOR_PASSWORD = 'monitor-Passw0rd';
const FORWARD_PASSWORD = 'forward-Passw0rd';
const STRANGERS_DB = 'owned by a stranger';

/**
 * Run as the database's owner: in `schema`, a shadow of every pg_catalog function, operator and
 * relation that SQL can declare (not aggregates, nor functions of internal or cstring). Each
 * records its name in evil.calls, then does what the original does, so a poller that uses them
 * goes on working and keeps using them.
 */
function plantShadows(schema: string): string {
  return `
DO $plant$
DECLARE
  f record;
BEGIN
  FOR f IN
    SELECT p.proname, pg_get_function_arguments(p.oid) AS args, pg_get_function_result(p.oid) AS result,
           (SELECT string_agg(CASE WHEN p.provariadic <> 0 AND i = p.pronargs THEN 'VARIADIC $' ELSE '$' END || i, ', ' ORDER BY i)
            FROM generate_series(1, p.pronargs) i) AS call
    FROM pg_proc p WHERE p.pronamespace = 'pg_catalog'::regnamespace AND p.prokind = 'f'
  LOOP
    BEGIN
      EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql AS %L', '${schema}', f.proname, f.args, f.result,
        format('SELECT evil.called(%L); SELECT * FROM pg_catalog.%I(%s)', f.proname, f.proname, coalesce(f.call, '')));
    EXCEPTION WHEN others THEN
      NULL; -- a signature a SQL function cannot have
    END;
  END LOOP;
  FOR f IN
    SELECT o.oid, o.oprname, nullif(o.oprleft, 0)::regtype AS l, o.oprright::regtype AS r, o.oprresult::regtype AS result, p.proname
    FROM pg_operator o JOIN pg_proc p ON p.oid = o.oprcode
    WHERE o.oprnamespace = 'pg_catalog'::regnamespace
  LOOP
    BEGIN
      EXECUTE format('CREATE FUNCTION %I.%I(%s) RETURNS %s LANGUAGE sql AS %L', '${schema}', 'op' || f.oid,
        concat_ws(', ', f.l, f.r), f.result,
        format('SELECT evil.called(%L); SELECT pg_catalog.%I(%s)', 'operator ' || f.oprname, f.proname, CASE WHEN f.l IS NULL THEN '$1' ELSE '$1, $2' END));
      EXECUTE format('CREATE OPERATOR %I.%s (%s RIGHTARG = %s, FUNCTION = %I.%I)', '${schema}', f.oprname,
        CASE WHEN f.l IS NULL THEN '' ELSE format('LEFTARG = %s,', f.l) END, f.r, '${schema}', 'op' || f.oid);
    EXCEPTION WHEN others THEN
      NULL; -- an operator on a pseudo-type
    END;
  END LOOP;
  FOR f IN SELECT c.relname FROM pg_class c WHERE c.relnamespace = 'pg_catalog'::regnamespace AND c.relkind IN ('r', 'v') LOOP
    BEGIN
      EXECUTE format('CREATE VIEW %I.%I AS SELECT * FROM pg_catalog.%I WHERE evil.called(%L)', '${schema}', f.relname, f.relname, f.relname);
    EXCEPTION WHEN others THEN
      NULL; -- pg_statistic: a column of a pseudo-type
    END;
  END LOOP;
  EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO PUBLIC', '${schema}');
END
$plant$`;
}

describe('connections that trust the password file and pg_catalog, on PostgreSQL 18', () => {
  const dir = suiteTempDir('connection-trust');
  let server: PgServer;

  function secretFile(name: string, value: string): string {
    const file = path.join(dir, name);
    writeFileSync(file, `${value}\n`, { mode: 0o600 });
    return file;
  }

  async function configWith(monitorPassword: string): Promise<Config> {
    const file = path.join(dir, 'pgvigil.yaml');
    writeFileSync(file, [
      `db: ${path.join(dir, 'pgvigil.db')}`,
      `listen: 127.0.0.1:${await freePort()}`,
      'targets:',
      '  - name: db1',
      // No password in either dsn: node-postgres read that as password ''.
      `    dsn: postgresql://monitor@127.0.0.1:${server.port}/postgres`,
      `    password_file: ${secretFile('monitor-password', monitorPassword)}`,
      'forward:',
      '  postgres:',
      `    dsn: postgresql://pgvigil_forward@127.0.0.1:${server.port}/central`,
      `    password_file: ${secretFile('forward-password', FORWARD_PASSWORD)}`,
      '',
    ].join('\n'));
    return loadConfig({ file, env: {} });
  }

  /** Every collector once, in every database, as the daemon's poller connects. */
  async function pollCycle(config: Config): Promise<Sample[]> {
    const samples: Sample[] = [];
    const target = config.targets[0]!;
    const poller = new PollScheduler({
      target: target.name, connection: clientConfigFor(target), collectors: createCollectors(),
      writer: { enqueue: (batch) => samples.push(...batch.samples) }, clock: systemClock, logger: silentLogger(),
    });
    await poller.start();
    try {
      expect(poller.status, 'the poller connected').toMatchObject({ connected: true });
      await poller.runOnce();
    } finally {
      await poller.stop();
    }
    return samples;
  }

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'connection-trust', settings: { password_encryption: 'scram-sha-256' } });
    await server.query(`CREATE ROLE monitor LOGIN PASSWORD '${MONITOR_PASSWORD}'; GRANT pg_monitor TO monitor`);
    await server.query('CREATE DATABASE central');
    const admin = new pg.Client({ connectionString: server.dsn('central') });
    await admin.connect();
    try {
      await migrateCentral(admin, Date.now());
      await admin.query(documentedGrants());
      await admin.query(`ALTER ROLE pgvigil_forward PASSWORD '${FORWARD_PASSWORD}'`);
    } finally {
      await admin.end();
    }

    await server.query('CREATE ROLE stranger LOGIN');
    await server.query(`CREATE DATABASE "${STRANGERS_DB}" OWNER stranger`);
    await server.query(`SET ROLE stranger;
      CREATE SCHEMA evil;
      CREATE TABLE evil.calls (name text);
      GRANT USAGE ON SCHEMA evil TO PUBLIC;
      GRANT INSERT ON evil.calls TO PUBLIC;
      CREATE FUNCTION evil.called(name text) RETURNS boolean LANGUAGE sql AS $$ INSERT INTO evil.calls VALUES (name); SELECT true $$;`, [], STRANGERS_DB);
    await server.query(`SET ROLE stranger; ${plantShadows('evil')}`, [], STRANGERS_DB);
    await server.query(`SET ROLE stranger; ${plantShadows('public')}`, [], STRANGERS_DB);
    await server.query(`SET ROLE stranger; ALTER DATABASE "${STRANGERS_DB}" SET search_path = evil, public, pg_catalog`, [], STRANGERS_DB);

    writeFileSync(path.join(server.dataDir, 'pg_hba.conf'), PG_HBA);
    await server.query('SELECT pg_reload_conf()');
  });
  afterAll(() => destroyAllServers());

  it('the shadows work: a session with the database\'s own search_path calls them', async () => {
    const client = new pg.Client({ host: server.host, port: server.port, user: 'monitor', password: MONITOR_PASSWORD, database: STRANGERS_DB });
    await client.connect();
    try {
      await client.query('SELECT count(*) FROM pg_class WHERE relkind = $1', ['r']);
    } finally {
      await client.end();
    }
    const calls = await server.query<{ name: string }>('SELECT name FROM evil.calls', [], STRANGERS_DB);
    expect(calls.map((c) => c.name)).toEqual(expect.arrayContaining(['pg_class', 'operator =']));
    await server.query('TRUNCATE evil.calls', [], STRANGERS_DB);
  });

  it('a full poll cycle, into the stranger\'s database too, calls none of the shadows', async () => {
    const samples = await pollCycle(await configWith(MONITOR_PASSWORD));
    // The poller was there: the stranger's own table is among the polled ones.
    expect(samples.some((s) => s.name.startsWith('pg_stat_user_tables_') && s.labels.datname === STRANGERS_DB && s.labels.relname === 'calls')).toBe(true);
    expect(await server.query('SELECT name, count(*)::int AS calls FROM evil.calls GROUP BY name ORDER BY name', [], STRANGERS_DB)).toEqual([]);
  });

  it('the log-settings lookup and `pgvigil check` connect with password_file', async () => {
    const config = await configWith(MONITOR_PASSWORD);
    expect((await readServerLogSettings(config.targets[0]!)).log_line_prefix).toBe('%m [%p] %q%u@%d ');
    const results = await runChecks(config);
    expect(results.find((r) => r.aspect === 'db1: connection')).toMatchObject({ state: 'ok' });
    expect(results.find((r) => r.aspect === 'db1: privileges')).toMatchObject({ state: 'ok' });
  });

  it('the server does ask: a wrong password_file is refused', async () => {
    const results = await runChecks(await configWith('not-the-password'));
    expect(results.find((r) => r.aspect === 'db1: connection')).toMatchObject({ state: 'fail', message: expect.stringContaining('password authentication failed for user "monitor"') });
  });

  it('the forwarder connects with forward.postgres.password_file', async () => {
    const config = await configWith(MONITOR_PASSWORD);
    const db = openStore(config.dbPath);
    const writer = new StoreWriter(db, systemClock, silentLogger());
    try {
      writer.enqueue({ events: [{
        kind: 'generic', target: 'db1', tsMs: Date.now(), pid: 1, database: null, user: null, level: 'LOG', sqlstate: null,
        message: 'forwarded with the password file', details: { classified: false } as never, source: { file: 'postgresql.log', offset: 0, line: null },
      }] });
      writer.flush();
      const forwarder = buildForwarder(config, db, systemClock, silentLogger())!;
      await forwarder.start();
      try {
        await waitUntil(async () => (await server.query('SELECT 1 FROM pgvigil.events', [], 'central')).length > 0, 20_000, 'the event in the central store');
      } finally {
        await forwarder.stop();
      }
      expect(forwarder.stats.failures).toBe(0);
    } finally {
      await writer.stop();
      db.close();
    }
    expect(await server.query('SELECT message FROM pgvigil.events', [], 'central')).toEqual([{ message: 'forwarded with the password file' }]);
  });
});
