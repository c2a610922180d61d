/**
 * A compressed normal day on a primary and its streaming standby: everything a busy, healthy
 * server does that must page nobody. Run with pgvigil's default thresholds by normal-day.test.ts
 * (and longer by `npm run bench -- normal-day`).
 *
 * The day, in two phases:
 * - busy: OLTP at a steady rate (pgbench -R); an ETL that TRUNCATEs its staging table every few
 *   seconds and feeds a logical subscription; a logical slot read by SQL on a schedule; an
 *   application whose statement_timeout cancels a query a few times a minute; reports of 10-15 s
 *   on the standby with hot_standby_feedback; and, one after the other, pg_basebackup -X stream,
 *   pg_receivewal (run, then stopped), CREATE INDEX CONCURRENTLY, VACUUM (FREEZE) of a large-ish
 *   table, pg_dump of a database; the subscription is disabled for maintenance, then enabled.
 * - quiet: no commits (the OLTP and the ETL stop); the standby is restarted (planned: down for
 *   longer than a reconnect, less than a few minutes); then one bulk load in a single transaction
 *   streams WAL without a commit, so the last replayed commit gets old while replay is current.
 * On 17+, the subscription's slot is a failover slot synced to the standby (sync_replication_slots).
 * autovacuum_freeze_max_age is raised well above its default, as on servers that freeze by hand.
 *
 * PG 15's own client binaries (Debian) do the backup, the WAL stream and the dump; other majors
 * lack them here (the embedded PG 18 ships only the server, and 15's refuse a newer server), so
 * their walsenders come from wal-stream-client.ts and the dump is a REPEATABLE READ COPY of each
 * table, which is what a dump is to the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { PG15_BIN_DIR } from '../helpers/pg-binaries.js';
import { startPrimary, startStandby, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { baseBackupDiscarded, streamWal } from '../helpers/wal-stream-client.js';
import { RULES_DEFAULTS } from '../../src/rules/catalog.js';
import type { Db } from '../../src/store/open-store.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRulesOn, type LiveRules } from './live-rules-rig.js';

export interface DayScale {
  busyMs: number;
  quietMs: number;
  /** How long the planned standby restart keeps it down. */
  standbyDownMs: number;
  /** How long the subscription stays disabled. */
  subscriptionDisabledMs: number;
  /** How long pg_receivewal runs before it is stopped. */
  receiveWalMs: number;
  /** Standby reports last this long (10-60 s on a real day). */
  reportMs: number;
}

/**
 * Fits the CI budget. The quiet phase outlasts the load balancers' 60 s by 15 s so that the last
 * replayed commit is past them for a good while of the bulk load (at 65 s the old lag rule fired
 * on one run in two).
 */
export const COMPRESSED_DAY: DayScale = {
  busyMs: 35_000, quietMs: 75_000, standbyDownMs: 30_000, subscriptionDisabledMs: 30_000, receiveWalMs: 8_000, reportMs: 12_000,
};

export const DAY_WAIT_MS = 60_000;
const PGBENCH_RATE_TPS = 20;
const ETL_EVERY_MS = 3_000;
const CDC_EVERY_MS = 3_000;
const GUARDED_EVERY_MS = 15_000;
const BULK_BATCH_ROWS = 20_000;
// Backups are throttled so as not to starve the server: a few seconds for the day's small database.
const BACKUP_MAX_RATE_KB_PER_SECOND = 8_192;
const STANDBY_NAME = 'normal_day_standby';

export interface DayServers {
  version: PgVersion;
  primary: PgServer;
  standby: PgServer;
}

