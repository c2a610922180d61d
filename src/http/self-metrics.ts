/**
 * pgvigil's own health as metrics (`pgvigil_` and the standard `process_` names), read at scrape
 * time from plain stats getters the components expose. Getters must be cheap: they return
 * counters the components already keep, never do I/O beyond a stat() or an indexed count.
 *
 * Written as text here, not through prom-client: this is the only part of /metrics rendered at
 * every scrape, and prom-client's registry (a collect() and a label hash map rebuilt per family,
 * an await per family) cost ~1 ms of a scrape that arrives after seconds of idleness, a third of
 * the 3 ms budget, against ~0.1 ms for the same text written straight from the getters
 * (bench/metrics.ts).
 */
import { readdirSync, statSync } from 'node:fs';
import { createHistogram } from 'node:perf_hooks';
import { getHeapStatistics, type HeapInfo } from 'node:v8';
import type { Clock } from '../domain/index.js';
import type { ForwardStats } from '../forward/forwarder.js';
import { FAILURE_CLASSES, type ChannelStats } from '../notify/outbox.js';
import { UNPARSED_REASONS } from '../parsers/framer.js';
import { familyHeader, formatLabels, formatValue } from './exposition.js';

/**
 * A counter's series are exported at 0 from the start for the labels known in advance: a rate()
 * over a series that appears with its first failure misses that failure, and a dashboard shows
 * "no data" where it means none. Collector errors are by SQLSTATE, an open set: the statement
 * timeout, the one a busy server gives, stands for them.
 */
const COLLECTOR_ERROR_CODES_AT_START = ['57014'] as const;

function withZeros(counts: Readonly<Record<string, number>>, known: readonly string[]): Array<[string, number]> {
  return [...known.filter((k) => !Object.hasOwn(counts, k)).map((k): [string, number] => [k, 0]), ...Object.entries(counts)];
}

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
  /** Samples dropped, oldest first, while the store could not take them (store-writer.ts). */
  droppedSamples: number;
}

/** Getter callbacks the lead wires in src/app.ts; each is optional. */
export interface SelfStatsSources {
  tailers?: () => readonly TailerStats[];
  collectors?: () => readonly CollectorStats[];
  writer?: () => WriterStats;
  /** Size of the store's files (database + WAL). */
  storeSizeBytes?: () => number | null;
  notifiers?: () => readonly ChannelStats[];
  retention?: () => RetentionStats;
  /** Forwarding to a central PostgreSQL database, when configured. */
  forward?: () => ForwardStats;
}

export interface RetentionStats {
  failures: number;
  rowsDeleted: number;
  /** Rows deleted over the size budget before the forwarder sent them, per table. */
  unforwardedDeleted: { events: number; samples: number };
}

type LabelValues = Record<string, string>;
/** A series' labels and value; a null value (not known yet, or not on this platform) leaves the series out. */
type Reading = readonly [LabelValues, number | null];

interface Family {
  name: string;
  type: 'counter' | 'gauge';
  help: string;
  labelNames: readonly string[];
  read: () => Iterable<Reading>;
}

/**
 * How often pgvigil's own health is written in the background, and so about how old a scrape
 * finds it; a scrape finding it older than half a period more (the loop was blocked, or nobody
 * started the refresh) writes it first.
 */
export const SELF_REFRESH_MS = 1000;

/**
 * pgvigil's own health families, in exposition order. A counter's value is a component's own
 * running total, copied at each refresh. A family whose component is absent (no forwarding
 * configured, no notifier) has its HELP and TYPE lines and no series.
 *
 * Written each second, not at each scrape: every read and line here costs ten to fifty times
 * more on a scrape arriving after seconds of idleness than in a warm loop (~0.8 ms in all on the
 * bench machine, the event-loop percentiles 0.2 ms of it, against ~1 ms for the whole rest of the
 * scrape), and values a second old are what a 15 s scrape interval cannot tell apart.
 */
export class SelfMetrics {
  private readonly families: readonly HeadedFamily[];
  private readonly loop = eventLoopDelays();
  private text: Buffer | null = null;
  private writtenAtMs = 0;

  constructor(sources: SelfStatsSources, startedMs: number, private readonly clock: Clock) {
    this.families = [...pgvigilFamilies(sources), ...processFamilies(startedMs, this.loop)].map(headed);
  }

  /** The names it writes, so no polled sample can take one. */
  names(): string[] {
    return this.families.map((f) => f.name);
  }

