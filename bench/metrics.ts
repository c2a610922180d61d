/**
 * /metrics speed: pgvigil's exposition against prometheus-postgres-exporter scraping the same
 * PostgreSQL 18 server (harness, BENCH_TABLES tables, default 500) in the same run.
 *
 * - The exporter runs with its defaults plus its example per-table queries (pg_stat_user_tables
 *   and pg_statio_user_tables from the Debian package's examples/queries.yaml), which is how
 *   shared/reference/benchmarks.md reached ~14,000 series.
 * - pgvigil's samples come from its real poll scheduler and collectors (max_tables_per_database
 *   = BENCH_TABLES), one round, through the real StoreWriter into the metrics cache; the HTTP app
 *   serves them on loopback. The poller is stopped before timing, so the numbers are the cost of a
 *   scrape, not of polling (a pgvigil scrape never queries PostgreSQL; the exporter's always does).
 * - Scrapes are timed by an external client, curl's time_total (as Prometheus would scrape:
 *   from another process), BENCH_RUNS rounds (default 30) after a warm-up, each scraping both
 *   servers twice, exporter and pgvigil alternated: once as Prometheus asks (its Accept header and
 *   Accept-Encoding: gzip, which both answer with gzip; curl keeps the body compressed, so the time
 *   is the server's and the wire's, the inflating being the scraper's) and once for the
 *   uncompressed body; medians, ranges, the per-pair ratio and the body bytes on the wire. The
 *   gzip bodies are inflated and checked against the identity ones. Beside them, the floor: a
 *   bare node:http server in this process sending pgvigil's bytes from one buffer, so what a
 *   pgvigil scrape costs beyond it is pgvigil's. pgvigil renders once per poll
 *   round and serves the cached bytes to every scrape until the next one (metrics.ts); the first
 *   scrape after a round pays the render, printed apart. Also: pgvigil's in-process render time,
 *   the cost of taking a poll round into the cache (first round, which creates every series, and
 *   a later one), and `promtool check metrics` on both expositions.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse, stringify } from 'yaml';
import { createCollectors } from '../src/collectors/index.js';
import { systemClock } from '../src/domain/clock.js';
import type { Sample } from '../src/domain/index.js';
import { buildHttpApp } from '../src/http/build-http-app.js';
import { HttpServer } from '../src/http/http-server.js';
import { Metrics } from '../src/http/metrics.js';
import { silentLogger } from '../src/lib/logger.js';
import { PollScheduler } from '../src/sources/poll-scheduler.js';
import { openStore } from '../src/store/open-store.js';
import { StoreQueries } from '../src/store/queries.js';
import { StoreWriter } from '../src/store/store-writer.js';
import { destroyAllServers, startPrimary, type PgServer } from '../test/helpers/pg-harness.js';
import { freePort, waitUntil } from '../test/helpers/pg-processes.js';
import { parseExposition } from '../test/helpers/exposition.js';
import { envNumber, median } from './lib/measure.js';
import type { Benchmark } from './run.js';

const CURL = '/usr/bin/curl';
const EXPORTER = '/usr/bin/prometheus-postgres-exporter';
const PROMTOOL = '/usr/bin/promtool';
const EXAMPLE_QUERIES = '/usr/share/doc/prometheus-postgres-exporter/examples/queries.yaml';
const PER_TABLE_QUERIES = ['pg_stat_user_tables', 'pg_statio_user_tables'];

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

const ms = (values: number[]): string => `${median(values).toFixed(1)} ms (${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)})`;
const seriesIn = (text: string): number => text.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;

/** Whether two scrapes hold the same series (their values may have moved between them). */
function sameSeries(text: string, reference: string): string {
  const got = [...parseExposition(text).keys()].sort();
  const want = [...parseExposition(reference).keys()].sort();
  return got.length === want.length && got.every((key, i) => key === want[i]) ? `the same ${got.length} series as identity` : `DIFFERENT series: ${got.length} vs ${want.length} in identity`;
}

