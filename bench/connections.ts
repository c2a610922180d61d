/**
 * Connections on a crowded server (issue #24): a PostgreSQL 18 (harness) with max_connections =
 * 100 and BENCH_DATABASES databases (default 1,000) of 20 tables each, copied from template1, and
 * an application holding 80 sessions as an ordinary role, closing one and opening another every
 * 100 ms. Side by side on that server:
 *
 * - pgvigil's poll scheduler, every collector, the default budget (3 connections, 5 slots left
 *   free), as a role with only pg_monitor. On its own timers: when each database's tables were
 *   first sampled (all within two pg_stat_user_tables intervals, 30 s?). Then BENCH_RUNS full
 *   cycles (every collector on an interval up to a minute) driven by runOnce: wall time, pgvigil's
 *   CPU (this process) and the server's CPU per cycle.
 * - prometheus-postgres-exporter 0.11.1 with --auto-discover-databases and the example per-table
 *   queries, as another pg_monitor role: BENCH_RUNS scrapes, wall time, its CPU and the server's
 *   per scrape, the databases whose tables a scrape reports.
 *
 * For each: its peak sessions (pg_stat_activity every 50 ms, from a superuser session opened
 * before), the application's refused connects, and the connections the server's log says it
 * refused for want of a slot. Ratios exporter / pgvigil. A scrape that takes longer than
 * BENCH_SCRAPE_TIMEOUT_S (default 120) is reported as such. BENCH_DATABASES=100 gives a run of a
 * minute or two.
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
import { envNumber, median } from './lib/measure.js';
import { cpuSecondsOf, exporterMissing, startExporter } from './lib/postgres-exporter.js';
import { serverCpuSeconds } from './lib/server-cpu.js';
import type { Benchmark } from './run.js';

const MAX_CONNECTIONS = 100;
const APP_SESSIONS = 80;
const TABLES_PER_DATABASE = 20;
const CREATE_WORKERS = 4;
const PGVIGIL_ROLE = 'pgvigil_monitor';
const EXPORTER_ROLE = 'exporter_monitor';
const APP_ROLE = 'app';
const USER_TABLES_INTERVAL_MS = createCollectors().find((c) => c.name === 'pg_stat_user_tables')!.intervalMs;
const FULL_CYCLE_MAX_INTERVAL_MS = 60_000;

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

const stat = (values: number[], unit = 'ms'): string =>
  `${median(values).toFixed(0)} ${unit} (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Databases of TABLES_PER_DATABASE small tables, copied from template1 by a few sessions at once. */
async function makeDatabases(server: PgServer, count: number): Promise<string[]> {
  await server.query(`
    DO $$ BEGIN
      FOR i IN 1..${TABLES_PER_DATABASE} LOOP
        EXECUTE format('CREATE TABLE public.t_%s (id int PRIMARY KEY, v text)', i);
        EXECUTE format('INSERT INTO public.t_%s SELECT g, md5(g::text) FROM generate_series(1, 10) g', i);
      END LOOP;
    END $$`, [], 'template1');
  const names = Array.from({ length: count }, (_, i) => `bench_${String(i + 1).padStart(4, '0')}`);
  let next = 0;
  await Promise.all(Array.from({ length: CREATE_WORKERS }, async () => {
    const client = new pg.Client({ connectionString: server.dsn() });
    await client.connect();
    try {
      while (next < names.length) await client.query(`CREATE DATABASE ${names[next++]!}`);
    } finally {
      await client.end();
    }
  }));
  return names;
}

/** The application: APP_SESSIONS sessions held, one closed and another opened every 100 ms. */
class Application {
  private sessions: pg.Client[] = [];
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  attempts = 0;
  refused = 0;

  constructor(private readonly server: PgServer) {}

