/**
 * What a new user meets first, against a real PostgreSQL 18: connecting with the keyword/value
 * string psql and pg_dump accept; each way the server can turn pgvigil's role away, answered with
 * the fix for that way (the server's own SQLSTATE and message, not a guess); and a server whose
 * log_filename is RHEL's `postgresql-%a.log`, not the default pgvigil would otherwise look for.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChecks } from '../../src/cli/check.js';
import type { CheckResult } from '../../src/cli/check-results.js';
import { loadConfig } from '../../src/config/load-config.js';
import { systemClock } from '../../src/domain/clock.js';
import { LogTailer } from '../../src/sources/log-tailer.js';
import { TargetSources } from '../../src/sources/target-sources.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

// Role by role, what pgvigil meets; `ghost` has trust, so the server can say it does not exist.
const PG_HBA = [
  'local all all trust',
  'host all postgres,ghost,nologin 127.0.0.1/32 trust',
  'host all with_password 127.0.0.1/32 scram-sha-256',
  '',
].join('\n');

describe('first use against PostgreSQL 18', () => {
  let server: PgServer;
  const dir = suiteTempDir('first-use');

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'first-use', settings: { log_filename: 'postgresql-%a.log' } });
    await server.query("CREATE ROLE with_password LOGIN PASSWORD 'right'");
    await server.query('CREATE ROLE unlisted LOGIN');
    await server.query('CREATE ROLE nologin');
    writeFileSync(path.join(server.dataDir, 'pg_hba.conf'), PG_HBA);
    await server.query('SELECT pg_reload_conf()');
  });
  afterAll(() => destroyAllServers());

  async function connectionCheck(dsn: string): Promise<CheckResult> {
    const config = loadConfig({ env: {}, flags: { name: 'default', dsn, db: path.join(dir, 'pgvigil.db'), listen: `127.0.0.1:${await freePort()}` } });
    const result = (await runChecks(config)).find((r) => r.aspect === 'default: connection');
    if (!result) throw new Error('no connection check');
    return result;
  }

  it('connects with a libpq keyword/value string', async () => {
    const result = await connectionCheck(`host=${server.host} port=${server.port} user=postgres dbname=postgres`);
    expect(result.state).toBe('ok');
    expect(result.message).toMatch(new RegExp(`^${server.host}:${server.port}/postgres: PostgreSQL 18\\.`));
  });

  const where = () => `host=${server.host} port=${server.port} dbname=postgres`;

  it('a role that does not exist: how to create it', async () => {
    const result = await connectionCheck(`${where()} user=ghost`);
    expect(result.message).toContain('role "ghost" does not exist');
    expect(result.hint).toBe('the role does not exist: create it as a superuser, CREATE ROLE ghost LOGIN; GRANT pg_monitor TO ghost; ' +
      '(or connect as an existing role: user= in the dsn, PGUSER).');
  });

  it('a role without LOGIN: how to allow it', async () => {
    const result = await connectionCheck(`${where()} user=nologin`);
    expect(result.hint).toBe('the role exists but may not log in: ALTER ROLE nologin LOGIN;');
  });

  it('a wrong password: where the password goes', async () => {
    const result = await connectionCheck(`${where()} user=with_password password=wrong`);
    expect(result.message).toContain('password authentication failed for user "with_password"');
    expect(result.hint).toMatch(/^the password for role with_password was refused: set it with password_file, PGPASSWORD, PGPASSFILE or the dsn\./);
  });

  it('takes the password from PGPASSFILE, as libpq does', async () => {
    const passfile = path.join(dir, 'pgpass');
    writeFileSync(passfile, `${server.host}:${server.port}:*:with_password:right\n`, { mode: 0o600 });
    const saved = process.env.PGPASSFILE;
    process.env.PGPASSFILE = passfile;
    try {
      expect((await connectionCheck(`${where()} user=with_password`)).state).toBe('ok');
    } finally {
      if (saved === undefined) delete process.env.PGPASSFILE;
      else process.env.PGPASSFILE = saved;
    }
  });

  it('no pg_hba.conf line for the role: the line to add', async () => {
    const result = await connectionCheck(`${where()} user=unlisted`);
    expect(result.message).toContain('no pg_hba.conf entry for host "127.0.0.1", user "unlisted", database "postgres"');
    expect(result.hint).toBe('pg_hba.conf has no line that lets role unlisted in from 127.0.0.1 to database postgres (or a line rejects it): ' +
      'add one such as "host postgres unlisted 127.0.0.1/32 scram-sha-256" above any reject line, then SELECT pg_reload_conf();');
  });

  it('without --log, tails the directory and log_filename the server reports, and stores what it logs', async () => {
    const { logger, messages } = recordingLogger();
    const config = loadConfig({ env: {}, flags: { dsn: server.dsn(), db: path.join(dir, 'tails.db') } });
    const db = openStore(config.dbPath);
    const writer = new StoreWriter(db, systemClock, logger);
    const sources = new TargetSources(config.targets[0]!, { config, db, writer, clock: systemClock, log: logger });
    try {
      await sources.start();
      expect(messages).toContainEqual(expect.objectContaining({ msg: `no log configured: reading the log directory the server reports, ${server.logDir}` }));
      expect(sources.tailer).not.toBeNull();
      expect(sources.logSource?.path).toBe(server.logDir);
      await server.query("DO $$ BEGIN RAISE WARNING 'pgvigil first-use marker'; END $$");
      const stored = db.prepare<[], { n: number }>("SELECT count(*) AS n FROM events WHERE message LIKE '%pgvigil first-use marker%'");
      await waitUntil(() => {
        writer.flush();
        return stored.get()?.n === 1;
      }, 20_000, 'the WARNING in the store');
      expect(sources.tailer!.stats().currentFile).toMatch(/\/postgresql-(Mon|Tue|Wed|Thu|Fri|Sat|Sun)\.log$/);
    } finally {
      await sources.stop();
      await writer.stop();
      db.close();
    }
  });

  it('warns, naming the files it saw and the pattern it used, when a directory holds files but none match', async () => {
    const { logger, messages } = recordingLogger();
    const tailer = new LogTailer({
      target: 'default', source: server.logDir, logFilename: null, format: 'stderr', writer: { enqueue: () => undefined, accepting: true },
      savedOffset: null, clock: systemClock, log: logger, watch: false, pollIntervalMs: 50,
    });
    await tailer.start();
    try {
      await waitUntil(() => messages.some((m) => m.level === WARN), 10_000, 'the warning');
    } finally {
      await tailer.stop();
    }
    const day = server.logFiles().map((f) => path.basename(f))[0]!;
    expect(day).toMatch(/^postgresql-[A-Z][a-z]{2}\.log$/);
    expect(messages.find((m) => m.level === WARN)?.msg).toBe(`log directory ${server.logDir} holds 1 file (${day}) but none named like ` +
      "postgresql-%Y-%m-%d_%H%M%S.log: set filename_pattern to the server's log_filename (pgvigil reads it from the server when it can connect); " +
      'waiting for a matching file');
  });
});

const WARN = 40;

function recordingLogger() {
  const messages: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void messages.push(JSON.parse(line) as { level: number; msg: string }) });
  return { logger, messages };
}
