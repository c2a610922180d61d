/**
 * pgvigil's own health as metrics (`pgvigil_` and the standard `process_` names), read at scrape
 * time from plain stats getters the components expose. Getters must be cheap: they return
 * counters the components already keep, never do I/O beyond a stat() or an indexed count.
 */
import { readdirSync, statSync } from 'node:fs';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { ForwardStats } from '../forward/forwarder.js';
import type { ChannelStats } from '../notify/outbox.js';

export interface TailerStats {
  target: string;
  /** The configured log path or directory. */
  source: string;
  linesRead: number;
  bytesRead: number;
  /** Lines or entries that could not be parsed, by reason (e.g. bad_prefix, bad_timestamp). */
  parseFailures: Readonly<Record<string, number>>;
  /** Bytes between the read position and the end of the current file; null before the first read. */
  lagBytes: number | null;
  /** Age of the newest entry read, relative to now; null before the first entry. */
  lagSeconds: number | null;
}

/** One collector of one target; PollScheduler.stats has these per collector name. */
export interface CollectorStats {
  target: string;
  collector: string;
  /** Polls run (PollScheduler's `runs`). */
  polls: number;
  /** Failed polls by error code (SQLSTATE, errno, bad_row...). */
  errorsByCode: Readonly<Record<string, number>>;
  /** Duration of the latest poll; null before the first. */
  lastDurationMs: number | null;
}

export interface WriterStats {
  failing: boolean;
  committedRows: number;
  backlogRows: number;
}

/** Getter callbacks the lead wires in src/app.ts; each is optional. */
export interface SelfStatsSources {
  tailers?: () => readonly TailerStats[];
  collectors?: () => readonly CollectorStats[];
  writer?: () => WriterStats;
  /** Size of the store's files (database + WAL). */
  storeSizeBytes?: () => number | null;
  notifiers?: () => readonly ChannelStats[];
  retention?: () => { failures: number; rowsDeleted: number };
  /** Forwarding to a central PostgreSQL database, when configured. */
  forward?: () => ForwardStats;
}

type LabelValues = Record<string, string>;
type Reading = readonly [LabelValues, number | null];

interface Spec {
  name: string;
  help: string;
  labelNames: string[];
  read: () => Iterable<Reading>;
}

/** A counter whose value is a component's own running total, copied at scrape time. */
function counterFrom(registry: Registry, spec: Spec): void {
  new Counter({
    name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of spec.read()) if (value !== null) this.inc(labels, value);
    },
  });
}

function gaugeFrom(registry: Registry, spec: Spec): void {
  new Gauge({
    name: spec.name, help: spec.help, labelNames: spec.labelNames, registers: [registry],
    collect() {
      this.reset();
      for (const [labels, value] of spec.read()) if (value !== null) this.set(labels, value);
    },
  });
}

