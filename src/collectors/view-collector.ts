/**
 * Collectors for views that are "a few label columns + numeric columns" (pg_stat_database,
 * pg_stat_database_conflicts, pg_stat_wal, pg_stat_checkpointer): the SQL and the row mapping are
 * both derived from one column list, so a column's version gate is written once and the query
 * never names a column its server lacks.
 *
 * Metric name: `<name>_<column>`, counters with `_total`; millisecond columns become seconds
 * (`<column>_seconds_total`); byte columns keep `_bytes`.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, MetricDef, MetricType, Row, ServerInfo } from './collector.js';
import { majorVersion } from './collector.js';
import { SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num } from './row.js';

export interface ViewColumn {
  /** Name in the metric and as the SQL alias. */
  column: string;
  type: MetricType;
  help: string;
  /** First major version that has it (default 13). */
  since?: number;
  /** Last major version that has it. */
  until?: number;
  /** SQL for the value when it is not the column itself (a renamed column in older versions). */
  expr?: (major: number) => string;
  unit?: 'ms' | 'bytes';
}

export interface ViewSpec {
  name: string;
  scope: Collector['scope'];
  intervalMs: number;
  /** Default DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
  /** FROM clause, by version. */
  from: (major: number) => string;
  where?: string;
  labels: readonly string[];
  columns: readonly ViewColumn[];
  supports?: (server: ServerInfo) => boolean;
}

function metricName(spec: ViewSpec, c: ViewColumn): string {
  const unit = c.unit === 'ms' ? '_seconds' : '';
  const base = c.unit === 'bytes' && !c.column.endsWith('_bytes') ? `${c.column}_bytes` : `${c.column}${unit}`;
  return `${spec.name}_${base}${c.type === 'counter' ? '_total' : ''}`;
}

const present = (c: ViewColumn, major: number): boolean => major >= (c.since ?? 13) && major <= (c.until ?? Infinity);

export function viewSql(spec: ViewSpec, major: number): string {
  const columns = spec.columns.filter((c) => present(c, major)).map((c) => (c.expr ? `${c.expr(major)} AS ${c.column}` : c.column));
  return `SELECT ${[...spec.labels, ...columns].join(', ')} FROM ${spec.from(major)}${spec.where ? ` WHERE ${spec.where}` : ''}`;
}

export function viewMetrics(spec: ViewSpec): MetricDef[] {
  return spec.columns.map((c) => ({ name: metricName(spec, c), type: c.type, help: c.help }));
}

export function mapView(spec: ViewSpec, rows: readonly Row[], ctx: MapContext): Sample[] {
  const major = majorVersion(ctx.server);
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const columns = spec.columns.filter((c) => present(c, major));
  const defs = columns.map((c) => ({ name: metricName(spec, c), type: c.type, help: c.help }));
  for (const row of rows) {
    const labels = Object.fromEntries(spec.labels.map((l) => [l, label(row, l)]));
    columns.forEach((c, i) => {
      const value = num(row, c.column);
      b.add(defs[i] as MetricDef, labels, value !== null && c.unit === 'ms' ? value / 1000 : value);
    });
  }
  return b.samples;
}

export function viewCollector(spec: ViewSpec, options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: spec.name,
    scope: spec.scope,
    intervalMs: spec.intervalMs,
    ...(spec.timeoutMs ? { timeoutMs: spec.timeoutMs } : {}),
    metrics: viewMetrics(spec),
    ...(spec.supports ? { supports: spec.supports } : {}),
    sql: (server) => viewSql(spec, majorVersion(server)),
    map: (rows, ctx) => mapView(spec, rows, ctx),
  }, options);
}
