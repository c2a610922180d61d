/**
 * /metrics: the Prometheus exposition of everything pgvigil knows, served from memory.
 * Owns the metric names and their meaning. Never queries PostgreSQL (a slow server must not make
 * a scrape time out) and never reads the store at scrape time beyond the cheap stats getters.
 *
 * Three parts, one exposition:
 * - polled samples: the latest value per series, fed by StoreWriter commits (latest-samples.ts);
 *   a series the latest completed run of its collector no longer produced is gone;
 * - log-derived counters and histograms, fed by the same commits (log-metrics.ts);
 * - pgvigil's own health (self-metrics.ts) and its firing alerts (firing-alerts.ts).
 *
 * Rendered once per change, not once per scrape: the polled samples, the log-derived metrics,
 * the firing alerts and pgvigil's figures about them change only when a commit or an alert
 * transition arrives, so their bytes are kept until then (or until the oldest series goes stale),
 * and compressed once for gzip scrapes (gzip-parts.ts). pgvigil's own health, a few dozen series
 * read from live getters, is written each second in the background (self-metrics.ts) and comes
 * last, so the cached bytes are one prefix and a scrape renders nothing. Speed: bench/metrics.ts
 * and docs/reliability.md.
 *
 * Naming: `pg_` for what PostgreSQL reports (postgres_exporter's names where it has one for the
 * same value, without its unit mistakes), `pgvigil_` for pgvigil itself; base units in names,
 * `_total` on counters; every series carries `target`.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Alert, Clock } from '../domain/index.js';
import type { FlushResult } from '../store/store-writer.js';
import { CONTENT_TYPE } from './exposition.js';
import { ALERT_FIRING_METRIC, ALERT_CAUSE_METRIC, FiringAlerts } from './firing-alerts.js';
import { gzipPrefix, gzipWithTail, type GzipPrefix } from './gzip-parts.js';
import { LatestSamples, type MetricDescription, type RefusalReason } from './latest-samples.js';
import { LogMetrics } from './log-metrics.js';
import { SelfMetrics, type SelfStatsSources } from './self-metrics.js';

export type { MetricDescription } from './latest-samples.js';
export type { SelfStatsSources, TailerStats, CollectorStats, WriterStats } from './self-metrics.js';

export interface MetricsOptions {
  clock: Clock;
  /** HELP/TYPE of collector series: the union of every Collector.metrics. */
  descriptions?: readonly MetricDescription[];
  /** Most polled series exposed; past it samples are refused and counted. Default 50,000. */
  maxSeries?: number;
  /**
   * A polled series not updated for this long leaves the exposition. Default 15 min. The safety
   * net: a series its collector's next completed run lacks leaves at once (snapshots).
   */
  staleAfterMs?: number;
  /** Tables per target with their own log-derived series. Default 200. */
  maxTablesPerTarget?: number;
  sources?: SelfStatsSources;
  /**
   * The configured targets: their log-derived counters start at 0 before any event, and
   * pgvigil_target_info names each one's cluster (a target without one is its own).
   */
  targets?: ReadonlyArray<{ name: string; cluster: string | null }>;
  /** pgvigil's version for pgvigil_build_info. */
  version?: string;
}

/** What Metrics needs of the StoreWriter (structural, so tests can pass a real writer or a stand-in). */
export interface FlushSource {
  onFlush(listener: (result: FlushResult) => void): void;
  readonly stats: { lastWriteMs: number };
}

/** What Metrics needs of the AlertStore. */
export interface AlertSource {
  openAlerts(): Alert[];
  onTransition(listener: (result: { alert: Alert }) => void): void;
}

/** How /metrics sends the body: as is, or gzip for a client that accepts it. */
export type MetricsEncoding = 'identity' | 'gzip';

interface CachedPart {
  /** The log-derived families, then the polled series, then the firing alerts. */
  text: Buffer;
  /** `text` compressed, made at the first gzip scrape of this part and kept with it. */
  gzip: Promise<GzipPrefix> | null;
  /** When the oldest polled series goes stale and must leave: the part is rendered again. */
  validUntilMs: number;
}

