/**
 * transaction-open-too-long and temp-file-spills, live on a PostgreSQL 18 primary with
 * log_temp_files = 0, seen by the daemon's own machinery (log tailer, poll scheduler with every
 * collector as a pg_monitor role, store writer, rules engine writing alerts):
 *
 * - a `nightly-load` session updates a row, then runs a long statement in the same transaction:
 *   the alert names its pid, application, database, state and statement and the locks it holds;
 *   a pg_dump-named session with an open snapshot beside it is never named. Cancelling the
 *   statement and rolling back resolves it.
 * - a sort larger than its session's work_mem (64kB) writes temporary files: the info alert names the
 *   statement and the bytes; it resolves a window after the last file. Then the built CLI
 *   (`npx tsc -p tsconfig.build.json`) finds the same from the log the server wrote.
 *
 * Thresholds shortened to seconds and a MB; the rest at their defaults.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WAIT_MS = 30_000;
const MB = 1024 ** 2;
const SPILL = 'SELECT g FROM generate_series(1, 300000) g ORDER BY g DESC';

describe('long transactions and temp file spills on a live PostgreSQL 18', () => {
  let server: PgServer;
  let rig: LiveRules;
  const sessions: pg.Client[] = [];

  const connect = async (application: string): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: server.dsn('postgres'), application_name: application });
    client.on('error', () => undefined);
    await client.connect();
    sessions.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-long-xact-temp', settings: { log_temp_files: 0 } });
    await createMonitorRole(server);
    await server.query('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await server.query('INSERT INTO accounts VALUES (1, 100)');
    rig = await startLiveRules(server, {
      'transaction-open-too-long': { minOpenMs: 2_000 },
      'temp-file-spills': { minBytes: MB, windowMs: 5_000 },
    });
  });

  afterAll(async () => {
    await Promise.all(sessions.map((c) => c.end().catch(() => undefined)));
    await rig?.stop();
    await destroyAllServers();
  });

  it('names the session holding a transaction open, its statement and its locks, never pg_dump; resolves when it ends', async () => {
    const dump = await connect('pg_dump');
    await dump.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await dump.query('SELECT count(*) FROM accounts');
    const load = await connect('nightly-load');
    const [{ pid, user }] = (await load.query<{ pid: number; user: string }>('SELECT pg_backend_pid() AS pid, current_user AS user')).rows as [{ pid: number; user: string }];
    await load.query('BEGIN');
    await load.query('UPDATE accounts SET balance = balance - 1 WHERE id = 1');
    const running = load.query('SELECT pg_sleep(60)').catch((e: Error) => e);

    const alerts = () => rig.alerts('transaction-open-too-long');
    await waitUntil(() => alerts().some((a) => a.summary.includes('(active, running')), WAIT_MS, 'the transaction-open-too-long alert');
    expect(alerts()).toHaveLength(1);
    const [fired] = alerts();
    expect(fired!.severity).toBe('warning');
    expect(fired!.summary).toMatch(new RegExp(`^session pid ${pid} of user ${user} \\(application nightly-load\\) in database postgres on primary ` +
      'has had a transaction open for \\d+ s \\(active, running: SELECT pg_sleep\\(\\?\\)\\): it keeps [2-9] relation locks \\(the strongest RowExclusiveLock\\) ' +
      'until it ends, so DDL on those tables waits and queues everyone behind it$'));
    expect(JSON.parse(fired!.evidence).facts).toMatchObject({ pid, application_name: 'nightly-load', strongest_lock: 'RowExclusiveLock' });

    await server.query(`SELECT pg_cancel_backend(${pid})`);
    await running;
    await load.query('ROLLBACK');
    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the transaction ended');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
    expect(alerts().map((a) => JSON.parse(a.labels).application_name)).toEqual(['nightly-load']);
    await dump.query('COMMIT');
  });

  it('says which statement spilled to temporary files and how much; resolves a window after the last file', async () => {
    const client = await connect('reports');
    await client.query("SET work_mem = '64kB'");
    await client.query(SPILL);
    const alerts = () => rig.alerts('temp-file-spills');
    await waitUntil(() => alerts().length > 0, WAIT_MS, 'the temp-file-spills alert');
    const [fired] = alerts();
    expect(fired!.severity).toBe('info');
    expect(fired!.summary).toMatch(new RegExp('^\\d+ temporary files?, [\\d.]+ MB written since \\d\\d:\\d\\d:\\d\\d UTC \\(largest [\\d.]+ MB\\) by ' +
      'SELECT g FROM generate_series\\(\\?, \\?\\) g ORDER BY g DESC in postgres on primary: its sorts or hashes outgrow work_mem'));
    const evidence = JSON.parse(fired!.evidence);
    expect(evidence.facts.total_bytes).toBeGreaterThanOrEqual(MB);
    const files = rig.db.prepare("SELECT id FROM events WHERE kind = 'temp_file' ORDER BY id").pluck().all();
    expect(evidence.eventIds).toEqual(files);

    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve a window after the last file');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });

  it('pgvigil analyze --rules finds the spill from the log the server wrote, with a config\'s threshold', () => {
    const logs = fs.readdirSync(server.logDir).filter((f) => /^postgresql-.*\.log$/.test(f)).sort().map((f) => path.join(server.logDir, f));
    expect(logs.length).toBeGreaterThan(0);
    const dir = testTempDir('analyze-temp-files');
    const config = path.join(dir, 'pgvigil.yaml');
    fs.writeFileSync(config, `rules:\n  thresholds:\n    temp-file-spills: { min_bytes: ${MB} }\n`);
    const result = spawnSync(process.execPath, ['bin/pgvigil.js', 'analyze', '--rules', '--json', '-c', config, ...logs], {
      cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const alerts = JSON.parse(result.stdout).alerts.filter((a: { rule: string }) => a.rule === 'temp-file-spills');
    expect(alerts.map((a: { summary: string }) => a.summary)).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ basis: 'log', severity: 'info' });
    expect(alerts[0].summary).toMatch(/ by SELECT g FROM generate_series\(\?, \?\) g ORDER BY g DESC in postgres on \S+: /);
    expect(alerts[0].evidence.events.length).toBeGreaterThan(0);
  });
});