  /**
   * Writes the health every SELF_REFRESH_MS until cancelled. A getter that throws must not kill
   * the daemon from a timer: the text stays as it was, and the next scrape, finding it stale,
   * writes it in its own request and answers the error there (500, logged by the HTTP app).
   */
  refreshEvery(): { cancel(): void } {
    return this.clock.setInterval(() => {
      try {
        this.refresh();
      } catch {
        // Left to the next scrape, as above.
      }
    }, SELF_REFRESH_MS);
  }

  refresh(): void {
    this.loop.refresh();
    this.text = Buffer.from(familiesText(this.families), 'utf8');
    this.writtenAtMs = this.clock.monotonicMs();
  }

  /** The health as last written (written now when it is too old), for a scrape. */
  render(): Buffer {
    if (this.text === null || this.clock.monotonicMs() - this.writtenAtMs > SELF_REFRESH_MS * 1.5) this.refresh();
    this.loop.markReported();
    return this.text!;
  }
}

type HeadedFamily = Family & { header: string };

function headed(family: Family): HeadedFamily {
  return { ...family, header: familyHeader(family.name, family.type, family.help) };
}

function familiesText(families: readonly HeadedFamily[]): string {
  const out: string[] = [];
  for (const family of families) {
    out.push(family.header);
    for (const [labels, value] of family.read()) {
      if (value === null) continue;
      out.push(family.name, formatLabels(family.labelNames.map((name) => [name, labels[name] ?? ''])), ' ', formatValue(value), '\n');
    }
  }
  return out.join('');
}

const one = (value: number | null | undefined): Reading[] => (value === undefined ? [] : [[{}, value]]);

