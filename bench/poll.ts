/**
 * Poll cycle cost: pgvigil's poll scheduler with every collector against a PostgreSQL 18 server
 * (harness) holding BENCH_DATABASES databases (default 10) with BENCH_TABLES tables in all
 * (default 5,000), side by side with prometheus-postgres-exporter 0.11.1 scraping the same server
 * with --auto-discover-databases and its example per-table queries (pg_stat_user_tables,
 * pg_statio_user_tables from the Debian package).
 *
 * Cycles (PollScheduler.runOnce, pools warm): the full cycle is every collector on a default
 * interval up to a minute, all due together at the minute's tick; the rare cycle adds the
 * collectors on longer intervals. Reported per cycle: wall time, the poller's own CPU (this
 * process), the server's CPU (its backends, from /proc), and the queries collectors sent.
 * Targets from the issue, for the full cycle: under 100 ms wall, under 50 ms poller CPU, one query
 * per view per database. Then each collector alone, and the full cycle on fresh connections
 * (reconnecting on every visit). The exporter: wall time of a scrape, and its own CPU per scrape
 * (/proc/<pid>/stat). BENCH_RUNS alternated runs (default 15: full cycle, scrape, rare cycle);
 * medians, ranges and per-pair ratios.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { createCollectors, type Collector } from '../src/collectors/index.js';
import { systemClock } from '../src/domain/clock.js';
import { PollScheduler } from '../src/sources/poll-scheduler.js';
import { destroyAllServers, startPrimary, type PgServer } from '../test/helpers/pg-harness.js';
import { waitUntil } from '../test/helpers/pg-processes.js';
import { envNumber, median } from './lib/measure.js';
import { cpuSecondsOf, exporterMissing, startExporter } from './lib/postgres-exporter.js';
import type { Benchmark } from './run.js';

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

const stat = (values: number[], unit = 'ms'): string =>
  `${median(values).toFixed(1)} ${unit} (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;

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

/** The cost of one kind of cycle, measured run by run. */
class CycleStats {
  readonly wall: number[] = [];
  readonly cpu: number[] = [];
  readonly serverCpu: number[] = [];
  readonly queries: number[] = [];
  samples = 0;

  report(title: string, targets: boolean): void {
    say(`  ${title}, median (range) of ${this.wall.length}:`);
    const over = (values: number[], limitMs: number): string => `; over it in ${values.filter((v) => v >= limitMs).length} of ${values.length}`;
    say(`    wall            ${stat(this.wall)}${targets ? `   [target: under 100 ms${over(this.wall, 100)}]` : ''}`);
    say(`    poller CPU      ${stat(this.cpu)}${targets ? `   [target: under 50 ms${over(this.cpu, 50)}]` : ''}`);
    if (this.serverCpu.length > 0) say(`    server CPU      ${stat(this.serverCpu)}   (CPU time of the server's processes, 10 ms ticks)`);
    if (this.queries.length > 0) say(`    queries sent ${median(this.queries)}, samples ${this.samples}`);
  }
}

/** Every collector that is due together at the tick where all default intervals up to this one meet. */
const FULL_CYCLE_MAX_INTERVAL_MS = 60_000;

