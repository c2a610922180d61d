/**
 * Metric names and the builder collectors emit samples through.
 *
 * Naming rules (what an operator reads; `promtool check metrics` must accept them):
 * - postgres_exporter's name where one exists (`pg_stat_user_tables_n_dead_tup`), with the unit
 *   spelled out (`_bytes`, `_seconds`, `_xids`) and converted to it (ms columns become seconds).
 * - Counters keep the server's raw cumulative value and end in `_total`; names never end in
 *   `_count`, `_sum` or `_bucket` (reserved for histograms), so `vacuum_count` is exported as
 *   `vacuum_count_total`.
 * - Timestamps are epoch seconds and end in `_timestamp_seconds`.
 * - Booleans are 1/0 gauges; text states are `_info`-style gauges with the state as a label.
 */
import type { Labels, Sample } from '../domain/index.js';
import type { MetricDef, MetricType } from './collector.js';

type DefSpec = readonly [MetricType, string];

/** `metricDefs('pg_x', { a_total: counter('...') })` -> { a_total: { name: 'pg_x_a_total', ... } } */
export function metricDefs<K extends string>(prefix: string, specs: Record<K, DefSpec>): Record<K, MetricDef> {
  const out = {} as Record<K, MetricDef>;
  for (const key of Object.keys(specs) as K[]) {
    const [type, help] = specs[key];
    out[key] = { name: `${prefix}_${key}`, type, help };
  }
  return out;
}

export const counter = (help: string): DefSpec => ['counter', help];
export const gauge = (help: string): DefSpec => ['gauge', help];

/** Collects the samples of one collector run: one target, one timestamp. */
export class SampleBuilder {
  readonly samples: Sample[] = [];

  constructor(
    private readonly target: string,
    private readonly tsMs: number,
  ) {}

  add(def: MetricDef, labels: Labels, value: number | null): void {
    this.samples.push({ target: this.target, name: def.name, labels, tsMs: this.tsMs, value });
  }
}