  async start(): Promise<void> {
    this.attempts = 0;
    this.refused = 0;
    this.sessions = (await Promise.all(Array.from({ length: APP_SESSIONS }, () => this.open()))).filter((c): c is pg.Client => c !== null);
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        await sleep(100);
        const old = this.sessions.shift();
        await old?.end();
        const fresh = await this.open();
        if (fresh) this.sessions.push(fresh);
      }
    })();
  }

  async stop(): Promise<{ attempts: number; refused: number }> {
    this.running = false;
    await this.loop;
    await Promise.all(this.sessions.splice(0).map((c) => c.end()));
    return { attempts: this.attempts, refused: this.refused };
  }

  private async open(): Promise<pg.Client | null> {
    this.attempts += 1;
    const client = new pg.Client({ host: this.server.host, port: this.server.port, user: APP_ROLE, database: 'postgres', application_name: 'app' });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return client;
    } catch {
      this.refused += 1;
      return null;
    }
  }
}

/** Peak client sessions per role, from pg_stat_activity every 50 ms, on a superuser session opened before. */
class SessionSampler {
  private readonly peaks = new Map<string, number>();
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly observer: pg.Client) {}

  start(): void {
    this.peaks.clear();
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const { rows } = await this.observer.query<{ usename: string; n: number }>(
          "SELECT usename, count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename IS NOT NULL GROUP BY usename");
        for (const { usename, n } of rows) this.peaks.set(usename, Math.max(this.peaks.get(usename) ?? 0, n));
        await sleep(50);
      }
    })();
  }

  async stop(): Promise<ReadonlyMap<string, number>> {
    this.running = false;
    await this.loop;
    return this.peaks;
  }
}

/**
 * Connections the server refused for want of a slot, from its log so far: "sorry, too many
 * clients already", and "remaining connection slots are reserved ..." for ordinary roles.
 */
function refusedInLog(server: PgServer): number {
  return server.logFiles().reduce((sum, file) => sum + (readFileSync(file, 'utf8').match(/too many clients already|remaining connection slots are reserved/g)?.length ?? 0), 0);
}

interface Phase {
  peakSessions: number;
  appAttempts: number;
  appRefused: number;
  refusedInLog: number;
}

/** Runs work with the application and the sampler around it. */
async function phase(server: PgServer, observer: pg.Client, role: string, work: () => Promise<void>): Promise<Phase> {
  const app = new Application(server);
  const sampler = new SessionSampler(observer);
  const refusedBefore = refusedInLog(server);
  sampler.start();
  await app.start();
  const finish = async (): Promise<Phase> => {
    const { attempts, refused } = await app.stop();
    const peaks = await sampler.stop();
    return { peakSessions: peaks.get(role) ?? 0, appAttempts: attempts, appRefused: refused, refusedInLog: refusedInLog(server) - refusedBefore };
  };
  try {
    await work();
  } catch (err) {
    await finish();
    throw err;
  }
  return finish();
}

const describePhase = (p: Phase): string =>
  `peak sessions ${p.peakSessions}; the application's connects refused: ${p.appRefused} of ${p.appAttempts}; connections the server refused for want of a slot (its log): ${p.refusedInLog}`;