function pgvigilFamilies(sources: SelfStatsSources): Family[] {
  const tailers = (): readonly TailerStats[] => sources.tailers?.() ?? [];
  const tailerLabels = (t: TailerStats): LabelValues => ({ target: t.target, source: t.source });
  const collectors = (): readonly CollectorStats[] => sources.collectors?.() ?? [];
  const collectorLabels = (c: CollectorStats): LabelValues => ({ target: c.target, collector: c.collector });
  const writer = (pick: (w: WriterStats) => number): Reading[] => one(sources.writer && pick(sources.writer()));
  const retention = (pick: (r: RetentionStats) => number): Reading[] => one(sources.retention && pick(sources.retention()));
  const channels = (): readonly ChannelStats[] => sources.notifiers?.() ?? [];
  const forward = sources.forward;
  return [
    { name: 'pgvigil_log_lines_read_total', type: 'counter', help: 'Log lines read by the tailer.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.linesRead]) },
    { name: 'pgvigil_log_read_bytes_total', type: 'counter', help: 'Log bytes read by the tailer.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.bytesRead]) },
    {
      name: 'pgvigil_log_parse_failures_total', type: 'counter', help: 'Log lines or entries pgvigil could not parse, by reason.', labelNames: ['target', 'source', 'reason'],
      read: () => tailers().flatMap((t) => withZeros(t.parseFailures, UNPARSED_REASONS).map(([reason, n]): Reading => [{ ...tailerLabels(t), reason }, n])),
    },
    { name: 'pgvigil_log_lag_bytes', type: 'gauge', help: 'Bytes between the tailer and the end of the log file it reads.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.lagBytes]) },
    { name: 'pgvigil_log_lag_seconds', type: 'gauge', help: 'How far behind the newest log entry read is.', labelNames: ['target', 'source'], read: () => tailers().map((t) => [tailerLabels(t), t.lagSeconds]) },

    { name: 'pgvigil_collector_polls_total', type: 'counter', help: 'Polls run per collector.', labelNames: ['target', 'collector'], read: () => collectors().map((c) => [collectorLabels(c), c.polls]) },
    {
      name: 'pgvigil_collector_errors_total', type: 'counter', help: 'Polls that failed per collector, by error code (SQLSTATE such as 57014 for a timeout, errno, bad_row).', labelNames: ['target', 'collector', 'code'],
      read: () => collectors().flatMap((c) => withZeros(c.errorsByCode, COLLECTOR_ERROR_CODES_AT_START).map(([code, n]): Reading => [{ ...collectorLabels(c), code }, n])),
    },
    {
      name: 'pgvigil_collector_last_duration_seconds', type: 'gauge', help: 'Duration of the latest poll per collector.', labelNames: ['target', 'collector'],
      read: () => collectors().map((c) => [collectorLabels(c), c.lastDurationMs === null ? null : c.lastDurationMs / 1000]),
    },

    { name: 'pgvigil_store_write_failing', type: 'gauge', help: '1 while store commits fail (disk full, I/O error); pending rows are kept and retried.', labelNames: [], read: () => writer((w) => (w.failing ? 1 : 0)) },
    { name: 'pgvigil_store_rows_written_total', type: 'counter', help: 'Rows (events, samples, offsets) committed to the store.', labelNames: [], read: () => writer((w) => w.committedRows) },
    { name: 'pgvigil_store_backlog_rows', type: 'gauge', help: 'Rows waiting to be committed to the store.', labelNames: [], read: () => writer((w) => w.backlogRows) },
    {
      name: 'pgvigil_store_samples_dropped_total', type: 'counter', labelNames: [], read: () => writer((w) => w.droppedSamples),
      help: 'Polled samples dropped, oldest first, while store commits failed and the samples held reached their bound; log events are never dropped (the tailer waits).',
    },
    { name: 'pgvigil_retention_failures_total', type: 'counter', help: 'Retention runs that failed (a locked, full or broken store); each is retried at the next interval.', labelNames: [], read: () => retention((r) => r.failures) },
    { name: 'pgvigil_retention_deleted_rows_total', type: 'counter', help: 'Events and samples deleted by retention.', labelNames: [], read: () => retention((r) => r.rowsDeleted) },
    {
      name: 'pgvigil_retention_unforwarded_deleted_total', type: 'counter', help: 'Rows retention deleted to keep the store within its size budget before the forwarder sent them to the central database.', labelNames: ['table'],
      read: () => (sources.retention ? Object.entries(sources.retention().unforwardedDeleted).map(([table, n]): Reading => [{ table }, n]) : []),
    },
    { name: 'pgvigil_store_size_bytes', type: 'gauge', help: 'Size of the store files (database and WAL).', labelNames: [], read: () => one(sources.storeSizeBytes?.()) },

    { name: 'pgvigil_notifier_queue_depth', type: 'gauge', help: 'Notifications waiting in the outbox per channel (first attempts and retries).', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.queueDepth]) },
    { name: 'pgvigil_notifier_rejected', type: 'gauge', help: 'Notifications a receiver refused (HTTP 400), kept in the outbox as rejected.', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.rejected]) },
    { name: 'pgvigil_notifier_delivered_total', type: 'counter', help: 'Notifications receivers accepted.', labelNames: ['channel'], read: () => channels().map((c) => [{ channel: c.channel }, c.delivered]) },
    {
      name: 'pgvigil_notifier_failures_total', type: 'counter', help: 'Failed delivery attempts per channel and reason (network, timeout, http_429, http_5xx, rejected).', labelNames: ['channel', 'reason'],
      read: () => channels().flatMap((c) => withZeros(c.failures, FAILURE_CLASSES).map(([reason, n]): Reading => [{ channel: c.channel, reason }, n])),
    },

    { name: 'pgvigil_forward_lag_seconds', type: 'gauge', help: 'Seconds since forwarding to the central database last had nothing waiting; 0 when caught up.', labelNames: [], read: () => one(forward?.().lagSeconds) },
    {
      name: 'pgvigil_forward_pending_rows', type: 'gauge', help: 'Rows not yet forwarded to the central database, per stream (events, alert_transitions, alerts, samples, report_minutes: stored rows of the log report, each sent with its minute).', labelNames: ['stream'],
      read: () => Object.entries(forward?.().pendingRows ?? {}).map(([stream, n]): Reading => [{ stream }, n]),
    },
    {
      name: 'pgvigil_forward_rows_total', type: 'counter', help: 'Rows sent in batches the central database committed, per stream (rows sent again after a crash count again).', labelNames: ['stream'],
      read: () => Object.entries(forward?.().forwardedRows ?? {}).map(([stream, n]): Reading => [{ stream }, n]),
    },
    { name: 'pgvigil_forward_failures_total', type: 'counter', help: 'Forward batches that failed (central database down, slow or refusing); each is retried with backoff.', labelNames: [], read: () => one(forward?.().failures) },
  ];
}

/**
 * The standard process_* and nodejs_* names, as prom-client's default metrics call them; not
 * collectDefaultMetrics itself, whose nodejs_active_*_total gauges fail promtool's lint. The
 * ones a soak watches for a leak: resident memory, heap, open descriptors, event-loop lag.
 */
