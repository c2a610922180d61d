/**
 * The real-PostgreSQL harness itself, per version: a primary and a streaming standby, replication
 * of a write, the test's settings applied, the log files handed to tests being the live ones, and
 * a crash provoked through kill() followed by recovery. One primary + standby per version.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrimary, startStandby, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { describeWithTool, type ToolName } from '../helpers/tools.js';

// 13, 14, 16, 17 and 18 ship with the devDependencies; 15 and 19 are Debian tools behind the gate.
const VERSIONS: Array<{ version: PgVersion; tool?: ToolName }> = [
  { version: 13 }, { version: 14 }, { version: 16 }, { version: 17 }, { version: 18 },
  { version: 15, tool: 'pg15' }, { version: 19, tool: 'pg19' },
];
const REPLICATION_WAIT_MS = 15_000;
// log_line_prefix '%m [%p] %q%u@%d ': "2026-01-01 00:00:00.000 UTC [123] postgres@postgres LOG:  ..."
const PREFIX = String.raw`^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC \[\d+\] `;

for (const { version, tool } of VERSIONS) {
  const title = `harness: PostgreSQL ${version} primary and streaming standby`;
  const suite = (fn: () => void): void => {
    if (tool) describeWithTool(tool, title, fn);
    else describe(title, fn);
  };

  suite(() => {
    let primary: PgServer;
    let standby: PgServer;

    beforeAll(async () => {
      primary = await startPrimary({ version, name: `harness-${version}`, settings: { log_statement: 'ddl' } });
      standby = await startStandby(primary, { name: `harness_standby_${version}` });
    });

    afterAll(async () => {
      await standby?.destroy();
      await primary?.destroy();
    });

    it('runs the asked version, the primary read-write and the standby in recovery', async () => {
      const [versionRow] = await primary.query<{ server_version_num: string }>('SHOW server_version_num');
      expect(Math.floor(Number(versionRow?.server_version_num) / 10_000)).toBe(version);
      expect(await primary.query('SELECT pg_is_in_recovery() AS in_recovery')).toEqual([{ in_recovery: false }]);
      expect(await standby.query('SELECT pg_is_in_recovery() AS in_recovery')).toEqual([{ in_recovery: true }]);
      const senders = await primary.query<{ application_name: string; state: string }>(
        'SELECT application_name, state FROM pg_stat_replication',
      );
      expect(senders).toEqual([{ application_name: `harness_standby_${version}`, state: 'streaming' }]);
      const slots = await primary.query('SELECT slot_type, active FROM pg_replication_slots');
      expect(slots).toEqual([{ slot_type: 'physical', active: true }]);
    });

    it('replicates a write on the primary to the standby', async () => {
      const token = randomUUID();
      await primary.query('CREATE TABLE harness_probe (token text)');
      await primary.query('INSERT INTO harness_probe VALUES ($1)', [token]);
      await waitUntil(
        async () => (await standby.query('SELECT 1 FROM harness_probe WHERE token = $1', [token])).length === 1,
        REPLICATION_WAIT_MS,
        `the row ${token} on the PG ${version} standby`,
      );
      await expect(standby.query('INSERT INTO harness_probe VALUES ($1)', [token])).rejects.toThrow(/read-only transaction/);
    });

    it('hands tests the live log files, written with the default prefix and the test settings', async () => {
      const token = randomUUID();
      await primary.query(`DO $$ BEGIN RAISE LOG 'pgvigil harness marker %', '${token}'; END $$`);
      const line = await primary.waitForLog(new RegExp(`pgvigil harness marker ${token}`));
      expect(line).toMatch(new RegExp(`${PREFIX}postgres@postgres LOG:  pgvigil harness marker ${token}$`));
      for (const file of primary.logFiles()) {
        expect(file.startsWith(`${primary.logDir}/`)).toBe(true);
        expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('644'); // log_file_mode: readable without root
      }

      // log_statement = 'ddl' came from the test's settings.
      await expect(primary.waitForLog(/statement: CREATE TABLE harness_probe/)).resolves.toMatch(/LOG: {2}statement: CREATE TABLE/);
      // The standby logs to its own directory. PG 14+: "read-only" (13 wrote "read only").
      await expect(standby.waitForLog(/database system is ready to accept read[- ]only connections/)).resolves.toMatch(new RegExp(PREFIX));
      expect(standby.logDir).not.toBe(primary.logDir);
    });

    it('kills a backend to provoke a crash, and the primary recovers', async () => {
      const [backend] = await primary.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE backend_type = $1 LIMIT 1', ['autovacuum launcher']);
      expect(backend).toBeDefined();
      await primary.kill('SIGKILL', backend?.pid);
      await primary.waitForLog(new RegExp(`\\(PID ${backend?.pid}\\) was terminated by signal 9`));
      await primary.waitForLog(/all server processes terminated; reinitializing/);
      await waitUntil(async () => (await primary.query('SELECT 1')).length === 1, REPLICATION_WAIT_MS, `PG ${version} to accept connections after the crash`);
      expect(await primary.query('SELECT count(*)::int AS n FROM harness_probe')).toEqual([{ n: 1 }]);
    });
  });
}

// The lifecycle calls other tests lean on, once (PG 18, which is always there), with csvlog.
describe('harness: PostgreSQL 18 lifecycle', () => {
  let server: PgServer;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'harness-lifecycle', settings: { log_destination: 'csvlog', log_checkpoints: false } });
  });

  afterAll(async () => {
    await server?.destroy();
  });

  it('writes csvlog files into logDir and rejects a wait that never matches with the log tail', async () => {
    await server.waitForLog(/"database system is ready to accept connections"/);
    expect(server.logFiles().some((file) => file.endsWith('.csv'))).toBe(true);
    await expect(server.waitForLog(/no server ever writes this/, 300)).rejects.toThrow(/within 300 ms[\s\S]*--- tail of/);
  });

  it('survives an immediate stop, a restart and a SIGKILLed postmaster', async () => {
    await server.stop('immediate');
    await expect(server.query('SELECT 1')).rejects.toThrow();
    await server.start();
    await server.restart();
    await server.kill('SIGKILL');
    await server.start();
    expect(await server.query('SELECT current_setting($1) AS value', ['log_destination'])).toEqual([{ value: 'csvlog' }]);
    await server.waitForLog(/database system was interrupted; last known up at/);
  });
});
