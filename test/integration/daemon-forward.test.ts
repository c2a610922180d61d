/**
 * `pgvigil run` with PGVIGIL_FORWARD_POSTGRES_DSN, as an operator turns forwarding on: the built
 * binary watches a real PostgreSQL 18 and forwards what it reads from the server's log and what
 * it samples to a central database (a second database of the same server here); the central
 * database going away leaves /metrics and the store working, with the backlog on /metrics, and
 * the backlog drains when it returns.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrateCentral } from '../../src/central/migrate-central.js';
import { destroyAllServers, startPrimary } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-server.js';
import { testTempDir } from '../helpers/temp-dir.js';

afterAll(() => destroyAllServers());

describe('pgvigil run forwarding to a central PostgreSQL 18', () => {
  it('forwards live log events and downsampled series, and keeps going while the central database is away', async () => {
    const server = await startPrimary({ version: 18, name: 'forwarded', settings: { log_checkpoints: true } });
    await server.query('CREATE DATABASE fleet');
    const admin = new pg.Client({ connectionString: server.dsn('fleet') });
    admin.on('error', () => undefined);
    await admin.connect();
    await migrateCentral(admin, Date.now());
    const count = async (sql: string): Promise<number> => Number((await admin.query<{ n: string }>(sql)).rows[0]!.n);

    const port = await freePort();
    const config = join(testTempDir('daemon-forward'), 'pgvigil.yaml');
    // A short step so a downsampled series arrives within the test.
    writeFileSync(config, 'forward:\n  postgres:\n    step_ms: 1000\n    interval_ms: 200\n');
    const db = join(testTempDir('daemon-forward'), 'pgvigil.db');
    const child = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--config', config, '--name', 'default', '--listen', `127.0.0.1:${port}`, '--dsn', server.dsn(), '--log', server.logDir, '--db', db], {
      env: { PATH: process.env.PATH, PGVIGIL_FORWARD_POSTGRES_DSN: server.dsn('fleet') },
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (t: string) => { stderr += t; });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const metrics = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
    try {
      await waitUntil(() => /tailing log file/.test(stderr), 20_000, 'the tailer to open the log');
      await server.query('CHECKPOINT');
      await waitUntil(async () => (await count(`SELECT count(*) AS n FROM pgvigil.events WHERE kind = 'checkpoint'`)) >= 2, 90_000, 'the checkpoint events in the central database');
      await waitUntil(async () => (await count(`SELECT count(*) AS n FROM pgvigil.samples p JOIN pgvigil.series s ON s.local_id = p.series_local_id AND s.store_id = p.store_id WHERE s.name = 'pg_up'`)) > 0, 90_000, 'pg_up samples in the central database');
      expect(await count(`SELECT count(*) AS n FROM pgvigil.targets WHERE target = 'default'`)).toBe(1);

      // The central database refuses connections (the target server stays up, so pgvigil's own work goes on).
      await server.query(`ALTER DATABASE fleet WITH ALLOW_CONNECTIONS false`);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'fleet' AND application_name = 'pgvigil forward'`);
      await server.query('CHECKPOINT');
      await waitUntil(async () => /^pgvigil_forward_pending_rows\{stream="events"\} [1-9]/m.test(await metrics()), 30_000, 'a backlog of events on /metrics');
      const during = await metrics();
      expect(during).toMatch(/^pg_up\{target="default"\} 1$/m);
      expect(during).toMatch(/^pgvigil_forward_failures_total [1-9]/m);
      expect(during).toMatch(/^pgvigil_forward_lag_seconds [0-9.]+$/m);

      await server.query(`ALTER DATABASE fleet WITH ALLOW_CONNECTIONS true`);
      await waitUntil(async () => (await count(`SELECT count(*) AS n FROM pgvigil.events WHERE kind = 'checkpoint'`)) >= 4, 60_000, 'the backlog drained');
      await waitUntil(async () => /^pgvigil_forward_lag_seconds 0$/m.test(await metrics()), 30_000, 'the forwarder caught up');
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await admin.end().catch(() => undefined);
    }
  }, 360_000);
});
