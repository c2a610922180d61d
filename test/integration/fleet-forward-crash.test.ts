/**
 * Two sidecar stores, filled by the real pipeline (`pgvigil analyze --rules --db` over logs
 * recorded from real PostgreSQL servers), forwarded into one central PostgreSQL 18 by the built
 * CLI (`pgvigil central forward`, the daemon's queue and writer): one forwarder is SIGKILLed
 * mid-run and run again, the central database is restarted (immediate stop) under the other.
 * At the end every event, alert and alert transition of both stores is in the central database
 * exactly once, compared row by row, and every minute of their log reports once, whole; the
 * fleet report (`pgvigil report --store postgres://`) names each target's alerts. The forwarders and the report connect as the roles docs/fleet.md
 * creates, with exactly its GRANTs: the reader cannot write.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetTargetSummary } from '../../src/central/central-report.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { centralDsnAs, centralEventCount, centralQuery, expectReportMinutesInCentral, expectStoreInCentral, prepareCentral, readStore, storeIdentity } from '../helpers/fleet-central.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-processes.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const log = (scenario: string) => path.join(ROOT, 'test/fixtures/logs', `pg18-stderr-${scenario}`, `${scenario}.log`);

/** A log of a server whose lc_messages is German, read through the PostgreSQL 15 catalog. */
const GERMAN_LOG = path.join(ROOT, 'test/fixtures/logs-lang/pg15-de-deadlock/deadlock.log');

const STORES = {
  east: [log('backend-killed-crash-restart'), log('standby-feedback-holds-vacuum'), log('autovacuum-4-indexes')],
  west: [log('logical-slot-holds-catalogs'), log('deadlock'), GERMAN_LOG, log('server-killed-crash-recovery')],
} as const;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

function forwardChild(store: string, dsn: string): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/pgvigil.js'), 'central', 'forward', '--db', store, '--dsn', dsn, '--batch-rows', '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<Exit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
  return { child, exited };
}