export async function runPollBench(): Promise<void> {
  const missing = exporterMissing();
  if (missing) return say(`skipped: ${missing}`);
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

    const collectors = createCollectors();
    // A full cycle: every collector on a default interval up to a minute, as at the minute's
    // tick. The rare cycle adds the ones on longer intervals (sizes that walk files).
    const inFullCycle = (c: Collector): boolean => c.intervalMs <= FULL_CYCLE_MAX_INTERVAL_MS;
    const rareOnes = collectors.filter((c) => !inFullCycle(c)).map((c) => `${c.name} (${c.intervalMs / 1000} s)`);
    const logger = pino({ level: 'silent' });
    scheduler = new PollScheduler({
      target: 'bench', connection: server.dsn(), collectors, clock: systemClock, logger,
      writer: { enqueue: () => undefined },
      // Timers far away: the bench drives every cycle itself with runOnce().
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 3_600_000])), probeIntervalMs: 3_600_000,
    });
    const coldStarted = performance.now();
    await scheduler.start();
    await scheduler.whenIdle();
    const coldMs = performance.now() - coldStarted;

    const exporterStarted = await startExporter(`postgresql://postgres@${server.host}:${server.port}/postgres?sslmode=disable`, dir);
    exporter = exporterStarted.proc;
    const exporterPid = exporter.pid!;
    for (let i = 0; i < 2; i++) {
      await scheduler.runOnce();
      await (await fetch(exporterStarted.url)).text();
    }

    const queriesSent = (): number => [...scheduler!.stats.values()].reduce((sum, s) => sum + s.queries, 0);
    const measureCycle = async (into: CycleStats, only: (c: Collector) => boolean): Promise<void> => {
      const queriesBefore = queriesSent();
      const pids = serverPids(server);
      const serverBefore = cpuSecondsOf(pids);
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await scheduler!.runOnce(only);
      into.wall.push(performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      into.cpu.push((used.user + used.system) / 1000);
      into.serverCpu.push((cpuSecondsOf(pids) - serverBefore) * 1000);
      into.queries.push(queriesSent() - queriesBefore);
      into.samples = [...scheduler!.stats].filter(([name]) => collectors.some((c) => c.name === name && only(c)))
        .reduce((sum, [, s]) => sum + s.lastSamples, 0);
    };

    const full = new CycleStats();
    const rare = new CycleStats();
    const exporterWall: number[] = [];
    const exporterCpu: number[] = [];
    const exporterServerCpu: number[] = [];
    let exporterSeries = 0;
    for (let i = 0; i < runs; i++) {
      await measureCycle(full, inFullCycle);

      const pids = serverPids(server);
      const serverBefore = cpuSecondsOf(pids);
      const exporterBefore = cpuSecondsOf([exporterPid]);
      const scrapeStarted = performance.now();
      const text = await (await fetch(exporterStarted.url)).text();
      exporterWall.push(performance.now() - scrapeStarted);
      exporterCpu.push((cpuSecondsOf([exporterPid]) - exporterBefore) * 1000);
      // Backends the exporter opened and closed during the scrape are not counted: a lower bound.
      exporterServerCpu.push((cpuSecondsOf(pids) - serverBefore) * 1000);
      exporterSeries = text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

      await measureCycle(rare, () => true);
    }
    const ratios = exporterWall.map((e, i) => e / full.wall[i]!);

    // Each collector alone (all its databases at once), to see where a cycle's time goes.
    const alone: Array<[string, number, number]> = [];
    for (const c of collectors.filter((c) => (scheduler!.stats.get(c.name)?.runs ?? 0) > 0)) {
      const wall: number[] = [];
      const pids = serverPids(server);
      const serverBefore = cpuSecondsOf(pids);
      const reps = 10;
      for (let i = 0; i < reps; i++) {
        const started = performance.now();
        await scheduler.runOnce((x) => x.name === c.name);
        wall.push(performance.now() - started);
      }
      alone.push([c.name, median(wall), ((cpuSecondsOf(pids) - serverBefore) * 1000) / reps]);
    }
    const collectorsRun = alone.length;
    await scheduler.stop();

    // Reconnecting on every visit (an idle timeout shorter than the intervals, pgvigil's old
    // default): the same full cycle on fresh per-database connections.
    scheduler = new PollScheduler({
      target: 'bench', connection: server.dsn(), collectors: createCollectors(), clock: systemClock, logger,
      writer: { enqueue: () => undefined },
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 3_600_000])), probeIntervalMs: 3_600_000, idleTimeoutMs: 20,
    });
    await scheduler.start();
    await scheduler.whenIdle();
    const fresh = new CycleStats();
    for (let i = 0; i < Math.min(runs, 8); i++) {
      await waitUntil(() => server.query("SELECT 1 FROM pg_stat_activity WHERE application_name = 'pgvigil' AND datname <> 'postgres'")
        .then((rows) => rows.length === 0), 5_000, 'per-database connections closed');
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      await scheduler.runOnce(inFullCycle);
      fresh.wall.push(performance.now() - started);
      const used = process.cpuUsage(cpuBefore);
      fresh.cpu.push((used.user + used.system) / 1000);
    }

    say(`SELECT * FROM pg_stat_user_tables in every database, summed: ${stat(viewMs)}`);
    say(`pgvigil: ${collectorsRun} collectors (max_tables_per_database 200), default options (connections kept between visits); first cycle, connecting included: ${coldMs.toFixed(1)} ms`);
    full.report(`full cycle (every collector on an interval up to ${FULL_CYCLE_MAX_INTERVAL_MS / 1000} s)`, true);
    rare.report(`rare cycle (the full cycle plus ${rareOnes.length > 0 ? rareOnes.join(', ') : 'nothing: no collector has a longer interval'})`, false);
    say('  each collector alone, in all its databases at once (median wall; server CPU per run, 10 ms ticks over 10 runs):');
    for (const [name, wallMs, serverMs] of alone.sort((a, b) => b[2] - a[2] || b[1] - a[1])) {
      say(`    ${name.padEnd(28)} ${wallMs.toFixed(1).padStart(6)} ms wall  ${serverMs.toFixed(1).padStart(5)} ms server`);
    }
    fresh.report('the full cycle reconnecting to every database (idle timeout shorter than the interval)', false);
    say(`prometheus-postgres-exporter 0.11.1 (--auto-discover-databases, example per-table queries): ${exporterSeries} series per scrape`);
    say(`    wall            ${stat(exporterWall)}`);
    say(`    exporter CPU    ${stat(exporterCpu)}   (10 ms ticks)`);
    say(`    server CPU      ${stat(exporterServerCpu)}   (lower bound: backends that exited during the scrape are missed)`);
    say(`  exporter scrape / pgvigil full cycle, wall, per pair: median ${median(ratios).toFixed(1)}x (${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)}x)`);
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