export async function runConnectionsBench(): Promise<void> {
  const missing = exporterMissing();
  if (missing) return say(`skipped: ${missing}`);
  const databases = envNumber('BENCH_DATABASES', 1_000);
  const runs = envNumber('BENCH_RUNS', 3);
  const scrapeTimeoutMs = envNumber('BENCH_SCRAPE_TIMEOUT_S', 120) * 1000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-connections-'));
  let exporter: ChildProcess | null = null;
  let scheduler: PollScheduler | null = null;
  let observer: pg.Client | null = null;
  try {
    say(`PostgreSQL 18 (harness), max_connections = ${MAX_CONNECTIONS}, ${databases} databases of ${TABLES_PER_DATABASE} tables...`);
    const server = await startPrimary({ version: 18, name: 'bench-connections', settings: { max_connections: MAX_CONNECTIONS } });
    const setupStarted = performance.now();
    const names = await makeDatabases(server, databases);
    for (const role of [PGVIGIL_ROLE, EXPORTER_ROLE]) await server.query(`CREATE ROLE ${role} LOGIN; GRANT pg_monitor TO ${role}`);
    await server.query(`CREATE ROLE ${APP_ROLE} LOGIN`);
    say(`  made in ${((performance.now() - setupStarted) / 1000).toFixed(0)} s`);
    observer = new pg.Client({ connectionString: server.dsn() });
    await observer.connect();
    const logger = pino({ level: 'silent' });
    const collectors = createCollectors();
    const inFullCycle = (c: Collector): boolean => c.intervalMs <= FULL_CYCLE_MAX_INTERVAL_MS;
    const pgvigilDsn = `postgres://${PGVIGIL_ROLE}@${server.host}:${server.port}/postgres`;

    // pgvigil on its own timers: when was each database's tables first sampled?
    const firstSampledMs = new Map<string, number>();
    let startedMs = 0;
    const onTimers = await phase(server, observer, PGVIGIL_ROLE, async () => {
      scheduler = new PollScheduler({
        target: 'bench', connection: pgvigilDsn, collectors, clock: systemClock, logger,
        writer: { enqueue: ({ samples }) => {
          for (const s of samples) {
            if (s.name.startsWith('pg_stat_user_tables_') && s.labels.relname !== undefined && !firstSampledMs.has(s.labels.datname ?? '')) {
              firstSampledMs.set(s.labels.datname ?? '', performance.now() - startedMs);
            }
          }
        } },
      });
      startedMs = performance.now();
      await scheduler.start();
      const deadline = startedMs + 2 * USER_TABLES_INTERVAL_MS;
      while (firstSampledMs.size < names.length && performance.now() < deadline) await sleep(250);
    });
    const onTimersStats = (scheduler as PollScheduler | null)?.connectionStats;
    await (scheduler as PollScheduler | null)?.stop();

    // Full cycles, driven one after the other: their cost.
    const cycleWall: number[] = [];
    const cycleCpu: number[] = [];
    const cycleServerCpu: number[] = [];
    scheduler = new PollScheduler({
      target: 'bench', connection: pgvigilDsn, collectors: createCollectors(), clock: systemClock, logger, writer: { enqueue: () => undefined },
      // Timers far away: the bench drives every cycle itself with runOnce().
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 3_600_000])), probeIntervalMs: 3_600_000,
    });
    const cycles = await phase(server, observer, PGVIGIL_ROLE, async () => {
      await scheduler!.start();
      await scheduler!.whenIdle();
      for (let i = 0; i < runs; i++) {
        const serverBefore = serverCpuSeconds(server.dataDir) ?? 0;
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        await scheduler!.runOnce(inFullCycle);
        cycleWall.push(performance.now() - started);
        const used = process.cpuUsage(cpuBefore);
        cycleCpu.push((used.user + used.system) / 1000);
        cycleServerCpu.push(((serverCpuSeconds(server.dataDir) ?? 0) - serverBefore) * 1000);
      }
    });
    const cycleStats = scheduler.connectionStats;
    await scheduler.stop();
    scheduler = null;

    const sampledInTwo = [...firstSampledMs.values()].filter((ms) => ms <= 2 * USER_TABLES_INTERVAL_MS).length;
    say(`application: ${APP_SESSIONS} sessions as role ${APP_ROLE}, one closed and another opened every 100 ms`);
    say(`pgvigil (default budget: collectors.max_connections 3, min_free_connections 5), on its own timers for up to 2 x ${USER_TABLES_INTERVAL_MS / 1000} s:`);
    say(`  databases whose tables were sampled within two intervals: ${sampledInTwo} of ${names.length}` +
      (firstSampledMs.size > 0 ? `; the last at ${(Math.max(...firstSampledMs.values()) / 1000).toFixed(1)} s` : ''));
    say(`  ${describePhase(onTimers)}; the budget's own peak ${onTimersStats?.peakOpen}, connects ${onTimersStats?.connects}, skipped ${onTimersStats?.skippedConnects}`);
    say(`pgvigil, ${runs} full cycles (every collector on an interval up to ${FULL_CYCLE_MAX_INTERVAL_MS / 1000} s), median (range):`);
    say(`  wall ${stat(cycleWall)}; pgvigil CPU ${stat(cycleCpu)}; server CPU ${stat(cycleServerCpu)} (10 ms ticks, exited backends included)`);
    say(`  ${describePhase(cycles)}; connects ${cycleStats.connects} (a connect per database visit: ${databases} databases, budget ${cycleStats.peakOpen} at most)`);

    // The exporter, on the same server, as another pg_monitor role.
    const scrapeWall: number[] = [];
    const scrapeCpu: number[] = [];
    const scrapeServerCpu: number[] = [];
    let scrapedDatabases = 0;
    let series = 0;
    let timedOut = 0;
    const scrapes = await phase(server, observer, EXPORTER_ROLE, async () => {
      const started = await startExporter(`postgresql://${EXPORTER_ROLE}@${server.host}:${server.port}/postgres?sslmode=disable`, dir);
      exporter = started.proc;
      for (let i = 0; i < runs; i++) {
        const serverBefore = serverCpuSeconds(server.dataDir) ?? 0;
        const cpuBefore = cpuSecondsOf([started.proc.pid!]);
        const scrapeStarted = performance.now();
        const text = await fetch(started.url, { signal: AbortSignal.timeout(scrapeTimeoutMs) }).then((r) => r.text()).catch(() => null);
        scrapeWall.push(performance.now() - scrapeStarted);
        scrapeCpu.push((cpuSecondsOf([started.proc.pid!]) - cpuBefore) * 1000);
        scrapeServerCpu.push(((serverCpuSeconds(server.dataDir) ?? 0) - serverBefore) * 1000);
        if (text === null) {
          timedOut += 1;
          continue;
        }
        const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
        series = lines.length;
        scrapedDatabases = new Set(lines.filter((l) => l.startsWith('pg_stat_user_tables_')).map((l) => /datname="([^"]*)"/.exec(l)?.[1])).size;
      }
    });

    say(`prometheus-postgres-exporter 0.11.1 (--auto-discover-databases, example per-table queries), ${runs} scrapes` +
      `${timedOut > 0 ? ` (${timedOut} given up after ${scrapeTimeoutMs / 1000} s: counted at that time)` : ''}:`);
    say(`  wall ${stat(scrapeWall)}; exporter CPU ${stat(scrapeCpu)}; server CPU ${stat(scrapeServerCpu)}`);
    say(`  ${describePhase(scrapes)}; the last scrape: ${series} series, tables of ${scrapedDatabases} of ${databases} databases`);
    const ratio = (a: number[], b: number[]): string => (median(a) / median(b)).toFixed(1);
    say(`exporter / pgvigil, medians: wall ${ratio(scrapeWall, cycleWall)}x, own CPU ${ratio(scrapeCpu, cycleCpu)}x, server CPU ${ratio(scrapeServerCpu, cycleServerCpu)}x; ` +
      `peak sessions ${scrapes.peakSessions} vs ${Math.max(onTimers.peakSessions, cycles.peakSessions)}; application refused ${scrapes.appRefused} vs ${onTimers.appRefused + cycles.appRefused}`);
  } finally {
    (exporter as ChildProcess | null)?.kill('SIGTERM');
    await (scheduler as PollScheduler | null)?.stop();
    await (observer as pg.Client | null)?.end();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'pgvigil within its connection budget on a server of max_connections = 100 and 1,000 databases, an application holding 80 sessions, vs prometheus-postgres-exporter',
  run: () => runConnectionsBench(),
};