/** Primary and standby set up as on a production server before the day starts. */
export async function setUpDay(version: PgVersion): Promise<DayServers> {
  const primary = await startPrimary({
    version, name: `normal-day-${version}`,
    settings: {
      wal_level: 'logical', autovacuum_naptime: '1s', autovacuum_freeze_max_age: 1_000_000_000,
      log_autovacuum_min_duration: 0, log_lock_waits: true, log_recovery_conflict_waits: true,
    },
  });
  await createMonitorRole(primary);
  await primary.query('CREATE DATABASE subscriber');
  await primary.query(`
    CREATE TABLE etl_staging (id int, payload text);
    CREATE TABLE etl_facts (id bigserial PRIMARY KEY, payload text, loaded_at timestamptz DEFAULT now());
    CREATE TABLE events (id bigint PRIMARY KEY, kind int, body text);
    INSERT INTO events SELECT g, g % 17, md5(g::text) FROM generate_series(1, 300000) g;
    CREATE TABLE bulk_load (id bigint, body text);
    CREATE PUBLICATION facts FOR TABLE etl_facts;`);
  await primary.query('CREATE TABLE etl_facts (id bigint PRIMARY KEY, payload text, loaded_at timestamptz)', [], 'subscriber');
  // PG 17+: a failover slot, synced to the standby; created by hand because the subscriber is on the same server.
  const failover = version >= 17 ? ', false, false, true' : '';
  await primary.query(`SELECT pg_create_logical_replication_slot('facts_sub', 'pgoutput'${failover})`);
  await primary.query("SELECT pg_create_logical_replication_slot('cdc', 'test_decoding')");
  await primary.query(`CREATE SUBSCRIPTION facts_sub CONNECTION '${conninfo(primary)} dbname=postgres' PUBLICATION facts
    WITH (create_slot = false, slot_name = 'facts_sub', copy_data = false)`, [], 'subscriber');
  await runTool(version, 'pgbench', [...connectArgs(primary), '-i', '-s', '2', '-q', 'postgres']);
  const standby = await startStandby(primary, {
    name: STANDBY_NAME,
    settings: {
      hot_standby_feedback: true,
      // No application_name: the walreceiver's default ('walreceiver'), as many configurations leave it.
      primary_conninfo: `${conninfo(primary)}${version >= 17 ? ' dbname=postgres' : ''}`,
      ...(version >= 17 && { sync_replication_slots: true }), // PG 17+
    },
  });
  return { version, primary, standby };
}

/**
 * Two deployments watch a day, each with every rule at its defaults: one pgvigil over both
 * servers, and a sidecar beside the primary that sees the standby only through
 * pg_stat_replication (several rules judge the primary's view only when the standby is not
 * watched itself).
 */
export interface DayWatchers {
  cluster: LiveRules;
  primarySidecar: LiveRules;
}

export async function watchDay({ primary, standby }: DayServers): Promise<DayWatchers> {
  const defaults = { staleAfterMs: RULES_DEFAULTS.staleAfterMs };
  const onPrimary = { target: 'primary', server: primary };
  return {
    cluster: await startLiveRulesOn([onPrimary, { target: 'standby', server: standby }], {}, defaults),
    primarySidecar: await startLiveRulesOn([onPrimary], {}, defaults),
  };
}

/** Alerts of warning, error or critical severity: what pages someone. */
export function pagingAlerts(db: Db): string[] {
  const rows = db.prepare(`SELECT rule_id, severity, target, summary FROM alerts
    WHERE severity IN ('warning', 'error', 'critical') ORDER BY id`).all() as Array<{ rule_id: string; severity: string; target: string; summary: string }>;
  return rows.map((a) => `${a.rule_id} [${a.severity}] ${a.target}: ${a.summary}`);
}

/** What happened during the day, for the test to check the day really was one. */
export interface DayLog {
  pgbenchTransactions: number;
  statementTimeouts: number;
  etlRuns: number;
  reports: number;
}

