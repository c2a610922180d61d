/**
 * pgvigil's footprint on a server with many databases and tables, seen from the server: a real
 * PostgreSQL 18 with `databases` databases of `tablesPerDatabase` tables each (one made with a DO
 * block, the others copied from it as templates), watched by `pgvigil run` (built, dist/) as a
 * role with only pg_monitor, every collector polled every intervalMs for runMs.
 *
 * Read from the server: pgvigil's sessions in pg_stat_activity every 200 ms (the most at once,
 * in all and per database; their application_name); the time each of its queries took there
 * (log_min_duration_statement = 0 for its role only: the server's "duration: ... execute" lines),
 * grouped by collector. Read from the connections' startup packets (startup-recorder.ts, a relay
 * between pgvigil and the server): the session settings each asked for. Read from pgvigil: RSS
 * (/proc), the size of /metrics, and each collector's run time over all databases
 * (pgvigil_collector_last_duration_seconds).
 *
 * Used by `npm run bench -- scale` (10 x 5,000) and test/integration/scale.test.ts (10 x 200).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { createCollectors, type Collector } from '../../src/collectors/index.js';
import type { Row } from '../../src/collectors/collector.js';
import { spawnDaemon, type DaemonExit } from '../../test/helpers/daemon-process.js';
import { startPrimary, type PgServer } from '../../test/helpers/pg-harness.js';
import { median } from './measure.js';
import { StartupRecorder } from './startup-recorder.js';

export interface ScaleOptions {
  databases: number;
  tablesPerDatabase: number;
  intervalMs: number;
  runMs: number;
  /** A directory for the config and the store; the caller removes it. */
  dir: string;
  say: (msg: string) => void;
}

export const POLL_ROLE = 'pgvigil_monitor';
const MAIN_DATABASE = 'postgres';

export interface QueryTimes {
  collector: string;
  calls: number;
  p50Ms: number;
  maxMs: number;
  totalMs: number;
}

export interface ScaleResult {
  databases: string[];
  setupSeconds: number;
  /** Most pgvigil sessions at once, in all and in each database. */
  maxConnections: number;
  maxConnectionsByDatabase: Record<string, number>;
  /** application_name of pgvigil's sessions, as pg_stat_activity showed them (distinct). */
  applicationNames: string[];
  /** The startup parameters of every connection pgvigil opened. */
  startups: Array<Record<string, string>>;
  /** Server-side execute time per collector (scheduler queries under "poll scheduler: ..."). */
  queryTimes: QueryTimes[];
  /** Databases in which pgvigil ran at least one query. */
  databasesQueried: string[];
  /** Each collector's run over all databases, from pgvigil's own gauge: median and max over scrapes, in ms. */
  collectorRunMs: Array<{ collector: string; medianMs: number; maxMs: number }>;
  rssBytes: number;
  metricsBytes: number;
  metricsSeries: number;
  daemonExit: DaemonExit;
  daemonOutput: string;
}