const DATABASE_LIST_SAMPLE = 'pg_database_datfrozenxid_age_xids';
const WRITE_BUCKETS_SECONDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5];

export class Metrics {
  readonly contentType = CONTENT_TYPE;
  /** pgvigil's own health, from live getters: written each second, not per scrape. */
  private readonly self: SelfMetrics;
  /** Change only with commits: cached with the polled samples, before them. */
  private readonly logRegistry = new Registry();
  /**
   * pgvigil's figures about the exposition and the store's commits; they too change only with
   * commits, alert transitions and renders: cached, after the alerts (the series gauge counts
   * what rendering the samples left).
   */
  private readonly registry = new Registry();
  private cached: CachedPart | null = null;
  /** Bumped by every change to a cached part; a render begun before a change is not kept. */
  private generation = 0;
  private readonly latest: LatestSamples;
  private readonly logMetrics: LogMetrics;
  private readonly firing = new FiringAlerts();
  private readonly storeWrite: Histogram;
  private readonly renders: Counter;
  private readonly observeErrors: Counter;
  private readonly clock: Clock;
  private refresh: { cancel(): void } | null = null;
  readonly name = 'metrics';

  constructor(options: MetricsOptions) {
    this.clock = options.clock;
    const maxSeries = options.maxSeries ?? 50_000;
    const registers = [this.registry];
    this.logMetrics = new LogMetrics(this.logRegistry, { maxTables: options.maxTablesPerTarget ?? 200 });
    const targetInfo = new Gauge({ name: 'pgvigil_target_info', help: 'One per target, always 1: its cluster, to aggregate any series by cluster (join on target).', labelNames: ['target', 'cluster'], registers });
    for (const { name, cluster } of options.targets ?? []) {
      this.logMetrics.knowTarget(name);
      targetInfo.set({ target: name, cluster: cluster ?? name }, 1);
    }
    this.self = new SelfMetrics(options.sources ?? {}, this.clock.nowMs(), this.clock);
    this.storeWrite = new Histogram({ name: 'pgvigil_store_write_duration_seconds', help: 'Duration of store commits (one transaction per batch).', buckets: WRITE_BUCKETS_SECONDS, registers });
    this.renders = new Counter({ name: 'pgvigil_metrics_renders_total', help: 'Renders of the polled and log-derived series: one per change (commit, alert transition, a series going stale), not one per scrape.', registers });
    this.observeErrors = new Counter({ name: 'pgvigil_metrics_event_errors_total', help: 'Stored events the log-derived metrics could not count (details not as their kind promises), by kind.', labelNames: ['kind'], registers });
    new Gauge({ name: 'pgvigil_build_info', help: 'pgvigil version; always 1.', labelNames: ['version', 'nodejs_version'], registers })
      .set({ version: options.version ?? 'unknown', nodejs_version: process.versions.node }, 1);

    const latest = (): LatestSamples => this.latest;
    new Gauge({ name: 'pgvigil_metrics_series', help: 'Polled series currently exposed.', registers, collect() { this.set(latest().series); } });
    new Gauge({ name: 'pgvigil_metrics_series_limit', help: 'Most polled series pgvigil exposes.', registers }).set(maxSeries);
    new Gauge({ name: 'pgvigil_metrics_dropped_series', help: 'Distinct polled series refused because the series limit was reached.', registers, collect() { this.set(latest().droppedSeries); } });
    new Counter({
      name: 'pgvigil_metrics_refused_samples_total', help: 'Samples not exposed, by reason (invalid_name, invalid_label, reserved_name, series_limit).', labelNames: ['reason'], registers,
      collect() {
        this.reset();
        for (const [reason, n] of Object.entries(latest().refusedSamples) as Array<[RefusalReason, number]>) this.inc({ reason }, n);
      },
    });
    // Last: every name registered above is reserved for pgvigil and cannot be taken by a sample.
    this.latest = new LatestSamples({
      maxSeries,
      staleAfterMs: options.staleAfterMs ?? 15 * 60_000,
      descriptions: options.descriptions ?? [],
      reservedNames: this.reservedNames(),
    });
  }

  /** Keeps pgvigil's own health written in the background, so a scrape only copies bytes (self-metrics.ts). */
  async start(): Promise<void> {
    this.refresh ??= this.self.refreshEvery();
  }

