/**
 * Forwarding to a central PostgreSQL 18 (issue #13), measured side by side in one run:
 * - ingest: `pgvigil analyze --db` (frame, classify, store in SQLite) of a log amplified from the
 *   recorded PostgreSQL 18 fixtures, in events/s;
 * - forward: the same store drained into the central database (COPY batches), in events/s:
 *   forwarding keeps up when this is at least the ingest rate. Both also in CPU seconds (the
 *   forward's split into the sidecar's and the central server's): on a shared machine wall time
 *   swings with the load, CPU time much less;
 * - the fleet report over BENCH_FLEET_TARGETS targets x 7 days of events generated in the central
 *   database (summary, and the incident report of one target), against the 2 s goal.
 * Sizes: BENCH_FORWARD_MB (log, default 32), BENCH_FLEET_TARGETS (default 100),
 * BENCH_FLEET_EVENTS_PER_DAY (per target, default 500).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { centralReportWindow, fleetSummary, type CentralWindow } from '../src/central/central-report.js';
import { migrateCentral } from '../src/central/migrate-central.js';
import { runAnalyze } from '../src/cli/analyze.js';
import { systemClock } from '../src/domain/clock.js';
import { drainStore } from '../src/forward/drain-store.js';
import { readIncidentReport } from '../src/report/stored-incident-report.js';
import { openStore } from '../src/store/open-store.js';
import { destroyAllServers, startPrimary } from '../test/helpers/pg-harness.js';
import { amplify } from './lib/corpus.js';
import { ownCpuSeconds, serverCpuSeconds } from './lib/server-cpu.js';
import type { Benchmark } from './run.js';
import { envNumber } from './lib/measure.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DAY_MS = 86_400_000;

const say = (msg: string) => process.stdout.write(`${msg}\n`);
const devNull = () => new Writable({ write: (_chunk, _encoding, done) => done() });

/** The stderr-format PostgreSQL 18 recordings, one after another. */
function fixtureLines(): string[] {
  const logs = path.join(ROOT, 'test/fixtures/logs');
  return readdirSync(logs).filter((d) => d.startsWith('pg18-stderr-')).sort()
    .flatMap((d) => readdirSync(path.join(logs, d)).filter((f) => f.endsWith('.log')).map((f) => path.join(logs, d, f)))
    .flatMap((file) => readFileSync(file, 'utf8').split('\n').filter((l) => l !== ''));
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await work();
  return [result, (performance.now() - started) / 1000];
}

/** Wall time, this process's CPU time and, with a data directory, that server's CPU time. */
async function timedCpu<T>(work: () => Promise<T>, serverDataDir?: string): Promise<[T, { wallS: number; cpuS: number; serverCpuS: number | null }]> {
  const cpuBefore = process.cpuUsage();
  const serverBefore = serverDataDir === undefined ? null : serverCpuSeconds(serverDataDir);
  const [result, wallS] = await timed(work);
  const serverAfter = serverDataDir === undefined ? null : serverCpuSeconds(serverDataDir);
  return [result, { wallS, cpuS: ownCpuSeconds(cpuBefore), serverCpuS: serverBefore === null || serverAfter === null ? null : serverAfter - serverBefore }];
}