/** Prometheus 2.42's scrape Accept header (scrape/scrape.go); it also sends Accept-Encoding: gzip. */
const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

/**
 * How a scrape asks: as Prometheus does (its Accept, Accept-Encoding: gzip; curl keeps the body
 * as it came, so the time is the server's and the wire's, not curl's inflating), or for the
 * uncompressed body (the same Accept, no Accept-Encoding).
 */
type ScrapeMode = 'gzip' | 'identity';

interface Scrape { ms: number; wireBytes: number }

/**
 * How the scraper holds its connection: `kept`, as Prometheus does (its HTTP client keeps a
 * connection per target between scrapes; fastify keeps an idle one 72 s, the exporter's Go server
 * longer), so one curl fetches the URL twice and the second, on the kept connection in a warm
 * client, is timed; or `new`, a curl started for the scrape, its first transfer timed (a new
 * connection, and curl's own first-transfer set-up: ~1 ms here even for a 4-byte body).
 */
type Connection = 'kept' | 'new';
const CONNECTIONS: Connection[] = ['kept', 'new'];

/** One scrape by curl: its time_total (connect to last byte), not its process start-up, and the body bytes it received. */
function curlScrape(url: string, bodyFile: string, mode: ScrapeMode, connection: Connection): Promise<Scrape> {
  const headers = ['-H', `Accept: ${PROMETHEUS_ACCEPT}`, ...(mode === 'gzip' ? ['-H', 'Accept-Encoding: gzip'] : [])];
  const fetches = connection === 'kept' ? ['--rate', '4/s', '-o', '/dev/null', url, '-o', bodyFile, url] : ['-o', bodyFile, url];
  return new Promise((resolve, reject) => {
    execFile(CURL, ['-sS', '--fail', ...headers, '-w', '%{time_total} %{size_download}\n', ...fetches], (err, stdout) => {
      if (err) return reject(new Error(`curl ${url}: ${err.message}`));
      const [seconds, bytes] = stdout.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number];
      resolve({ ms: seconds * 1000, wireBytes: bytes });
    });
  });
}

/** The body as text: inflated when the server sent gzip (both do for a gzip scrape; checked, not assumed). */
function bodyText(file: string): string {
  const body = readFileSync(file);
  return (body[0] === 0x1f && body[1] === 0x8b ? gunzipSync(body) : body).toString('utf8');
}

/** curl --compressed: curl's own Accept-Encoding, inflated by curl. Not spawnSync: pgvigil answers from this process. */
function curlCompressed(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(CURL, ['-sS', '--fail', '--compressed', url], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      if (err) return reject(new Error(`curl --compressed ${url}: ${err.message}`));
      resolve(stdout);
    });
  });
}

async function makeTables(server: PgServer, tables: number): Promise<void> {
  await server.query(`
    DO $$ BEGIN
      FOR i IN 1..${tables} LOOP
        EXECUTE format('CREATE TABLE bench_%s (id int PRIMARY KEY, v text)', i);
        EXECUTE format('INSERT INTO bench_%s SELECT g, md5(g::text) FROM generate_series(1, 20) g', i);
        EXECUTE format('UPDATE bench_%s SET v = v || ''x'' WHERE id %% 4 = 0', i);
        EXECUTE format('SELECT v FROM bench_%s WHERE id = 1', i);
      END LOOP;
    END $$`);
  // Fills last_vacuum / last_analyze: NULL timestamps are not exposed, and the exporter prints them.
  await server.query('VACUUM ANALYZE');
}