/** `trace` hears each step as it starts (the bench prints them). */
export async function runDay({ version, primary, standby }: DayServers, scale: DayScale, trace: (step: string) => void = () => undefined): Promise<DayLog> {
  const log: DayLog = { pgbenchTransactions: 0, statementTimeouts: 0, etlRuns: 0, reports: 0 };
  const dayEnd = new Stopper();
  const busyEnd = new Stopper();
  const etlLoop = repeat(busyEnd, ETL_EVERY_MS, () => etl(primary).then(() => { log.etlRuns += 1; }));
  const loops = [
    etlLoop,
    repeat(dayEnd, CDC_EVERY_MS, () => primary.query("SELECT count(*) FROM pg_logical_slot_get_changes('cdc', NULL, NULL)")),
    repeat(dayEnd, GUARDED_EVERY_MS, () => guardedQuery(primary).then((cancelled) => { if (cancelled) log.statementTimeouts += 1; })),
    // A report on a standby being restarted fails; the reporting tool tries again at its next run.
    repeat(dayEnd, 1_000, () => standby.query(`SELECT count(*), pg_sleep(${scale.reportMs / 1000}) FROM pgbench_accounts`)
      .then(() => { log.reports += 1; }, () => undefined)),
  ];
  const pgbench = runTool(version, 'pgbench', [...connectArgs(primary), '-n', '-c', '2', '-R', String(PGBENCH_RATE_TPS),
    '-T', String(Math.round(scale.busyMs / 1000)), 'postgres']).then((out) => { log.pgbenchTransactions = transactionsOf(out); });

  trace('busy: subscription disabled');
  await primary.query('ALTER SUBSCRIPTION facts_sub DISABLE', [], 'subscriber');
  const subscriptionBack = pause(scale.subscriptionDisabledMs).then(() => primary.query('ALTER SUBSCRIPTION facts_sub ENABLE', [], 'subscriber'));
  trace('pg_basebackup -X stream');
  await baseBackup({ version, primary, standby });
  trace('pg_receivewal');
  await receiveWal({ version, primary, standby }, scale.receiveWalMs);
  trace('CREATE INDEX CONCURRENTLY');
  await primary.query('CREATE INDEX CONCURRENTLY events_kind ON events (kind)');
  trace('VACUUM (FREEZE)');
  await primary.query('VACUUM (FREEZE) events');
  trace('pg_dump');
  await dump({ version, primary, standby });
  trace('waiting for the subscription and pgbench');
  await subscriptionBack;
  await pgbench;
  busyEnd.stop();
  await etlLoop;

  // Quiet: nothing commits from here on until the bulk load does, at the very end.
  const quietStart = Date.now();
  trace('quiet: standby restart');
  await standby.stop('fast');
  await pause(scale.standbyDownMs);
  await standby.start();
  await waitUntil(async () => (await standby.query<{ status: string }>('SELECT status FROM pg_stat_wal_receiver'))[0]?.status === 'streaming',
    DAY_WAIT_MS, `standby of PG ${version} to stream again after its restart`);
  trace('bulk load');
  await bulkLoad(primary, quietStart + scale.quietMs);
  dayEnd.stop();
  await Promise.all(loops);
  return log;
}

/**
 * The subscription goes before the servers: its apply worker streams from the primary it runs on,
 * and a fast shutdown would wait for that walsender until pg_ctl gives up.
 */
export async function endDay({ primary }: DayServers): Promise<void> {
  for (const statement of ['ALTER SUBSCRIPTION facts_sub DISABLE', 'ALTER SUBSCRIPTION facts_sub SET (slot_name = NONE)', 'DROP SUBSCRIPTION facts_sub']) {
    await primary.query(statement, [], 'subscriber');
  }
}

/** The ETL's cycle: a fresh staging table, loaded, then moved into the published facts. */
async function etl(primary: PgServer): Promise<void> {
  await primary.query(`
    TRUNCATE etl_staging;
    INSERT INTO etl_staging SELECT g, md5(random()::text) FROM generate_series(1, 500) g;
    INSERT INTO etl_facts (payload) SELECT payload FROM etl_staging;`);
}

/** An application that guards a query with statement_timeout: true when the guard cancelled it. */
async function guardedQuery(primary: PgServer): Promise<boolean> {
  try {
    await primary.query("SET statement_timeout = '200ms'; SELECT pg_sleep(1)");
    return false;
  } catch (error) {
    if ((error as { code?: string }).code === '57014') return true;
    throw error;
  }
}