export const benchmark: Benchmark = {
  description: 'events/s forwarded to a central PostgreSQL 18 vs events/s ingested; fleet report over 100 targets x 7 days',
  async run() {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-forward-'));
    try {
      const log = path.join(dir, 'amplified.log');
      await amplify(fixtureLines(), envNumber('BENCH_FORWARD_MB', 32) * 1024 * 1024, log);
      const store = path.join(dir, 'sidecar.db');
      const [, ingest] = await timedCpu(() => runAnalyze([log], { db: store, target: 'bench' }, { stdout: devNull(), stderr: devNull() }));
      const db = openStore(store, { readonly: true });
      const events = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
      const span = db.prepare('SELECT min(ts_ms) AS fromMs, max(ts_ms) AS toMs FROM events').get() as { fromMs: number; toMs: number };
      db.close();
      say(`ingest (analyze --db):   ${events} events in ${ingest.wallS.toFixed(1)} s = ${Math.round(events / ingest.wallS)} events/s; CPU ${ingest.cpuS.toFixed(1)} s`);

      const central = await startPrimary({ version: 18, name: 'bench-central' });
      const client = new pg.Client({ connectionString: central.dsn() });
      await client.connect();
      await migrateCentral(client, Date.now());
      // A live sidecar's rows fall in partitions created ahead (central migrate, then one new day
      // a day): their creation is not part of the forwarding rate.
      const spanDays = Array.from({ length: Math.floor(span.toMs / DAY_MS) - Math.floor(span.fromMs / DAY_MS) + 1 }, (_, i) => new Date(span.fromMs + i * DAY_MS).toISOString().slice(0, 10));
      await client.query('SELECT pgvigil.ensure_day_partitions($1::date[])', [spanDays]);
      say(`central partitions:      ${spanDays.length} days created ahead`);
      const [sent, forward] = await timedCpu(() => drainStore(store, { connectionString: central.dsn() }, { batchRows: 5_000, clock: systemClock, maxFailures: 3 }), central.dataDir);
      const serverCpu = forward.serverCpuS === null ? '' : ` + central server CPU ${forward.serverCpuS.toFixed(1)} s`;
      say(`forward (COPY batches):  ${sent} rows in ${forward.wallS.toFixed(1)} s = ${Math.round(sent / forward.wallS)} rows/s; CPU ${forward.cpuS.toFixed(1)} s${serverCpu}`);
      say(`forwarded / ingested:    ${(ingest.wallS / forward.wallS).toFixed(2)}x wall, ${(ingest.cpuS / forward.cpuS).toFixed(2)}x sidecar CPU (>= 1: forwarding keeps up)`);

      await fleetReport(client);
      await client.end();
    } finally {
      await destroyAllServers();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

async function fleetReport(client: pg.Client): Promise<void> {
  const targets = envNumber('BENCH_FLEET_TARGETS', 100);
  const perDay = envNumber('BENCH_FLEET_EVENTS_PER_DAY', 500);
  const toMs = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const fromMs = toMs - 7 * DAY_MS;
  await migrateCentral(client, fromMs);
  const days = Array.from({ length: 8 }, (_, i) => new Date(fromMs + i * DAY_MS).toISOString().slice(0, 10));
  await client.query('SELECT pgvigil.ensure_day_partitions($1::date[])', [days]);
  // Every 10th event an autovacuum report with a cutoff age, every 1000th a crash; 3 alerts a target-day.
  const [, loadS] = await timed(async () => {
    await client.query(`
      INSERT INTO pgvigil.targets (target, store_id, cluster)
      SELECT 'db' || t, md5('store' || t)::uuid, 'cluster' || (t % 10) FROM generate_series(1, $1) t`, [targets]);
    await client.query(`
      INSERT INTO pgvigil.events (target, store_id, local_id, ts, kind, level, message, details, source_file, source_offset)
      SELECT 'db' || t, md5('store' || t)::uuid, i, to_timestamp($2 / 1000.0) + (i * interval '7 days' / ($3 * 7)),
             CASE WHEN i % 1000 = 0 THEN 'server_crash' WHEN i % 10 = 0 THEN 'autovacuum' ELSE 'generic' END, 'LOG',
             'automatic vacuum of table "shop.public.orders"',
             CASE WHEN i % 10 = 0 THEN jsonb_build_object('database', 'shop', 'schema', 'public', 'table', 'orders', 'removable_cutoff_age_xids', (i * 7919) % 100000)
                  ELSE '{}'::jsonb END,
             'postgresql.log', i * 200
      FROM generate_series(1, $1) t, generate_series(1, $3 * 7) i`, [targets, fromMs, perDay]);
    await client.query(`
      INSERT INTO pgvigil.alerts (target, store_id, local_id, rule_id, dedup_key, severity, state, labels, summary, evidence, started_at, updated_at, resolved_at)
      SELECT 'db' || t, md5('store' || t)::uuid, i, (ARRAY['vacuum-held-back', 'replay-stalled', 'server-crashed'])[1 + i % 3], 'k' || t || '/' || i, 'warning', 'resolved',
             '{}', 'synthetic', jsonb_build_object('eventIds', jsonb_build_array(i * 10), 'series', '[]'::jsonb, 'facts', jsonb_build_object('standing_still_seconds', i % 600)),
             to_timestamp($2 / 1000.0) + i * interval '8 hours', to_timestamp($2 / 1000.0) + i * interval '8 hours' + interval '10 minutes',
             to_timestamp($2 / 1000.0) + i * interval '8 hours' + interval '10 minutes'
      FROM generate_series(1, $1) t, generate_series(0, 20) i`, [targets, fromMs]);
    await client.query('ANALYZE pgvigil.events, pgvigil.alerts, pgvigil.targets');
  });
  const total = Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM pgvigil.events')).rows[0]!.n);
  say(`fleet data:              ${targets} targets x 7 days, ${total} events, loaded in ${loadS.toFixed(1)} s`);
  const window = { fromMs, toMs, target: null, cluster: null };
  const [summary, summaryS] = await timed(() => fleetSummary(client, window));
  say(`fleet summary:           ${summary.length} targets in ${summaryS.toFixed(2)} s (goal < 2 s)`);
  const report = (w: CentralWindow) => readIncidentReport((query) => centralReportWindow(client, { ...query, cluster: w.cluster }), w);
  const [, oneS] = await timed(() => report({ ...window, target: 'db1' }));
  say(`report of one target:    7 days in ${oneS.toFixed(2)} s (goal < 2 s)`);
  const [{ eventsLeftOut }, clusterS] = await timed(() => report({ ...window, cluster: 'cluster1' }));
  say(`report of one cluster:   cluster1 (every 10th target), 7 days in ${clusterS.toFixed(2)} s${eventsLeftOut > 0 ? ` (${eventsLeftOut} events left out)` : ''}`);
}
