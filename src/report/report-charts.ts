/**
 * The data of the incident report's charts: what the log says (autovacuum reports, lock waits)
 * and what the poller sampled (xmin horizon holders, replica lag, slot WAL, lock waits). Log
 * charts fill from the window's events, so a store written by `pgvigil analyze --db` has them;
 * a series chart with nothing stored says "not sampled" rather than drawing an empty box.
 * Pure: events and stored series in, chart data out; report-svg.ts draws them.
 */
import type { AnyLogEvent } from '../domain/index.js';

export type ChartUnit = 'rows' | 'xids' | 'seconds' | 'milliseconds' | 'bytes' | 'count';

export interface ChartLine {
  label: string;
  source: 'log' | 'samples';
  /** [epoch ms, value], oldest first. */
  points: Array<[number, number | null]>;
}

export interface ReportChart {
  id: string;
  title: string;
  unit: ChartUnit;
  lines: ChartLine[];
  /** Why there is nothing to draw ("not sampled", "no autovacuum report in this window"); null when lines has some. */
  empty_reason: string | null;
  /** Lines left out past the cap (the highest peaks are kept). */
  lines_omitted: number;
}

/** A stored series of one metric, as StoreQueries.series returns it. */
export interface SampledSeries {
  target: string;
  labels: Record<string, string>;
  points: Array<[number, number | null]>;
}

/** The stored series of one metric in the window, or why they were not read (too many of them). */
export type SampledMetric = SampledSeries[] | { unread: string };

/** The metrics the series charts read; the store is asked for each by name. */
export const CHART_METRICS = {
  horizonHolder: 'pg_xmin_horizon_holder_age_xids',
  replayLag: 'pg_stat_replication_replay_lag_seconds',
  replayStandingStill: 'pg_standby_replay_standing_still_seconds',
  slotRetainedWal: 'pg_replication_slots_retained_wal_bytes',
  lockMaxWait: 'pg_lock_waits_max_wait_seconds',
} as const;

export type ChartMetric = (typeof CHART_METRICS)[keyof typeof CHART_METRICS];

/** Lines per chart: beyond this a chart is a smear; the highest peaks tell the story. */
const MAX_LINES = 8;

/** Collects the log side of the charts event by event (the report reads each event once). */
export class LogChartCollector {
  private readonly deadNotRemovable = new Lines();
  private readonly cutoffAge = new Lines();
  private readonly vacuumElapsed = new Lines();
  private readonly lockWaits = new Lines();
  private autovacuumRuns = 0;

  add(event: AnyLogEvent): void {
    if (event.kind === 'autovacuum') {
      const d = event.details;
      this.autovacuumRuns++;
      this.deadNotRemovable.add(d.database, event.tsMs, d.tuples_dead_not_removable);
      this.cutoffAge.add(d.database, event.tsMs, d.removable_cutoff_age_xids);
      this.vacuumElapsed.add(`${d.database}.${d.schema}.${d.table}`, event.tsMs, d.elapsed_s);
    } else if (event.kind === 'lock_wait' && event.details.wait_ms !== null) {
      this.lockWaits.add(`${event.database ?? event.target} (log)`, event.tsMs, event.details.wait_ms / 1_000);
    }
  }