/** One transaction that writes until `untilMs`, then commits: WAL streams all along, no commit record until the end. */
async function bulkLoad(primary: PgServer, untilMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: primary.dsn() });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('BEGIN');
    let next = 0;
    do {
      await client.query('INSERT INTO bulk_load SELECT g, md5(g::text) FROM generate_series($1::bigint, $2::bigint) g', [next, next + BULK_BATCH_ROWS - 1]);
      next += BULK_BATCH_ROWS;
      await pause(200);
    } while (Date.now() < untilMs);
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function baseBackup({ version, primary }: DayServers): Promise<void> {
  if (version !== 15) {
    const walStream = await streamWal(primary, 'pg_basebackup');
    await baseBackupDiscarded(primary, 'pg_basebackup', BACKUP_MAX_RATE_KB_PER_SECOND);
    return walStream.stop();
  }
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-normal-day-backup-'));
  try {
    await runTool(version, 'pg_basebackup', [...connectArgs(primary), '-D', join(dir, 'data'), '-X', 'stream', '-c', 'fast',
      '-r', `${BACKUP_MAX_RATE_KB_PER_SECOND}k`]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function receiveWal({ version, primary }: DayServers, runMs: number): Promise<void> {
  const streaming = () => waitUntil(async () => (await primary.query("SELECT 1 FROM pg_stat_replication WHERE application_name = 'pg_receivewal'")).length > 0,
    DAY_WAIT_MS, `pg_receivewal to stream from PG ${version}`);
  if (version !== 15) {
    const stream = await streamWal(primary, 'pg_receivewal');
    await streaming();
    await pause(runMs);
    return stream.stop();
  }
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-normal-day-wal-'));
  const child = spawn(join(PG15_BIN_DIR, 'pg_receivewal'), [...connectArgs(primary), '-D', dir, '-n'], { stdio: 'ignore' });
  try {
    await streaming();
    await pause(runMs);
  } finally {
    await stopChild(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function dump({ version, primary }: DayServers): Promise<void> {
  if (version === 15) {
    await runTool(version, 'pg_dump', [...connectArgs(primary), '-f', '/dev/null', 'postgres']);
    return;
  }
  const client = new pg.Client({ connectionString: primary.dsn(), application_name: 'pg_dump' });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const tables = await client.query<{ name: string }>("SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables ORDER BY 1");
    for (const { name } of tables.rows) {
      await pipeline(client.query(copyTo(`COPY ${name} TO STDOUT`)), new Writable({ write: (_chunk, _encoding, done) => done() }));
    }
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => undefined);
  }
}

function conninfo(server: PgServer): string {
  return `host=${server.host} port=${server.port} user=postgres`;
}

function connectArgs(server: PgServer): string[] {
  return ['-h', server.host, '-p', String(server.port), '-U', 'postgres'];
}

/** Debian's PG 15 client binary (pgbench works against any major; the others are used on 15 only). */
function runTool(version: PgVersion, program: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(PG15_BIN_DIR, program), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.on('error', reject);
    child.on('close', (code) => code === 0 ? resolve(output) : reject(new Error(`${program} against PG ${version} exited ${code}:\n${output}`)));
  });
}

function transactionsOf(pgbenchOutput: string): number {
  const match = /number of transactions actually processed: (\d+)/.exec(pgbenchOutput);
  if (!match) throw new Error(`pgbench printed no transaction count:\n${pgbenchOutput}`);
  return Number(match[1]);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

/** The end of a phase, for loops to see. */
class Stopper {
  stopped = false;
  private wake: Array<() => void> = [];

  stop(): void {
    this.stopped = true;
    for (const wake of this.wake.splice(0)) wake();
  }

  /** Waits ms, or less when the phase ends first. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake.push(() => { clearTimeout(timer); resolve(); });
    });
  }
}

/** Runs `work` every `everyMs` until the phase ends; the first error stops the loop and is thrown at the end. */
async function repeat(phase: Stopper, everyMs: number, work: () => Promise<unknown>): Promise<void> {
  while (!phase.stopped) {
    await work();
    await phase.wait(everyMs);
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
