/**
 * The soak: `pgvigil run` (built, dist/) watching a busy PostgreSQL 18 for a while, sampled from
 * outside. The server runs pgbench (or its stand-in) with every statement logged, plus a loop of
 * lock waits, lock and statement timeouts, deadlocks, temp files and checkpoints, and autovacuum
 * on a churned table every second or so (load.ts); the daemon tails that log and polls every
 * collector every POLL_INTERVAL_MS, with a retention short enough that it prunes during the run.
 *
 * Sampled every sampleEveryMs: the daemon's RSS (/proc/<pid>/status) and open descriptors
 * (/proc/<pid>/fd), and from its /metrics the heap in use, the event-loop delay since the
 * previous sample (p99; this is the only scraper, so each window is one sample's), the store's
 * size and the rows retention deleted. At the end, the oldest event left in the store.
 *
 * Used by `npm run bench -- soak` (SOAK_MINUTES, default 60), which judges the trends
 * (soak-figures.ts, judgeSoak), and by test/integration/soak.test.ts (half a minute), which asserts
 * only what so short a run can show: a clean exit, retention bounding the store, no descriptor leak.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { createCollectors } from '../../src/collectors/index.js';
import { openStore } from '../../src/store/open-store.js';
import { spawnDaemon, type DaemonExit } from '../../test/helpers/daemon-process.js';
import { parseExposition } from '../../test/helpers/exposition.js';
import { startPrimary, type PgServer } from '../../test/helpers/pg-harness.js';
import { driveLoad, prepareLoad, type LoadTarget } from './load.js';
import { describeTrend, trendOf, type Point, type SoakFigures, type Trend } from './soak-figures.js';
import { median } from './measure.js';

export interface SoakOptions {
  minutes: number;
  /** How often the figures are read. */
  sampleEveryMs: number;
  /** retention.max_age: data older than this is deleted at each retention run. */
  retentionMs: number;
  /** retention.interval_ms. */
  retentionEveryMs: number;
  /** pgbench's rate; every statement is logged (log_min_duration_statement = 0). */
  tps: number;
  /** A directory for the config and the store; the caller removes it. */
  dir: string;
  say: (msg: string) => void;
}

/** Every collector polled this often, whatever its default. */
export const POLL_INTERVAL_MS = 2_000;

export interface SoakSample {
  /** Seconds since the daemon was up. */
  t: number;
  rssBytes: number;
  openFds: number;
  heapUsedBytes: number;
  /** p99 of the event-loop delay since the previous sample, in seconds; null for an empty window. */
  lagP99Seconds: number | null;
  storeBytes: number;
  retentionDeletedRows: number;
  logLinesRead: number;
  /** The daemon's CPU time so far (user + system), in seconds. */
  cpuSeconds: number;
}

export interface SoakResult {
  samples: SoakSample[];
  rss: Trend;
  openFds: Trend;
  heapUsed: Trend;
  storeSize: Trend;
  lagP99: { median: number; max: number; over100ms: number; windows: number };
  /** Age of the oldest event in the store at the end, in ms. */
  oldestEventAgeMs: number;
  retentionDeletedRows: number;
  logLinesRead: number;
  /** The daemon's share of one core over the run, and the machine's load average at the end. */
  cpuShare: number;
  loadAverage: number;
  daemonExit: DaemonExit;
  /** The daemon's output when it did not exit 0 on SIGTERM. */
  daemonOutput: string;
}

const SERVER_SETTINGS = {
  log_min_duration_statement: 0,
  log_autovacuum_min_duration: 0,
  autovacuum_naptime: '1s',
  log_lock_waits: true,
  deadlock_timeout: '100ms',
  log_checkpoints: true,
  checkpoint_timeout: '30s',
  log_temp_files: 0,
  log_connections: true,
  log_disconnections: true,
};

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const { say } = options;
  const server = await startPrimary({ version: 18, name: 'soak', settings: SERVER_SETTINGS });
  const target: LoadTarget = { host: server.host, port: server.port, user: 'postgres', database: 'postgres' };
  say('soak: preparing the load tables');
  await prepareLoad(target);
  const seconds = Math.round(options.minutes * 60);
  const load = driveLoad(target, seconds + 15, say, { tps: options.tps, prepared: true });
  // A failing load must not go unhandled while the sampling loop runs; it is awaited below.
  load.catch(() => undefined);
  const daemon = await spawnDaemon(['--config', writeConfig(server, options)]);
  try {
    await daemon.waitForLog(/^serving \/metrics/, 120_000);
    const pid = daemon.child.pid!;
    const started = Date.now();
    const samples: SoakSample[] = [];
    say(`soak: pgvigil run (pid ${pid}) for ${options.minutes} min, sampled every ${options.sampleEveryMs / 1000} s`);
    await scrape(daemon.metrics);
    while (Date.now() - started < seconds * 1000) {
      await sleep(options.sampleEveryMs);
      if (daemon.child.exitCode !== null) throw new Error(`pgvigil exited ${daemon.child.exitCode} during the soak:\n${daemon.output().slice(-4000)}`);
      const metrics = await scrape(daemon.metrics);
      const sample: SoakSample = {
        t: (Date.now() - started) / 1000,
        rssBytes: rssOf(pid),
        openFds: readdirSync(`/proc/${pid}/fd`).length,
        heapUsedBytes: metrics.get('nodejs_heap_size_used_bytes') ?? NaN,
        lagP99Seconds: metrics.get('nodejs_eventloop_lag_p99_seconds') ?? null,
        storeBytes: metrics.get('pgvigil_store_size_bytes') ?? NaN,
        retentionDeletedRows: metrics.get('pgvigil_retention_deleted_rows_total') ?? 0,
        logLinesRead: sumOf(metrics, 'pgvigil_log_lines_read_total'),
        cpuSeconds: metrics.get('process_cpu_seconds_total') ?? NaN,
      };
      samples.push(sample);
      if (samples.length % 10 === 0) say(`  ${progressLine(sample)}`);
    }
    const oldestEventAgeMs = oldestEventAge(path.join(options.dir, 'pgvigil.db'));
    daemon.child.kill('SIGTERM');
    const daemonExit = await daemon.exit;
    await load;
    return summarise(samples, oldestEventAgeMs, daemonExit, daemonExit.code === 0 ? '' : daemon.output().slice(-4000));
  } finally {
    daemon.child.kill('SIGKILL');
  }
}