describe('two stores forwarded to one central PostgreSQL 18 through a SIGKILL and a central restart', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-fleet-'));
  const storeFile = (name: string) => path.join(dir, `${name}.db`);
  let central: PgServer;
  const as = (role: 'pgvigil_forward' | 'pgvigil_reader') => centralDsnAs(central, role);
  const centralEvents = (target: string) => centralEventCount(central, target);

  beforeAll(async () => {
    for (const [name, files] of Object.entries(STORES)) {
      const { code, stderr } = await analyzeCaptured([...files], { rules: true, db: storeFile(name), target: name, json: true });
      expect(stderr).toBe(files.some((f) => f === GERMAN_LOG) ? `pgvigil analyze: ${GERMAN_LOG}: read in language de (PostgreSQL message catalogs)\n` : '');
      expect(code).toBe(0);
    }
    central = await startPrimary({ version: 18, name: 'central' });
    await prepareCentral(central);
  }, 120_000);

  afterAll(async () => {
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('east: a forwarder killed with SIGKILL mid-run, run again, leaves every row once', async () => {
    const total = localCount(storeFile('east'), 'events');
    await slowCentral(central);
    const first = forwardChild(storeFile('east'), as('pgvigil_forward'));
    // Killed once some batches are in and many are still to go.
    await waitUntil(async () => (await centralEvents('east')) > 0, 30_000, 'the first east events in the central database');
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    await fastCentral(central);
    expect(await centralEvents('east')).toBeLessThan(total);
    const second = forwardChild(storeFile('east'), as('pgvigil_forward'));
    expect(await second.exited).toMatchObject({ code: 0, stderr: '' });
    await expectStoreInCentral(central, storeFile('east'));
    await expectReportMinutesInCentral(central, storeFile('east'));
  }, 120_000);

  it('west: the central database restarted under a running forwarder, which retries and finishes', async () => {
    await slowCentral(central);
    const run = forwardChild(storeFile('west'), as('pgvigil_forward'));
    await waitUntil(async () => (await centralEvents('west')) > 0, 30_000, 'the first west events in the central database');
    await central.stop('immediate');
    await central.start();
    await fastCentral(central);
    const exit = await run.exited;
    expect(exit).toMatchObject({ code: 0 });
    expect(exit.stderr).toMatch(/batch failed .*; retry 1 of 19/);
    await expectStoreInCentral(central, storeFile('west'));
    await expectReportMinutesInCentral(central, storeFile('west'));
  }, 120_000);

  it('forwards the language of a translated log with each of its events', async () => {
    const local = readStore(storeFile('west'), (db) => db.prepare('SELECT language, count(*) AS n FROM events GROUP BY 1 ORDER BY 1').all());
    expect(local).toEqual([{ language: null, n: expect.any(Number) }, { language: 'de', n: expect.any(Number) }]);
    expect(await centralQuery(central, `SELECT language, count(*)::int AS n FROM pgvigil.events WHERE target = 'west' GROUP BY 1 ORDER BY 1 NULLS FIRST`)).toEqual(local);
  });

  it('keeps the two stores apart: each target has its own store identity and both alerts', async () => {
    const stores = await centralQuery<{ target: string; store_id: string }>(central, 'SELECT target, store_id::text FROM pgvigil.targets ORDER BY target');
    expect(stores.map((s) => s.target)).toEqual(['east', 'west']);
    expect(stores.map((s) => s.store_id.replaceAll('-', ''))).toEqual([storeIdentity(storeFile('east')), storeIdentity(storeFile('west'))]);
    const rules = await centralQuery<{ target: string; rule_id: string }>(central, 'SELECT DISTINCT target, rule_id FROM pgvigil.alerts ORDER BY 1, 2');
    expect(rules).toEqual([
      { target: 'east', rule_id: 'server-crashed' },
      // West's two deadlock logs (English and German) each raise the info rule deadlocks.
      { target: 'west', rule_id: 'deadlocks' },
      { target: 'west', rule_id: 'server-crashed' },
    ]);
  });

  it('the fleet report, read as the read-only role, summarises each target and names its alerts', async () => {
    const report = spawnSync(process.execPath, [path.join(ROOT, 'bin/pgvigil.js'), 'report', '--store', as('pgvigil_reader'), '--from', '2000-01-01T00:00:00Z', '--json'], { encoding: 'utf8' });
    expect(report.stderr).toBe('');
    expect(report.status).toBe(0);
    const parsed = JSON.parse(report.stdout) as { fleet_summary: FleetTargetSummary[]; alerts: Array<{ rule: string; target: string; evidence: { event_ids: number[] } }>; timeline: unknown[] };
    const east = parsed.fleet_summary.find((t) => t.target === 'east')!;
    const west = parsed.fleet_summary.find((t) => t.target === 'west')!;
    expect(east).toMatchObject({ alerts_by_rule: { 'server-crashed': 1 }, crashes: 1, longest_replay_stall: null });
    // West's server died whole: an alert, but no crash line (crashes counts those).
    expect(west).toMatchObject({ alerts_by_rule: { 'server-crashed': 1, deadlocks: 2 }, crashes: 0 });
    // The worst hold is the largest removable-cutoff age any autovacuum report of the target logged.
    for (const [name, summary] of [['east', east], ['west', west]] as const) {
      expect(summary.worst_vacuum_hold?.removable_cutoff_age_xids).toBe(maxCutoffAge(storeFile(name)));
    }
    expect(parsed.alerts.map((a) => `${a.target} ${a.rule}`).sort()).toEqual(['east server-crashed', 'west deadlocks', 'west deadlocks', 'west server-crashed']);
    // Evidence points at events of the report, of the alert's own target.
    for (const alert of parsed.alerts) expect(alert.evidence.event_ids.length).toBeGreaterThan(0);

    const westOnly = spawnSync(process.execPath, [path.join(ROOT, 'bin/pgvigil.js'), 'report', '--store', as('pgvigil_reader'), '--from', '2000-01-01T00:00:00Z', '--target', 'west'], { encoding: 'utf8' });
    expect(westOnly.status).toBe(0);
    expect(westOnly.stdout).toMatch(/^pgvigil fleet summary: .*, 1 target$/m);
    expect(westOnly.stdout).toContain('server-crashed on west');
    expect(westOnly.stdout).not.toContain('on east');

    const reader = new pg.Client({ connectionString: as('pgvigil_reader') });
    await reader.connect();
    await expect(reader.query(`DELETE FROM pgvigil.events`)).rejects.toThrow(/permission denied for table events/);
    await reader.end();
  });
});

/**
 * A slow central (20 ms per event row), so that a kill or a restart lands mid-run: forwarding a
 * whole test store otherwise takes less time than one look at the central count.
 */
async function slowCentral(central: PgServer): Promise<void> {
  await centralQuery(central, `CREATE OR REPLACE FUNCTION public.slow_event_insert() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN PERFORM pg_sleep(0.02); RETURN NEW; END$$`);
  await centralQuery(central, 'CREATE TRIGGER slow_event_insert BEFORE INSERT ON pgvigil.events FOR EACH ROW EXECUTE FUNCTION public.slow_event_insert()');
}

async function fastCentral(central: PgServer): Promise<void> {
  await centralQuery(central, 'DROP TRIGGER slow_event_insert ON pgvigil.events');
}

function localCount(file: string, table: 'events'): number {
  return readStore(file, (db) => db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number);
}

function maxCutoffAge(file: string): number {
  return readStore(file, (db) => db.prepare(`SELECT max(json_extract(details, '$.removable_cutoff_age_xids')) FROM events WHERE kind = 'autovacuum'`).pluck().get() as number);
}