async function startExporter(server: PgServer, dir: string): Promise<{ url: string; proc: ChildProcess }> {
  const examples = parse(readFileSync(EXAMPLE_QUERIES, 'utf8')) as Record<string, unknown>;
  const queries = Object.fromEntries(PER_TABLE_QUERIES.map((name) => [name, examples[name]]));
  const queryFile = path.join(dir, 'queries.yaml');
  writeFileSync(queryFile, stringify(queries));
  const port = await freePort();
  const proc = spawn(EXPORTER, [`--web.listen-address=127.0.0.1:${port}`, `--extend.query-path=${queryFile}`, '--log.level=error'], {
    env: { PATH: process.env.PATH, DATA_SOURCE_NAME: `postgresql://postgres@${server.host}:${server.port}/postgres?sslmode=disable` },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}/metrics`;
  await waitUntil(async () => (await fetch(url)).ok, 20_000, 'postgres_exporter answering');
  return { url, proc };
}

/** pgvigil's output side on one round of real polling; returns the /metrics URL and a stopper. */
async function startPgvigil(server: PgServer, tables: number, dir: string): Promise<{ url: string; metrics: Metrics; samples: Sample[]; stop(): Promise<void> }> {
  const clock = systemClock;
  const db = openStore(path.join(dir, 'pgvigil.db'));
  const writer = new StoreWriter(db, clock, silentLogger());
  const collectors = createCollectors({ maxTablesPerDatabase: tables });
  const metrics = new Metrics({ clock, descriptions: collectors.flatMap((c) => c.metrics), maxSeries: 100_000 });
  metrics.attachWriter(writer);
  const samples: Sample[] = [];
  writer.onFlush((result) => samples.push(...result.samples));
  const scheduler = new PollScheduler({ target: 'bench', connection: server.dsn(), collectors, writer, clock, logger: silentLogger() });
  await scheduler.start();
  await scheduler.whenIdle();
  await scheduler.stop();
  writer.flush();
  // As the daemon runs it: pgvigil's own health written each second in the background.
  await metrics.start();
  const app = await buildHttpApp({ metrics, queries: new StoreQueries(db), readiness: {}, clock, listenHost: '127.0.0.1', token: null });
  const http = new HttpServer(app, '127.0.0.1', 0);
  await http.start();
  return { url: `${http.url}/metrics`, metrics, samples, stop: async () => { await http.stop(); await metrics.stop(); db.close(); } };
}

/**
 * The floor: Node's http server alone in this process, sending pgvigil's bytes (taken once) from
 * one buffer, gzip or not as asked, with no routing, no rendering and no live part.
 */
async function startFloor(bodies: Record<ScrapeMode, Buffer>): Promise<{ url: string; close(): void }> {
  const server = createServer((request, response) => {
    const gzip = /gzip/.test(request.headers['accept-encoding'] ?? '');
    const bytes = bodies[gzip ? 'gzip' : 'identity'];
    response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': bytes.length, ...(gzip ? { 'content-encoding': 'gzip' } : {}) });
    response.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/metrics`, close: () => server.close() };
}

function promtool(text: string): string {
  const result = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  const problems = `${result.stdout}${result.stderr}`.trim().split('\n').filter(Boolean);
  if (result.status === 0 && problems.length === 0) return 'passes, no warnings';
  const kinds = [...new Set(problems.map((p) => p.replace(/^\S+\s+/, '')))];
  return `exit ${result.status}, ${problems.length} problems: ${kinds.slice(0, 4).join('; ')}${kinds.length > 4 ? '; ...' : ''}`;
}