function processFamilies(startedMs: number, loop: EventLoopDelays): Family[] {
  const startSeconds = Math.round(startedMs / 1000);
  let heap: HeapInfo | null = null;
  const lag = (name: string, what: string, read: () => number): Family => ({
    name, type: 'gauge', labelNames: [], read: () => one(read()),
    help: `${what} event loop delay in seconds since the previous scrape (to within pgvigil's 1 s refresh; a 10 ms timer's period included, as prom-client measures it).`,
  });
  return [
    { name: 'process_start_time_seconds', type: 'gauge', help: 'Start time of the process since unix epoch in seconds.', labelNames: [], read: () => one(startSeconds) },
    { name: 'process_resident_memory_bytes', type: 'gauge', help: 'Resident memory size in bytes.', labelNames: [], read: () => one(process.memoryUsage.rss()) },
    {
      name: 'process_cpu_seconds_total', type: 'counter', help: 'Total user and system CPU time spent in seconds.', labelNames: [],
      read: () => {
        const usage = process.cpuUsage();
        return one((usage.user + usage.system) / 1e6);
      },
    },
    { name: 'process_open_fds', type: 'gauge', help: 'Number of open file descriptors.', labelNames: [], read: () => one(openFileDescriptors()) },
    // V8's figures, as process.memoryUsage() gives them, without the resident-size read from
    // /proc it makes each time; read once per scrape, by the first of the two.
    { name: 'nodejs_heap_size_used_bytes', type: 'gauge', help: 'Process heap size used from Node.js in bytes.', labelNames: [], read: () => one((heap = getHeapStatistics()).used_heap_size) },
    { name: 'nodejs_heap_size_total_bytes', type: 'gauge', help: 'Process heap size from Node.js in bytes.', labelNames: [], read: () => one(heap?.total_heap_size) },
    lag('nodejs_eventloop_lag_p50_seconds', 'The median', () => loop.figures.p50),
    lag('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the', () => loop.figures.p99),
    lag('nodejs_eventloop_lag_max_seconds', 'The maximum', () => loop.figures.max),
  ];
}

/**
 * Open descriptors, from /proc (Linux); null elsewhere, and the series is left out. Linux 6.2 and
 * later give the count as the size of /proc/self/fd, one stat() instead of a directory listing
 * (~0.2 ms of a scrape here); older kernels say 0 there, and the listing counts.
 */
function openFileDescriptors(): number | null {
  try {
    const counted = statSync('/proc/self/fd').size;
    // Minus the descriptor readdir itself holds open on /proc/self/fd.
    return counted > 0 ? counted : readdirSync('/proc/self/fd').length - 1;
  } catch {
    return null;
  }
}

interface LagWindow { p50: number; p99: number; max: number }

const LOOP_TICK_MS = 10;
const HOUR_NS = 3_600e9;

/**
 * The event-loop delay, one per process (the loop is the process's), started with the first
 * SelfMetrics and never stopped: the loop it watches lasts as long. The same measure as
 * monitorEventLoopDelay and prom-client: the time between ticks of a 10 ms timer, period
 * included. Not monitorEventLoopDelay itself: its histogram spans 1 ns to 2^63 ns at 3 digits
 * (hundreds of KB of counts), and clearing them at every scrape took 1.8 ms of one here; two
 * significant digits (1%) up to an hour fit in 37 KB.
 *
 * Two histograms, so a scrape reads figures the refresh made and no tick is lost or counted
 * twice: the ticks since the last refresh, and the window a scrape reports, which each refresh
 * adds them to and which starts over at the first refresh after a scrape took it. A scrape's
 * window so runs from the refresh before the previous scrape to the refresh before it.
 */
export class EventLoopDelays {
  private readonly sinceRefresh = createHistogram({ highest: HOUR_NS, figures: 2 });
  private readonly window = createHistogram({ highest: HOUR_NS, figures: 2 });
  private reported = false;
  /** Before the first tick there is no delay to tell: 0, as prom-client says. */
  figures: LagWindow = { p50: 0, p99: 0, max: 0 };

  /** Delays fed by the 10 ms timer on this process's loop (tests feed `record` themselves). */
  static watchingThisLoop(): EventLoopDelays {
    const delays = new EventLoopDelays();
    let lastMs = performance.now();
    setInterval(() => {
      const nowMs = performance.now();
      delays.record((nowMs - lastMs) * 1e6);
      lastMs = nowMs;
    }, LOOP_TICK_MS).unref();
    return delays;
  }

  /** One tick: the time since the previous one, timer period included. */
  record(delayNs: number): void {
    this.sinceRefresh.record(Math.max(1, Math.round(delayNs)));
  }

  refresh(): void {
    if (this.reported) {
      this.window.reset();
      this.reported = false;
    }
    this.window.add(this.sinceRefresh);
    this.sinceRefresh.reset();
    // A window without a tick (refreshed twice within one) keeps the figures it had.
    if (this.window.count > 0) this.figures = { p50: this.window.percentile(50) / 1e9, p99: this.window.percentile(99) / 1e9, max: this.window.max / 1e9 };
  }

  /** A scrape reported the figures: the next refresh starts a new window. */
  markReported(): void {
    this.reported = true;
  }
}

let eventLoop: EventLoopDelays | null = null;

function eventLoopDelays(): EventLoopDelays {
  return (eventLoop ??= EventLoopDelays.watchingThisLoop());
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
