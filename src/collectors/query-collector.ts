/**
 * The common shape of a stateless collector: one query chosen by server version, rows mapped to
 * samples by a pure function. Collectors that keep history (change rate, replay progress) wrap
 * the mapping themselves.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, MetricDef, Row, ServerInfo } from './collector.js';
import { DEFAULT_TIMEOUT_MS } from './collector.js';

export interface QueryCollectorSpec {
  name: string;
  scope: Collector['scope'];
  intervalMs: number;
  /** Default DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
  metrics: readonly MetricDef[];
  supports?: (server: ServerInfo) => boolean;
  activeDatabasesSql?: (server: ServerInfo) => string;
  sql(server: ServerInfo): string;
  params?: readonly unknown[];
  map(rows: readonly Row[], ctx: MapContext): Sample[];
}

export function queryCollector(spec: QueryCollectorSpec, options: CollectorOptions = {}): Collector {
  return {
    name: spec.name,
    intervalMs: options.intervalMs ?? spec.intervalMs,
    timeoutMs: options.timeoutMs ?? spec.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    scope: spec.scope,
    metrics: spec.metrics,
    supports: spec.supports ?? (() => true),
    ...(spec.activeDatabasesSql ? { activeDatabasesSql: spec.activeDatabasesSql } : {}),
    async collect(ctx) {
      return spec.map(await ctx.query(spec.sql(ctx.server), spec.params), ctx);
    },
  };
}