export async function runMetricsBench(): Promise<void> {
  for (const tool of [CURL, EXPORTER, PROMTOOL, EXAMPLE_QUERIES]) {
    if (!existsSync(tool)) return say(`skipped: ${tool} is missing (apt-get install prometheus prometheus-postgres-exporter)`);
  }
  const tables = envNumber('BENCH_TABLES', 500);
  const runs = envNumber('BENCH_RUNS', 30);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-metrics-'));
  let exporter: ChildProcess | null = null;
  let pgvigil: Awaited<ReturnType<typeof startPgvigil>> | null = null;
  let floor: { url: string; close(): void } | null = null;
  try {
    say(`PostgreSQL 18 with ${tables} tables (harness)...`);
    const server = await startPrimary({ version: 18, name: 'bench-metrics' });
    await makeTables(server, tables);
    const started = await startExporter(server, dir);
    exporter = started.proc;
    pgvigil = await startPgvigil(server, tables, dir);

    // Poll rounds into a fresh cache: what a writer commit costs the metrics, the first round
    // (which creates every series) and a later one (which only updates values).
    const fresh = new Metrics({ clock: systemClock, maxSeries: 100_000 });
    const ingestMs = [0, 1, 2].map(() => {
      const t = performance.now();
      fresh.observe({ events: [], samples: pgvigil!.samples });
      return performance.now() - t;
    });

    const body = (who: string, mode: ScrapeMode): string => path.join(dir, `${who}-${mode}.body`);
    const modes: ScrapeMode[] = ['gzip', 'identity'];
    type Who = 'exporter' | 'pgvigil' | 'floor';
    const scrapes = {} as Record<Who, Record<ScrapeMode, Record<Connection, Scrape[]>>>;
    for (const who of ['exporter', 'pgvigil', 'floor'] as Who[]) scrapes[who] = { gzip: { kept: [], new: [] }, identity: { kept: [], new: [] } };
    floor = await startFloor({ gzip: Buffer.concat(await pgvigil.metrics.renderChunks('gzip')), identity: Buffer.concat(await pgvigil.metrics.renderChunks('identity')) });
    const urls: Record<Who, string> = { exporter: started.url, pgvigil: pgvigil.url, floor: floor.url };
    const scrapeBoth = async (mode: ScrapeMode, keep: boolean): Promise<void> => {
      for (const connection of CONNECTIONS) {
        for (const who of ['exporter', 'pgvigil', 'floor'] as Who[]) {
          const scrape = await curlScrape(urls[who], body(who, mode), mode, connection);
          if (keep) scrapes[who][mode][connection].push(scrape);
        }
      }
    };
    for (let i = 0; i < 3; i++) for (const mode of modes) await scrapeBoth(mode, false);
    const renderMs: number[] = [];
    const renderCpuMs: Record<ScrapeMode, number[]> = { gzip: [], identity: [] };
    const uncachedCpuMs: number[] = [];
    // CPU time of this process beside wall time: on a shared machine the wall time of a 1 ms
    // job is mostly waiting for a core, its CPU time is not.
    const cpuMs = async (job: () => Promise<unknown>): Promise<number> => {
      const before = process.cpuUsage();
      await job();
      const used = process.cpuUsage(before);
      return (used.user + used.system) / 1000;
    };
    for (let i = 0; i < runs; i++) {
      // Exporter and pgvigil alternate within each mode; the modes alternate too.
      for (const mode of i % 2 === 0 ? modes : [...modes].reverse()) await scrapeBoth(mode, true);
      // Bytes, as /metrics sends them: from the cache, as a scrape between two polls finds it.
      const renderStarted = performance.now();
      renderCpuMs.identity.push(await cpuMs(() => pgvigil!.metrics.renderChunks('identity')));
      renderMs.push(performance.now() - renderStarted);
      renderCpuMs.gzip.push(await cpuMs(() => pgvigil!.metrics.renderChunks('gzip')));
    }
    // What every scrape cost before the cache: an empty commit invalidates it, then a full
    // render. After the scrapes: each one also leaves the cache without its compressed copy.
    for (let i = 0; i < runs; i++) {
      uncachedCpuMs.push(await cpuMs(async () => {
        pgvigil!.metrics.observe({ events: [], samples: [] });
        await pgvigil!.metrics.renderChunks('identity');
      }));
    }
    const text = { exporter: { gzip: bodyText(body('exporter', 'gzip')), identity: bodyText(body('exporter', 'identity')) }, pgvigil: { gzip: bodyText(body('pgvigil', 'gzip')), identity: bodyText(body('pgvigil', 'identity')) } };
    const pgvigilText = text.pgvigil.identity;
    const exporterText = text.exporter.identity;

    say(`series: pgvigil ${seriesIn(pgvigilText)} (${(pgvigilText.length / 1e6).toFixed(2)} MB), postgres_exporter ${seriesIn(exporterText)} (${(exporterText.length / 1e6).toFixed(2)} MB)`);
    say(`scrape over HTTP by curl (time_total), median (range) of ${runs} alternated rounds; bytes on the wire (body):`);
    for (const mode of modes) {
      say(mode === 'gzip'
        ? '  as Prometheus scrapes (its Accept, Accept-Encoding: gzip; the body kept compressed, inflating is the scraper\'s work):'
        : '  identity (the same Accept, no Accept-Encoding: the uncompressed body):');
      const wire = (list: Scrape[]): string => `${(median(list.map((s) => s.wireBytes)) / 1e3).toFixed(0)} KB`;
      for (const connection of CONNECTIONS) {
        say(connection === 'kept'
          ? '    on a kept connection (as Prometheus scrapes a target, the second fetch of one curl timed):'
          : '    a new curl per scrape (its first transfer: a new connection and curl\'s set-up, as this bench timed before):');
        const of = (who: Who): Scrape[] => scrapes[who][mode][connection];
        const exporterMs = of('exporter').map((s) => s.ms);
        const pgvigilMs = of('pgvigil').map((s) => s.ms);
        const ratios = exporterMs.map((e, i) => e / pgvigilMs[i]!);
        say(`      postgres_exporter 0.11.1  ${ms(exporterMs)}  ${wire(of('exporter'))}`);
        say(`      pgvigil                   ${ms(pgvigilMs)}  ${wire(of('pgvigil'))}`);
        say(`      bare node:http, the same bytes from one buffer (what is not pgvigil's): ${ms(of('floor').map((s) => s.ms))}  ${wire(of('floor'))}`);
        say(`      exporter / pgvigil, per pair: median ${median(ratios).toFixed(1)}x (${Math.min(...ratios).toFixed(1)}-${Math.max(...ratios).toFixed(1)}x)${mode === 'gzip' && connection === 'kept' ? '  [target: pgvigil under 3 ms median]' : ''}`);
      }
    }
    say(`pgvigil render to bytes in process (no HTTP, cached between polls): identity ${ms(renderMs)} wall, ${ms(renderCpuMs.identity)} CPU; gzip ${ms(renderCpuMs.gzip)} CPU`);
    say(`  the same without the cache (a full render, what each scrape cost before): ${ms(uncachedCpuMs)} CPU`);
    const renderedStarted = performance.now();
    pgvigil.metrics.observe({ events: [], samples: pgvigil.samples });
    await pgvigil.metrics.renderChunks('identity');
    const renderedMs = performance.now() - renderedStarted;
    const compressStarted = performance.now();
    await pgvigil.metrics.renderChunks('gzip');
    say(`pgvigil first scrape after a poll round (takes the round, renders it once): ${renderedMs.toFixed(1)} ms; the first gzip scrape then compresses it once: ${(performance.now() - compressStarted).toFixed(1)} ms`);
    say(`pgvigil taking a poll round (${pgvigil.samples.length} samples) into the cache: first ${ingestMs[0]!.toFixed(1)} ms, later ${median(ingestMs.slice(1)).toFixed(1)} ms`);
    say(`promtool check metrics: pgvigil ${promtool(pgvigilText)}; postgres_exporter ${promtool(exporterText)}`);
    say(`gzip bodies inflated: pgvigil ${sameSeries(text.pgvigil.gzip, pgvigilText)}, promtool ${promtool(text.pgvigil.gzip)}; postgres_exporter ${sameSeries(text.exporter.gzip, exporterText)}`);
    say(`curl --compressed (curl's own Accept-Encoding, inflated by curl): pgvigil ${sameSeries(await curlCompressed(pgvigil.url), pgvigilText)}`);
  } finally {
    exporter?.kill('SIGTERM');
    floor?.close();
    await pgvigil?.stop();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: '/metrics render and scrape time vs prometheus-postgres-exporter on the same server (~14k series)',
  run: () => runMetricsBench(),
};