function writeConfig(server: PgServer, options: SoakOptions): string {
  const file = path.join(options.dir, 'pgvigil.yaml');
  writeFileSync(file, stringify({
    db: path.join(options.dir, 'pgvigil.db'),
    targets: [{ name: 'soak', dsn: server.dsn(), log: { path: server.logDir, start_at: 'beginning' } }],
    collectors: { interval_ms: Object.fromEntries(createCollectors().map((c) => [c.name, POLL_INTERVAL_MS])) },
    retention: { max_age_days: options.retentionMs / 86_400_000, interval_ms: options.retentionEveryMs },
  }));
  return file;
}

function summarise(samples: SoakSample[], oldestEventAgeMs: number, daemonExit: DaemonExit, daemonOutput: string): SoakResult {
  const series = (pick: (s: SoakSample) => number): Point[] => samples.map((s) => ({ t: s.t, value: pick(s) }));
  const lags = samples.flatMap((s) => (s.lagP99Seconds === null ? [] : [s.lagP99Seconds]));
  const last = samples.at(-1);
  return {
    samples,
    rss: trendOf(series((s) => s.rssBytes)),
    openFds: trendOf(series((s) => s.openFds)),
    heapUsed: trendOf(series((s) => s.heapUsedBytes)),
    storeSize: trendOf(series((s) => s.storeBytes)),
    lagP99: { median: median(lags), max: Math.max(...lags), over100ms: lags.filter((l) => l >= 0.1).length, windows: lags.length },
    oldestEventAgeMs,
    retentionDeletedRows: last?.retentionDeletedRows ?? 0,
    logLinesRead: last?.logLinesRead ?? 0,
    cpuShare: samples.length < 2 ? NaN : (last!.cpuSeconds - samples[0]!.cpuSeconds) / (last!.t - samples[0]!.t),
    loadAverage: os.loadavg()[0]!,
    daemonExit,
    daemonOutput,
  };
}

const MB = { name: 'MB', scale: 1_048_576 };

/** The figures judgeSoak reads. */
export function soakFigures(result: SoakResult): SoakFigures {
  const { rss, heapUsed, openFds, storeSize, loadAverage } = result;
  return { rss, heapUsed, openFds, storeSize, lagP99Median: result.lagP99.median, loadAverage, cores: os.cpus().length };
}

/** The figures as the report prints them, one per line. */
export function describeSoak(result: SoakResult, minutes: number): string[] {
  const lag = result.lagP99;
  return [
    `soak of ${minutes} min, ${result.samples.length} samples; ${result.logLinesRead} log lines read, ${result.retentionDeletedRows} rows deleted by retention`,
    describeTrend('RSS', result.rss, MB),
    describeTrend('heap used', result.heapUsed, MB),
    describeTrend('open fds', result.openFds, { name: 'fds', scale: 1, digits: 0 }),
    describeTrend('store size', result.storeSize, MB),
    `event-loop delay p99 per ${result.samples.length > 1 ? Math.round(result.samples[1]!.t - result.samples[0]!.t) : '?'} s window: median ${(lag.median * 1000).toFixed(1)} ms,` +
      ` max ${(lag.max * 1000).toFixed(1)} ms, ${lag.over100ms} of ${lag.windows} windows at 100 ms or more`,
    `pgvigil's CPU: ${(result.cpuShare * 100).toFixed(0)}% of one core over the run; the machine's load average at the end ${result.loadAverage.toFixed(1)} (${os.cpus().length} cores)`,
    `oldest event in the store at the end: ${(result.oldestEventAgeMs / 1000).toFixed(0)} s old`,
  ];
}

function progressLine(s: SoakSample): string {
  return `t=${s.t.toFixed(0)} s rss ${(s.rssBytes / 1_048_576).toFixed(1)} MB, heap ${(s.heapUsedBytes / 1_048_576).toFixed(1)} MB, fds ${s.openFds},` +
    ` store ${(s.storeBytes / 1_048_576).toFixed(1)} MB, lag p99 ${s.lagP99Seconds === null ? '-' : (s.lagP99Seconds * 1000).toFixed(0)} ms, lines ${s.logLinesRead}`;
}

function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (kb === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb) * 1024;
}

/** /metrics as series -> value; throws when it does not answer. */
async function scrape(metrics: () => Promise<string>): Promise<Map<string, number>> {
  const text = await metrics();
  if (text === '') throw new Error('pgvigil did not answer /metrics');
  return parseExposition(text);
}

function sumOf(metrics: Map<string, number>, name: string): number {
  let total = 0;
  for (const [series, value] of metrics) if (series === name || series.startsWith(`${name}{`)) total += value;
  return total;
}

function oldestEventAge(store: string): number {
  const db = openStore(store, { readonly: true });
  try {
    const oldest = db.prepare('SELECT min(ts_ms) FROM events').pluck().get() as number | null;
    return oldest === null ? 0 : Date.now() - oldest;
  } finally {
    db.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