  async stop(): Promise<void> {
    this.refresh?.cancel();
    this.refresh = null;
  }

  /** Subscribes to the writer's commits: polled samples, log events, and the commit's duration. */
  attachWriter(writer: FlushSource): void {
    writer.onFlush((result) => {
      this.observe(result);
      this.storeWrite.observe(writer.stats.lastWriteMs / 1000);
    });
  }

  /** Seeds the firing alerts and follows every transition. */
  attachAlerts(alerts: AlertSource): void {
    for (const alert of alerts.openAlerts()) this.firing.update(alert);
    this.invalidate();
    alerts.onTransition(({ alert }) => {
      this.firing.update(alert);
      this.invalidate();
    });
  }

  /**
   * Runs inside the writer's flush: it must not throw, or the writer's other listeners (the rules
   * engine) would miss the commit. An event it cannot count is counted as an error instead.
   */
  observe(result: FlushResult): void {
    this.invalidate();
    this.latest.add(result.samples, this.clock.nowMs(), result.snapshots);
    for (const s of result.samples) {
      // pg_database lists every database: their per-database counters start at 0 (template0 takes no connections).
      if (s.name === DATABASE_LIST_SAMPLE && s.labels.datname && s.labels.datname !== 'template0') this.logMetrics.knowDatabase(s.target, s.labels.datname);
    }
    for (const stored of result.events) {
      try {
        this.logMetrics.observe(stored.event);
      } catch {
        this.observeErrors.inc({ kind: stored.event.kind });
      }
    }
  }

  /**
   * The exposition as /metrics sends it, in chunks: the cached part, then the live one (pgvigil's
   * own health, last so the cached bytes are one prefix); gzip'd, the cached part's compression,
   * then the live part's and the trailer. Chunks, not one buffer: joining would copy the cached
   * megabytes into a fresh allocation at every scrape, which costs more than the rest of the
   * scrape on a busy machine.
   */
  async renderChunks(encoding: MetricsEncoding = 'identity'): Promise<Buffer[]> {
    const cached = await this.cachedPart();
    const prefix = encoding === 'gzip' ? await (cached.gzip ??= gzipPrefix(cached.text)) : null;
    // pgvigil's own health as the background refresh last wrote it (self-metrics.ts).
    const own = this.self.render();
    return prefix === null ? [cached.text, own] : gzipWithTail(prefix, own);
  }

  async render(): Promise<string> {
    return Buffer.concat(await this.renderChunks()).toString('utf8');
  }

  private invalidate(): void {
    this.generation++;
    this.cached = null;
  }

  private async cachedPart(): Promise<CachedPart> {
    const nowMs = this.clock.nowMs();
    if (this.cached !== null && nowMs < this.cached.validUntilMs) return this.cached;
    const generation = this.generation;
    this.renders.inc();
    // One array joined once: `logDerived + samples` would copy the megabytes again (a rope
    // flattened by Buffer.from), 7-8 ms more per render at 14k series (bench/metrics.ts). Rendering
    // the samples evicts stale series, which the series gauge, read after this, then counts.
    const parts = [withNewline(await this.logRegistry.metrics())];
    const oldestSeenMs = this.latest.render(nowMs, parts);
    parts.push(this.firing.render(), withNewline(await this.registry.metrics()));
    const part: CachedPart = {
      text: Buffer.from(parts.join(''), 'utf8'),
      gzip: null,
      validUntilMs: oldestSeenMs + this.latest.staleAfterMs,
    };
    if (generation === this.generation) this.cached = part;
    return part;
  }

  private reservedNames(): Set<string> {
    const names = new Set<string>([ALERT_FIRING_METRIC, ALERT_CAUSE_METRIC, ...this.self.names()]);
    for (const metric of [...this.registry.getMetricsAsArray(), ...this.logRegistry.getMetricsAsArray()]) {
      const name = metric.name;
      for (const suffix of ['', '_bucket', '_sum', '_count']) names.add(name + suffix);
    }
    return names;
  }
}

function withNewline(text: string): string {
  return text === '' || text.endsWith('\n') ? text : `${text}\n`;
}
