/**
 * Poll cycle cost: pgvigil's poll scheduler with every collector against a PostgreSQL 18 server
 * (harness) holding BENCH_DATABASES databases (default 10) with BENCH_TABLES tables in all
 * (default 5,000), side by side with prometheus-postgres-exporter 0.11.1 scraping the same server
 * with --auto-discover-databases and its example per-table queries (pg_stat_user_tables,
 * pg_statio_user_tables from the Debian package).
 *
 * One pgvigil cycle = every collector the server supports, once, in every database
 * (PollScheduler.runOnce), pools warm. Reported: wall time, the poller's own CPU (this process),
 * the server's CPU (its backends, from /proc), and queries per cycle (collector queries counted
 * at the collector boundary; statements counted by the server's xact_commit). Targets from the
 * issue: under 100 ms wall, under 50 ms poller CPU, one query per view per database.
 * The exporter: wall time of a scrape, and its own CPU per scrape (/proc/<pid>/stat).
 * BENCH_RUNS alternated pairs (default 15); medians, ranges and per-pair ratios.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { parse, stringify } from 'yaml';
import { createCollectors, type Collector } from '../src/collectors/index.js';
import { systemClock } from '../src/domain/clock.js';
import { PollScheduler } from '../src/sources/poll-scheduler.js';
import { destroyAllServers, startPrimary, type PgServer } from '../test/helpers/pg-harness.js';
import { freePort, waitUntil } from '../test/helpers/pg-processes.js';
import { median } from './lib/measure.js';
import type { Benchmark } from './run.js';

const EXPORTER = '/usr/bin/prometheus-postgres-exporter';
const EXAMPLE_QUERIES = '/usr/share/doc/prometheus-postgres-exporter/examples/queries.yaml';
const PER_TABLE_QUERIES = ['pg_stat_user_tables', 'pg_statio_user_tables'];
const CLOCK_TICKS_PER_SECOND = 100;

function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

const stat = (values: number[], unit = 'ms'): string =>
  `${median(values).toFixed(1)} ${unit} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;

/** CPU seconds (user + system) of a process, or of several, from /proc. */
function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the ")" of comm: utime and stime are the 12th and 13th.
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between listing and reading: its time is gone with it.
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** pids of the server's processes (postmaster and children): the server's cost of being polled. */
function serverPids(server: PgServer): number[] {
  const postmaster = Number(readFileSync(path.join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readFileSync(`/proc/${postmaster}/task/${postmaster}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return [postmaster, ...children];
}

async function makeDatabases(server: PgServer, databases: number, tables: number): Promise<string[]> {
  const names = Array.from({ length: databases }, (_, i) => `bench_db_${i + 1}`);
  const perDb = Math.ceil(tables / databases);
  for (const db of names) {
    await server.query(`CREATE DATABASE ${db}`);
    await server.query(`
      DO $$ BEGIN
        FOR i IN 1..${perDb} LOOP
          EXECUTE format('CREATE TABLE t_%s (id int PRIMARY KEY, v text)', i);
          EXECUTE format('INSERT INTO t_%s SELECT g, md5(g::text) FROM generate_series(1, 10) g', i);
          EXECUTE format('UPDATE t_%s SET v = v || ''x'' WHERE id %% 3 = 0', i);
        END LOOP;
      END $$`, [], db);
  }
  return names;
}

/** Counts the queries each collector sends, without changing what it does. */
function counted(collectors: Collector[]): { collectors: Collector[]; queries: () => number; reset: () => void } {
  let queries = 0;
  const wrapped = collectors.map((c): Collector => ({
    ...c,
    collect: (ctx) => c.collect({ ...ctx, query: (sql, params) => { queries += 1; return ctx.query(sql, params); } }),
  }));
  return { collectors: wrapped, queries: () => queries, reset: () => { queries = 0; } };
}

async function serverStatements(server: PgServer): Promise<number> {
  const [row] = await server.query<{ n: string }>('SELECT sum(xact_commit + xact_rollback)::text AS n FROM pg_stat_database');
  return Number(row?.n ?? 0);
}

async function startExporter(server: PgServer, dir: string): Promise<{ url: string; proc: ChildProcess }> {
  const examples = parse(readFileSync(EXAMPLE_QUERIES, 'utf8')) as Record<string, unknown>;
  const queryFile = path.join(dir, 'queries.yaml');
  writeFileSync(queryFile, stringify(Object.fromEntries(PER_TABLE_QUERIES.map((name) => [name, examples[name]]))));
  const port = await freePort();
  const proc = spawn(EXPORTER, [
    `--web.listen-address=127.0.0.1:${port}`, `--extend.query-path=${queryFile}`, '--auto-discover-databases', '--log.level=error',
  ], {
    env: { PATH: process.env.PATH, DATA_SOURCE_NAME: `postgresql://postgres@${server.host}:${server.port}/postgres?sslmode=disable` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}/metrics`;
  await waitUntil(async () => (await fetch(url)).ok, 20_000, 'postgres_exporter answering');
  return { url, proc };
}

export async function runPollBench(): Promise<void> {
  for (const file of [EXPORTER, EXAMPLE_QUERIES]) {
    if (!existsSync(file)) return say(`skipped: ${file} is missing (apt-get install prometheus-postgres-exporter)`);
  }
  const databases = envNumber('BENCH_DATABASES', 10);
  const tables = envNumber('BENCH_TABLES', 5_000);
  const runs = envNumber('BENCH_RUNS', 15);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-poll-'));
  let exporter: ChildProcess | null = null;
  let scheduler: PollScheduler | null = null;
  try {
    say(`PostgreSQL 18 (harness) with ${databases} databases, ${tables} tables in all...`);
    const server = await startPrimary({ version: 18, name: 'bench-poll', settings: { max_connections: 200 } });
    const dbNames = await makeDatabases(server, databases, tables);

    // The reference the issue quotes: the view itself, ~5 us per table (connections kept open).
    const viewMs: number[] = [];
    const viewClients = await Promise.all(dbNames.map(async (db) => {
      const client = new pg.Client({ connectionString: server.dsn(db) });
      await client.connect();
      await client.query('SELECT * FROM pg_stat_user_tables');
      return client;
    }));
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      for (const client of viewClients) await client.query('SELECT * FROM pg_stat_user_tables');
      viewMs.push(performance.now() - started);
    }
    await Promise.all(viewClients.map((c) => c.end()));

    const { collectors, queries, reset } = counted(createCollectors());
    const logger = pino({ level: 'silent' });
    scheduler = new PollScheduler({
      target: 'bench', connection: server.dsn(), collectors, clock: systemClock, logger,
      writer: { enqueue: () => undefined },
      // Timers far away: the bench drives every cycle itself with runOnce().
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 3_600_000])), probeIntervalMs: 3_600_000, idleTimeoutMs: 600_000,
    });
    const coldStarted = performance.now();
    await scheduler.start();
    await scheduler.whenIdle();
    const coldMs = performance.now() - coldStarted;

    const exporterStarted = await startExporter(server, dir);
    exporter = exporterStarted.proc;
    const exporterPid = exporter.pid!;
    for (let i = 0; i < 2; i++) {
      await scheduler.runOnce();
      await (await fetch(exporterStarted.url)).text();
    }

    const wall: number[] = [];
    const cpu: number[] = [];
    const serverCpu: number[] = [];
    const perCycleQueries: number[] = [];
    const perCycleStatements: number[] = [];
    const byCollector = new Map<string, number[]>();
    const exporterWall: number[] = [];
    const exporterCpu: number[] = [];
    const exporterServerCpu: number[] = [];
    let exporterSeries = 0;
    let pgvigilSamples = 0;
    for (let i = 0; i < runs; i++) {
      reset();
      const statementsBefore = await serverStatements(server);
      let pids = serverPids(server);
      let serverBefore = cpuSecondsOf(pids);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await scheduler.runOnce();
      wall.push(performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      cpu.push((used.user + used.system) / 1000);
      serverCpu.push((cpuSecondsOf(pids) - serverBefore) * 1000);
      perCycleQueries.push(queries());
      // Minus the one statement serverStatements() itself commits.
      perCycleStatements.push((await serverStatements(server)) - statementsBefore - 1);
      pgvigilSamples = [...scheduler.stats.values()].reduce((sum, s) => sum + s.lastSamples, 0);
      for (const [name, s] of scheduler.stats) if (s.lastDurationMs !== null) byCollector.set(name, [...(byCollector.get(name) ?? []), s.lastDurationMs]);

      pids = serverPids(server);
      serverBefore = cpuSecondsOf(pids);
      const exporterBefore = cpuSecondsOf([exporterPid]);
      const scrapeStarted = performance.now();
      const text = await (await fetch(exporterStarted.url)).text();
      exporterWall.push(performance.now() - scrapeStarted);
      exporterCpu.push((cpuSecondsOf([exporterPid]) - exporterBefore) * 1000);
      // Backends the exporter opened and closed during the scrape are not counted: a lower bound.
      exporterServerCpu.push((cpuSecondsOf(pids) - serverBefore) * 1000);
      exporterSeries = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
    }
    const ratios = exporterWall.map((e, i) => e / wall[i]!);
    await scheduler.stop();

    // With the default idle timeout (3 s, shorter than the per-database intervals so that a
    // plain DROP DATABASE never waits on an idle poller connection), each visit to a database
    // reconnects: the same cycle on fresh per-database connections.
    scheduler = new PollScheduler({
      target: 'bench', connection: server.dsn(), collectors: createCollectors(), clock: systemClock, logger,
      writer: { enqueue: () => undefined },
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 3_600_000])), probeIntervalMs: 3_600_000, idleTimeoutMs: 20,
    });
    await scheduler.start();
    await scheduler.whenIdle();
    const freshWall: number[] = [];
    const freshCpu: number[] = [];
    for (let i = 0; i < Math.min(runs, 8); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await scheduler.runOnce();
      freshWall.push(performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      freshCpu.push((used.user + used.system) / 1000);
    }
    const collectorsRun = [...scheduler.stats.values()].filter((s) => s.runs > 0).length;

    say(`SELECT * FROM pg_stat_user_tables in every database, summed: ${stat(viewMs)}`);
    say(`pgvigil: ${collectorsRun} collectors, ${pgvigilSamples} samples per cycle (max_tables_per_database 200)`);
    say(`  first cycle, connections included: ${coldMs.toFixed(1)} ms`);
    say(`  full cycle, median (range) of ${runs}:`);
    say(`    wall            ${stat(wall)}   [target: under 100 ms]`);
    say(`    poller CPU      ${stat(cpu)}   [target: under 50 ms]`);
    say(`    server CPU      ${stat(serverCpu)}   (CPU time of the server's processes, 10 ms ticks)`);
    say(`    collector queries per cycle: ${median(perCycleQueries)} (= per-database collectors x ${dbNames.length + 1} databases + server collectors)`);
    say(`    statements the server ran per cycle: ${median(perCycleStatements)} (collector queries + SET statement_timeout when a connection switches collector timeouts)`);
    const slowest = [...byCollector].map(([name, values]) => [name, median(values)] as const).sort((a, b) => b[1] - a[1]).slice(0, 5);
    say(`    slowest collectors (median wall, all databases in parallel): ${slowest.map(([n, v]) => `${n} ${v.toFixed(1)} ms`).join(', ')}`);
    say(`  the same cycle on fresh per-database connections (default idle timeout), median (range) of ${freshWall.length}:`);
    say(`    wall            ${stat(freshWall)}`);
    say(`    poller CPU      ${stat(freshCpu)}`);
    say(`prometheus-postgres-exporter 0.11.1 (--auto-discover-databases, example per-table queries): ${exporterSeries} series per scrape`);
    say(`    wall            ${stat(exporterWall)}`);
    say(`    exporter CPU    ${stat(exporterCpu)}   (10 ms ticks)`);
    say(`    server CPU      ${stat(exporterServerCpu)}   (lower bound: backends that exited during the scrape are missed)`);
    say(`  exporter scrape / pgvigil cycle, wall, per pair: median ${median(ratios).toFixed(1)}x (${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)}x)`);
  } finally {
    exporter?.kill('SIGTERM');
    await scheduler?.stop();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'one full poll cycle over 10 databases / 5,000 tables vs prometheus-postgres-exporter scraping the same server',
  run: () => runPollBench(),
};
