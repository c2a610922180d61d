/**
 * Real inputs for the /metrics tests and benchmark: events from the recorded server logs in
 * test/fixtures/logs (through the real parsing pipeline), and samples from the real collectors
 * run by the real poll scheduler against a server started by the harness.
 */
import path from 'node:path';
import { createCollectors } from '../../src/collectors/index.js';
import { systemClock } from '../../src/domain/clock.js';
import type { AnyLogEvent, Clock } from '../../src/domain/index.js';
import { buildHttpApp } from '../../src/http/build-http-app.js';
import { HttpServer } from '../../src/http/http-server.js';
import { Metrics } from '../../src/http/metrics.js';
import { collectorStatsOf, existingFilesBytes } from '../../src/http/self-metrics.js';
import { silentLogger } from '../../src/lib/logger.js';
import { PollScheduler, type SampleSink } from '../../src/sources/poll-scheduler.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreQueries } from '../../src/store/queries.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import type { PgServer } from '../helpers/pg-harness.js';
import { FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

/** Events of every recorded stderr fixture of PG 18 and 19, target "pg18" / "pg19". */
export async function fixtureEvents(): Promise<AnyLogEvent[]> {
  const events: AnyLogEvent[] = [];
  for (const name of listCases()) {
    const dir = path.join(FIXTURES_DIR, name);
    const c = readCase(dir);
    if (c.provenance !== 'recorded' || c.format !== 'stderr' || c.major < 18) continue;
    const parsed = await parseLogFile(path.join(dir, c.log_file), { format: c.format, prefix: c.log_line_prefix, timezone: c.log_timezone, target: `pg${c.major}` });
    events.push(...parsed.events);
  }
  return events;
}

/**
 * Starts a poll scheduler with every collector on `server` and waits for its first round of
 * polls; the caller stops it. Samples go to `sink` (a StoreWriter) as in pgvigil.
 */
export async function startPolling(server: PgServer, target: string, sink: SampleSink, clock: Clock): Promise<PollScheduler> {
  const scheduler = new PollScheduler({ target, connection: server.dsn(), collectors: createCollectors(), writer: sink, clock, logger: silentLogger() });
  await scheduler.start();
  if (!scheduler.status.connected) throw new Error(`poller could not connect to ${target}: ${scheduler.status.lastError}`);
  await scheduler.whenIdle();
  return scheduler;
}

export interface OutputsRig {
  /** Where the HTTP app listens, e.g. http://127.0.0.1:40123. */
  url: string;
  writer: StoreWriter;
  alerts: AlertStore;
  schedulers: PollScheduler[];
  stop(): Promise<void>;
}

/**
 * pgvigil's output side as the daemon runs it, on real inputs: the store, its writer, the poll
 * schedulers of `targets`, the recorded fixture events, the metrics and the HTTP app listening
 * on 127.0.0.1 (a free port).
 */
export async function startOutputs(targets: ReadonlyArray<{ name: string; server: PgServer }>, storeFile: string): Promise<OutputsRig> {
  const clock = systemClock;
  const db = openStore(storeFile);
  const writer = new StoreWriter(db, clock, silentLogger(), { flushIntervalMs: 100 });
  const schedulers: PollScheduler[] = [];
  const metrics = new Metrics({
    clock,
    version: 'test',
    descriptions: createCollectors().flatMap((c) => c.metrics),
    sources: {
      collectors: () => schedulers.flatMap((s, i) => collectorStatsOf(targets[i]!.name, s.stats)),
      writer: () => ({ ...writer.stats, backlogRows: writer.backlogRows }),
      storeSizeBytes: () => existingFilesBytes([storeFile, `${storeFile}-wal`]),
    },
  });
  metrics.attachWriter(writer);
  const alerts = new AlertStore(db, []);
  metrics.attachAlerts(alerts);
  await writer.start();
  writer.enqueue({ events: await fixtureEvents() });
  for (const { name, server } of targets) schedulers.push(await startPolling(server, name, writer, clock));
  writer.flush();
  const app = await buildHttpApp({ metrics, queries: new StoreQueries(db), readiness: {}, clock, listenHost: '127.0.0.1', token: null });
  const http = new HttpServer(app, '127.0.0.1', 0);
  await http.start();
  return {
    url: http.url,
    writer,
    alerts,
    schedulers,
    async stop() {
      await http.stop();
      for (const s of schedulers) await s.stop();
      await writer.stop();
      db.close();
    },
  };
}