export async function runScale(options: ScaleOptions): Promise<ScaleResult> {
  const { say } = options;
  const server = await startPrimary({
    version: 18, name: 'scale',
    settings: { max_connections: 200, max_locks_per_transaction: 256 },
  });
  const setupStarted = Date.now();
  const databases = await makeDatabases(server, options.databases, options.tablesPerDatabase);
  const setupSeconds = (Date.now() - setupStarted) / 1000;
  say(`scale: ${databases.length} databases x ${options.tablesPerDatabase} tables made in ${setupSeconds.toFixed(0)} s`);
  await server.query(`CREATE ROLE ${POLL_ROLE} LOGIN IN ROLE pg_monitor`);
  // Every statement of pgvigil's role, and only of it, is logged with its duration.
  await server.query(`ALTER ROLE ${POLL_ROLE} SET log_min_duration_statement = 0`);
  const logFilesBefore = new Set(server.logFiles());
  const logStart = new Map([...logFilesBefore].map((f) => [f, readFileSync(f).length]));

  const recorder = new StartupRecorder({ host: server.host, port: server.port });
  const relayPort = await recorder.listen();
  const daemon = await spawnDaemon(['--config', writeConfig(options, `postgresql://${POLL_ROLE}@127.0.0.1:${relayPort}/${MAIN_DATABASE}`)]);
  try {
    await daemon.waitForLog(/^serving \/metrics/, 120_000);
    const pid = daemon.child.pid!;
    const byDatabase: Record<string, number> = {};
    const applicationNames = new Set<string>();
    let maxConnections = 0;
    const runs = new Map<string, number[]>();
    let metricsText = '';
    const started = Date.now();
    let nextScrape = started;
    while (Date.now() - started < options.runMs) {
      const rows = await server.query(
        'SELECT datname, application_name, count(*)::int AS n FROM pg_stat_activity WHERE usename = $1 GROUP BY 1, 2', [POLL_ROLE],
      ) as Array<{ datname: string; application_name: string; n: number }>;
      maxConnections = Math.max(maxConnections, rows.reduce((sum, r) => sum + r.n, 0));
      for (const r of rows) {
        applicationNames.add(r.application_name);
        byDatabase[r.datname] = Math.max(byDatabase[r.datname] ?? 0, rows.filter((x) => x.datname === r.datname).reduce((s, x) => s + x.n, 0));
      }
      if (Date.now() >= nextScrape) {
        metricsText = await daemon.metrics();
        for (const [collector, seconds] of lastDurations(metricsText)) runs.set(collector, [...(runs.get(collector) ?? []), seconds * 1000]);
        nextScrape += options.intervalMs;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const rssBytes = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;
    daemon.child.kill('SIGTERM');
    const daemonExit = await daemon.exit;
    await recorder.close();
    const executes = readExecutes(server, logStart);
    return {
      databases,
      setupSeconds,
      maxConnections,
      maxConnectionsByDatabase: byDatabase,
      applicationNames: [...applicationNames].sort(),
      startups: recorder.startups,
      queryTimes: timesByCollector(executes, await collectorStatements()),
      databasesQueried: [...new Set(executes.map((e) => e.database))].sort(),
      collectorRunMs: [...runs].map(([collector, ms]) => ({ collector, medianMs: median(ms), maxMs: Math.max(...ms) }))
        .sort((a, b) => b.medianMs - a.medianMs),
      rssBytes,
      metricsBytes: Buffer.byteLength(metricsText),
      metricsSeries: metricsText.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length,
      daemonExit,
      daemonOutput: daemonExit.code === 0 ? '' : daemon.output().slice(-4000),
    };
  } finally {
    daemon.child.kill('SIGKILL');
    await recorder.close().catch(() => undefined);
  }
}

/** The first database by a DO block; the rest copied from it (a file copy, seconds instead of minutes). */
async function makeDatabases(server: PgServer, count: number, tables: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `scale_db_${i + 1}`);
  await server.query(`CREATE DATABASE ${names[0]}`);
  await server.query(`
    DO $$ BEGIN
      FOR i IN 1..${tables} LOOP
        EXECUTE format('CREATE TABLE t_%s (id int PRIMARY KEY, v text)', i);
      END LOOP;
    END $$`, [], names[0]);
  await server.query(`INSERT INTO t_1 SELECT g, md5(g::text) FROM generate_series(1, 1000) g`, [], names[0]);
  for (const name of names.slice(1)) await server.query(`CREATE DATABASE ${name} TEMPLATE ${names[0]} STRATEGY FILE_COPY`);
  return names;
}

function writeConfig(options: ScaleOptions, dsn: string): string {
  const file = path.join(options.dir, 'pgvigil.yaml');
  writeFileSync(file, stringify({
    db: path.join(options.dir, 'pgvigil.db'),
    targets: [{ name: 'scale', dsn }],
    collectors: { interval_ms: Object.fromEntries(createCollectors().map((c) => [c.name, options.intervalMs])) },
  }));
  return file;
}

function lastDurations(metrics: string): Array<[string, number]> {
  const found: Array<[string, number]> = [];
  for (const m of metrics.matchAll(/^pgvigil_collector_last_duration_seconds\{[^}]*collector="([^"]+)"[^}]*\} (\S+)$/gm)) found.push([m[1]!, Number(m[2])]);
  return found;
}

interface Execute {
  database: string;
  ms: number;
  sql: string;
}

const ENTRY_START = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC \[\d+\] /;
const EXECUTE = new RegExp(`^\\S+ \\S+ UTC \\[\\d+\\] ${POLL_ROLE}@(\\S*) LOG: {2}duration: ([\\d.]+) ms {2}execute [^:]*: ([\\s\\S]*)$`);

/** The role's "duration: ... execute" entries written since logStart (file -> byte offset; new files from 0). */
function readExecutes(server: PgServer, logStart: ReadonlyMap<string, number>): Execute[] {
  const found: Execute[] = [];
  for (const file of server.logFiles()) {
    const text = readFileSync(file).subarray(logStart.get(file) ?? 0).toString('utf8');
    let entry = '';
    const flush = (): void => {
      const m = EXECUTE.exec(entry);
      if (m) found.push({ database: m[1]!, ms: Number(m[2]), sql: m[3]! });
    };
    for (const line of text.split('\n')) {
      if (ENTRY_START.test(line)) {
        flush();
        entry = line;
      } else if (line.startsWith('\t')) entry += `\n${line.slice(1)}`;
    }
    flush();
  }
  return found;
}

const normalize = (sql: string): string => sql.replace(/\s+/g, ' ').trim();

/** Each collector's SQL on PostgreSQL 18 (normalised), by running collect() on no rows. */
async function collectorStatements(): Promise<Map<string, string>> {
  const server = { versionNum: 180000, version: '18', inRecovery: false, startedAtMs: 0 };
  const owner = new Map<string, string>();
  const record = (c: Collector) => async (sql: string): Promise<Row[]> => {
    owner.set(normalize(sql), c.name);
    return [];
  };
  for (const c of createCollectors().filter((x) => x.supports(server))) {
    if (c.activeDatabasesSql) owner.set(normalize(c.activeDatabasesSql(server)), c.name);
    await c.collect({ target: 'scale', server, database: MAIN_DATABASE, nowMs: 0, query: record(c) }).catch(() => undefined);
  }
  return owner;
}

function timesByCollector(executes: readonly Execute[], owner: ReadonlyMap<string, string>): QueryTimes[] {
  const groups = new Map<string, number[]>();
  for (const e of executes) {
    const sql = normalize(e.sql);
    const name = owner.get(sql) ?? `poll scheduler: ${sql.slice(0, 60)}`;
    groups.set(name, [...(groups.get(name) ?? []), e.ms]);
  }
  return [...groups].map(([collector, ms]) => ({
    collector, calls: ms.length, p50Ms: median(ms), maxMs: Math.max(...ms), totalMs: ms.reduce((a, b) => a + b, 0),
  })).sort((a, b) => b.totalMs - a.totalMs);
}

/** The figures as the report prints them. */
export function describeScale(r: ScaleResult, options: Pick<ScaleOptions, 'tablesPerDatabase' | 'intervalMs' | 'runMs'>): string[] {
  const perDb = Object.entries(r.maxConnectionsByDatabase).sort(([a], [b]) => a.localeCompare(b)).map(([db, n]) => `${db} ${n}`).join(', ');
  return [
    `${r.databases.length} databases x ${options.tablesPerDatabase} tables (made in ${r.setupSeconds.toFixed(0)} s); every collector every ${options.intervalMs / 1000} s for ${options.runMs / 1000} s`,
    `pgvigil sessions on the server (pg_stat_activity every 200 ms): at most ${r.maxConnections} at once; per database at most: ${perDb}`,
    `application_name of its sessions: ${r.applicationNames.join(', ')}; connections opened: ${r.startups.length}, their startup settings: ` +
      [...new Set(r.startups.map((s) => `application_name=${s.application_name} statement_timeout=${s.statement_timeout} lock_timeout=${s.lock_timeout}`))].join(' | '),
    `queries run in ${r.databasesQueried.length} databases; server-side execute time per collector (log_min_duration_statement = 0 for its role):`,
    ...r.queryTimes.map((q) => `  ${q.collector.padEnd(34)} ${String(q.calls).padStart(5)} calls  p50 ${q.p50Ms.toFixed(2).padStart(8)} ms  max ${q.maxMs.toFixed(2).padStart(8)} ms  total ${q.totalMs.toFixed(0).padStart(6)} ms`),
    'each collector run over all databases, from pgvigil (pgvigil_collector_last_duration_seconds), median / max:',
    ...r.collectorRunMs.map((c) => `  ${c.collector.padEnd(34)} ${c.medianMs.toFixed(1).padStart(8)} / ${c.maxMs.toFixed(1).padStart(8)} ms`),
    `  sum of the medians (every collector due at once, one after another): ${r.collectorRunMs.reduce((s, c) => s + c.medianMs, 0).toFixed(0)} ms`,
    `pgvigil RSS ${(r.rssBytes / 1_048_576).toFixed(1)} MB; /metrics ${(r.metricsBytes / 1024).toFixed(0)} KiB, ${r.metricsSeries} series`,
  ];
}