export function registerSelfMetrics(registry: Registry, sources: SelfStatsSources, startedMs: number): void {
  const tailers = (): readonly TailerStats[] => sources.tailers?.() ?? [];
  const tailerLabels = (t: TailerStats): LabelValues => ({ target: t.target, source: t.source });
  counterFrom(registry, { name: 'pgvigil_log_lines_read_total', help: 'Log lines read by the tailer.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.linesRead]) });
  counterFrom(registry, { name: 'pgvigil_log_read_bytes_total', help: 'Log bytes read by the tailer.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.bytesRead]) });
  counterFrom(registry, {
    name: 'pgvigil_log_parse_failures_total', help: 'Log lines or entries pgvigil could not parse, by reason.', labelNames: ['target', 'source', 'reason'],
    read: () => tailers().flatMap((t) => Object.entries(t.parseFailures).map(([reason, n]): Reading => [{ ...tailerLabels(t), reason }, n])),
  });
  gaugeFrom(registry, { name: 'pgvigil_log_lag_bytes', help: 'Bytes between the tailer and the end of the log file it reads.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.lagBytes]) });
  gaugeFrom(registry, { name: 'pgvigil_log_lag_seconds', help: 'How far behind the newest log entry read is.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.lagSeconds]) });

  const collectors = (): readonly CollectorStats[] => sources.collectors?.() ?? [];
  const collectorLabels = (c: CollectorStats): LabelValues => ({ target: c.target, collector: c.collector });
  counterFrom(registry, { name: 'pgvigil_collector_polls_total', help: 'Polls run per collector.', labelNames: ['target', 'collector'], read: () => collectors().map((c) => [collectorLabels(c), c.polls]) });
  counterFrom(registry, {
    name: 'pgvigil_collector_errors_total', help: 'Polls that failed per collector, by error code (SQLSTATE such as 57014 for a timeout, errno, bad_row).', labelNames: ['target', 'collector', 'code'],
    read: () => collectors().flatMap((c) => Object.entries(c.errorsByCode).map(([code, n]): Reading => [{ ...collectorLabels(c), code }, n])),
  });
  gaugeFrom(registry, {
    name: 'pgvigil_collector_last_duration_seconds', help: 'Duration of the latest poll per collector.', labelNames: ['target', 'collector'],
    read: () => collectors().map((c) => [collectorLabels(c), c.lastDurationMs === null ? null : c.lastDurationMs / 1000]),
  });

  const writer = (pick: (w: WriterStats) => number): Reading[] => (sources.writer ? [[{}, pick(sources.writer())]] : []);
  gaugeFrom(registry, { name: 'pgvigil_store_write_failing', help: '1 while store commits fail (disk full, I/O error); pending rows are kept and retried.', labelNames: [], read: () => writer((w) => (w.failing ? 1 : 0)) });
  counterFrom(registry, { name: 'pgvigil_store_rows_written_total', help: 'Rows (events, samples, offsets) committed to the store.', labelNames: [], read: () => writer((w) => w.committedRows) });
  gaugeFrom(registry, { name: 'pgvigil_store_backlog_rows', help: 'Rows waiting to be committed to the store.', labelNames: [], read: () => writer((w) => w.backlogRows) });
  const retention = (pick: (r: { failures: number; rowsDeleted: number }) => number): Reading[] => (sources.retention ? [[{}, pick(sources.retention())]] : []);
  counterFrom(registry, { name: 'pgvigil_retention_failures_total', help: 'Retention runs that failed (a locked, full or broken store); each is retried at the next interval.', labelNames: [], read: () => retention((r) => r.failures) });
  counterFrom(registry, { name: 'pgvigil_retention_deleted_rows_total', help: 'Events and samples deleted by retention.', labelNames: [], read: () => retention((r) => r.rowsDeleted) });
  gaugeFrom(registry, { name: 'pgvigil_store_size_bytes', help: 'Size of the store files (database and WAL).', labelNames: [], read: () => (sources.storeSizeBytes ? [[{}, sources.storeSizeBytes()]] : []) });

  const channels = (): readonly ChannelStats[] => sources.notifiers?.() ?? [];
  gaugeFrom(registry, { name: 'pgvigil_notifier_queue_depth', help: 'Notifications waiting in the outbox per channel (first attempts and retries).', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.queueDepth]) });
  gaugeFrom(registry, { name: 'pgvigil_notifier_rejected', help: 'Notifications a receiver refused (HTTP 400), kept in the outbox as rejected.', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.rejected]) });
  counterFrom(registry, { name: 'pgvigil_notifier_delivered_total', help: 'Notifications receivers accepted.', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.delivered]) });
  counterFrom(registry, {
    name: 'pgvigil_notifier_failures_total', help: 'Failed delivery attempts per channel and reason (network, timeout, http_429, http_5xx, rejected).', labelNames: ['channel', 'reason'],
    read: () => channels().flatMap((c) => Object.entries(c.failures).map(([reason, n]): Reading => [{ channel: c.channel, reason }, n])),
  });

  const forward = sources.forward;
  gaugeFrom(registry, {
    name: 'pgvigil_forward_lag_seconds', help: 'Seconds since forwarding to the central database last had nothing waiting; 0 when caught up.', labelNames: [],
    read: () => (forward ? [[{}, forward().lagSeconds]] : []),
  });
  gaugeFrom(registry, {
    name: 'pgvigil_forward_pending_rows', help: 'Rows not yet forwarded to the central database, per stream (events, alert_transitions, alerts, samples).', labelNames: ['stream'],
    read: () => Object.entries(forward?.().pendingRows ?? {}).map(([stream, n]): Reading => [{ stream }, n]),
  });
  counterFrom(registry, {
    name: 'pgvigil_forward_rows_total', help: 'Rows sent in batches the central database committed, per stream (rows sent again after a crash count again).', labelNames: ['stream'],
    read: () => Object.entries(forward?.().forwardedRows ?? {}).map(([stream, n]): Reading => [{ stream }, n]),
  });
  counterFrom(registry, { name: 'pgvigil_forward_failures_total', help: 'Forward batches that failed (central database down, slow or refusing); each is retried with backoff.', labelNames: [], read: () => (forward ? [[{}, forward().failures]] : []) });

  registerProcessMetrics(registry, startedMs);
}

/**
 * The standard process_* and nodejs_* names, as prom-client's default metrics call them; not
 * collectDefaultMetrics itself, whose nodejs_active_*_total gauges fail promtool's lint. The
 * ones a soak watches for a leak: resident memory, heap, open descriptors, event-loop lag.
 */
function registerProcessMetrics(registry: Registry, startedMs: number): void {
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.', registers: [registry] }).set(Math.round(startedMs / 1000));
  gaugeFrom(registry, { name: 'process_resident_memory_bytes', help: 'Resident memory size in bytes.', labelNames: [], read: () => [[{}, process.memoryUsage.rss()]] });
  counterFrom(registry, {
    name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', labelNames: [],
    read: () => {
      const usage = process.cpuUsage();
      return [[{}, (usage.user + usage.system) / 1e6]];
    },
  });
  gaugeFrom(registry, { name: 'process_open_fds', help: 'Number of open file descriptors.', labelNames: [], read: () => [[{}, openFileDescriptors()]] });
  // V8's figures, as process.memoryUsage() gives them, without the resident-size read from
  // /proc it makes each time.
  gaugeFrom(registry, { name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', labelNames: [], read: () => [[{}, getHeapStatistics().used_heap_size]] });
  gaugeFrom(registry, { name: 'nodejs_heap_size_total_bytes', help: 'Process heap size from Node.js in bytes.', labelNames: [], read: () => [[{}, getHeapStatistics().total_heap_size]] });
  // One window per scrape: the first gauge collected (they collect in this order) takes it.
  const delays = eventLoopDelays();
  let window: LagWindow | null = null;
  const lag = (name: string, what: string, read: () => number | null): void =>
    gaugeFrom(registry, { name, help: `${what} event loop delay in seconds since the previous scrape (a 10 ms timer's period included, as prom-client measures it).`, labelNames: [], read: () => [[{}, read()]] });
  lag('nodejs_eventloop_lag_p50_seconds', 'The median', () => (window = takeWindow(delays))?.p50 ?? null);
  lag('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the', () => window?.p99 ?? null);
  lag('nodejs_eventloop_lag_max_seconds', 'The maximum', () => window?.max ?? null);
}

/** Open descriptors, from /proc (Linux); null elsewhere, and the series is left out. */
function openFileDescriptors(): number | null {
  try {
    // Minus the descriptor readdir itself holds open on /proc/self/fd.
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}

interface LagWindow { p50: number; p99: number; max: number }

/**
 * One event-loop delay histogram per process (the loop is the process's), started with the first
 * registry and never stopped: the loop it watches lasts as long. Not monitorEventLoopDelay: its
 * histogram spans 1 ns to 2^63 ns at 3 digits (hundreds of KB of counts), and clearing them at
 * every scrape took 1.8 ms of a curl-timed scrape here, more than the rest of pgvigil's own
 * part. Two significant digits (1%) up to an hour fit in 37 KB. The same measure as
 * monitorEventLoopDelay and prom-client: the time between ticks of a 10 ms timer, period included.
 */
let eventLoopHistogram: RecordableHistogram | null = null;

const LOOP_TICK_MS = 10;
const HOUR_NS = 3_600e9;

function eventLoopDelays(): RecordableHistogram {
  if (eventLoopHistogram === null) {
    const histogram = createHistogram({ highest: HOUR_NS, figures: 2 });
    histogram.recordDelta();
    setInterval(() => histogram.recordDelta(), LOOP_TICK_MS).unref();
    eventLoopHistogram = histogram;
  }
  return eventLoopHistogram;
}

/** The window since the last take, then a new one (as prom-client's collector at each scrape); null while it has no sample. */
function takeWindow(h: RecordableHistogram): LagWindow | null {
  const window = h.count > 0 ? { p50: h.percentile(50) / 1e9, p99: h.percentile(99) / 1e9, max: h.max / 1e9 } : null;
  h.reset();
  return window;
}

/** Adapts one target's PollScheduler.stats (per collector name) to CollectorStats. */
export function collectorStatsOf(
  target: string,
  stats: ReadonlyMap<string, { runs: number; errorsByCode: Readonly<Record<string, number>>; lastDurationMs: number | null }>,
): CollectorStats[] {
  return [...stats].map(([collector, s]) => ({ target, collector, polls: s.runs, errorsByCode: s.errorsByCode, lastDurationMs: s.lastDurationMs }));
}

/** Bytes of the files that exist among `paths` (the store and its -wal), for storeSizeBytes. */
export function existingFilesBytes(paths: readonly string[]): number {
  let total = 0;
  for (const path of paths) {
    try {
      total += statSync(path).size;
    } catch {
      // A -wal file exists only while the store is open in WAL mode and has been written.
    }
  }
  return total;
}