  /** The charts in the order a DBA reads them: horizon first, then what it caused. */
  charts(sampled: (metric: ChartMetric) => SampledMetric): ReportChart[] {
    const noVacuum = this.autovacuumRuns === 0 ? 'no autovacuum report in this window' : null;
    const read = new Map(Object.values(CHART_METRICS).map((m) => [m, sampled(m)]));
    const unread = (...metrics: ChartMetric[]) => metrics.map((m) => read.get(m)).find((r): r is { unread: string } => r !== undefined && 'unread' in r)?.unread ?? null;
    const lines = (metric: ChartMetric, name: (labels: Record<string, string>) => string) => {
      const series = read.get(metric)!;
      return 'unread' in series ? [] : sampledLines(series, name);
    };
    const whenEmpty = (...metrics: ChartMetric[]) => unread(...metrics) ?? 'not sampled';
    return [
      chart('dead_not_removable', 'Dead rows not removable, per database (autovacuum reports)', 'rows', this.deadNotRemovable.lines('log'), noVacuum),
      chart('removable_cutoff_age', 'Removable cutoff age, per database (autovacuum reports)', 'xids', this.cutoffAge.lines('log'), noVacuum),
      chart('xmin_horizon', 'xmin horizon age, per holder', 'xids', lines(CHART_METRICS.horizonHolder, holderName), whenEmpty(CHART_METRICS.horizonHolder)),
      chart('replica_lag', 'Replica replay lag and replay standing still', 'seconds', [
        ...lines(CHART_METRICS.replayLag, (l) => `replay lag ${l.application_name || '?'}`),
        ...lines(CHART_METRICS.replayStandingStill, () => 'replay standing still'),
      ], whenEmpty(CHART_METRICS.replayLag, CHART_METRICS.replayStandingStill)),
      chart('slot_retained_wal', 'WAL retained by replication slots', 'bytes', lines(CHART_METRICS.slotRetainedWal, (l) => l.slot_name || '?'), whenEmpty(CHART_METRICS.slotRetainedWal)),
      chart('lock_waits', 'Lock waits: longest wait per database (sampled) and each logged wait', 'seconds',
        [...lines(CHART_METRICS.lockMaxWait, (l) => l.datname || '?'), ...this.lockWaits.lines('log')], unread(CHART_METRICS.lockMaxWait) ?? 'no lock wait logged or sampled'),
      chart('autovacuum_elapsed', 'Autovacuum elapsed, per table', 'seconds', this.vacuumElapsed.lines('log'), noVacuum),
    ];
  }
}

/** Who holds the horizon, in the words of pg_stat_activity / pg_replication_slots. */
function holderName(labels: Record<string, string>): string {
  const who = labels.kind === 'backend'
    ? `${labels.owner || labels.backend_type || 'session'} pid ${labels.pid || '?'}${labels.datname ? ` on ${labels.datname}` : ''}${labels.state ? ` (${labels.state})` : ''}`
    : `${labels.kind ?? '?'} ${labels.name || labels.pid || ''}`.trim();
  return labels.query ? `${who}: ${labels.query}` : who;
}

function sampledLines(series: SampledSeries[], name: (labels: Record<string, string>) => string): ChartLine[] {
  const targets = new Set(series.map((s) => s.target));
  return series
    .filter((s) => s.points.length > 0)
    .map((s) => ({ label: targets.size > 1 ? `${s.target}: ${name(s.labels)}` : name(s.labels), source: 'samples' as const, points: s.points }));
}

function chart(id: string, title: string, unit: ChartUnit, all: ChartLine[], whenEmpty: string | null): ReportChart {
  const ranked = [...all].sort((a, b) => peak(b) - peak(a));
  const lines = ranked.slice(0, MAX_LINES);
  return { id, title, unit, lines, empty_reason: lines.length > 0 ? null : (whenEmpty ?? 'nothing in this window'), lines_omitted: ranked.length - lines.length };
}

function peak(line: ChartLine): number {
  return line.points.reduce((max, [, v]) => (v !== null && v > max ? v : max), Number.NEGATIVE_INFINITY);
}

class Lines {
  private readonly byLabel = new Map<string, Array<[number, number | null]>>();

  add(label: string, tsMs: number, value: number | null): void {
    if (value === null) return;
    let points = this.byLabel.get(label);
    if (!points) this.byLabel.set(label, (points = []));
    points.push([tsMs, value]);
  }

  lines(source: ChartLine['source']): ChartLine[] {
    return [...this.byLabel].map(([label, points]) => ({ label, source, points }));
  }
}
