/**
 * Sample: one value of one time series at one instant, produced by a collector.
 *
 * Series identity is `name` + `labels`. Names follow Prometheus conventions with units
 * (`_bytes`, `_seconds`, `_xids`); counters keep their raw cumulative value (rates are derived
 * at read time). A null value means "the server reported NULL" and is stored as such, never 0.
 */
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  /** Target (server) name from the config; also added as the `target` label on output. */
  target: string;
  name: string;
  labels: Labels;
  tsMs: number;
  value: number | null;
}

/** Canonical string for a label set: keys sorted, so equal sets give equal keys. */
export function labelsKey(labels: Labels): string {
  const keys = Object.keys(labels).sort();
  return JSON.stringify(keys.map((k) => [k, labels[k]]));
}
