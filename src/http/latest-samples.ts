/**
 * The latest value of every polled series, kept ready to print: each series' exposition line is
 * built once, when the series is first seen, and its value text when a sample arrives, so a
 * scrape only concatenates strings (no PostgreSQL query, no per-scrape formatting).
 *
 * Snapshots, as postgres_exporter shows what exists now: a poll run's samples arrive marked as
 * the complete set of that run's series (its key: target, collector, database), and a series the
 * key's previous run produced and this one did not (a dropped table, a table that left a top-N
 * list, a dropped slot, a standby that disconnected) leaves at once. Only a completed run says so:
 * a failed or skipped one sends nothing and changes nothing.
 *
 * Bounded: at most `maxSeries` series; samples of series past the limit are refused and counted
 * (pgvigil_metrics_dropped_series). A series not updated for `staleAfterMs` leaves the exposition
 * and frees its place: the safety net for series no snapshot retires. While a target's latest
 * `pg_up` is 0 (the poller lost the server) its other series are hidden: their values are from
 * before the outage and must not pass for current ones.
 *
 * Labels the store keeps for the rules and the exposition leaves out (STORE_ONLY_LABELS):
 * statement text, users' data that no scrape should carry off, and process ids, which would make
 * a new series of every session Prometheus then keeps for its whole retention. Series that differ
 * only in them are one series here: the largest value of a run (a snapshot) (the longest wait, the oldest
 * holder's age), or the earliest for a timestamp (the oldest transaction's start).
 */
import type { Labels, Sample } from '../domain/index.js';
import type { SnapshotRange } from '../store/store-writer.js';
import { familyHeader, flat, formatLabels, formatValue, isValidLabelName, isValidMetricName } from './exposition.js';

export interface MetricDescription {
  name: string;
  type: 'counter' | 'gauge';
  help: string;
}

export type RefusalReason = 'invalid_name' | 'invalid_label' | 'reserved_name' | 'series_limit';

export interface LatestSamplesOptions {
  maxSeries: number;
  staleAfterMs: number;
  /** HELP/TYPE of the names collectors emit (Collector.metrics). */
  descriptions: readonly MetricDescription[];
  /** Names pgvigil's own metrics use; samples may not take them. */
  reservedNames: ReadonlySet<string>;
}

interface SeriesEntry {
  target: string;
  /** Family name and key within it: where the entry lives, to remove it. */
  name: string;
  key: string;
  /** `name{labels} ` */
  prefix: string;
  /** `value\n`, or '' while the latest value is NULL (never printed as 0). */
  valueText: string;
  value: number | null;
  seenMs: number;
  /** The latest run that produced it; only that run's key may retire it. */
  run: RunSeries | null;
}

/** What one run of a snapshot key produced. */
interface RunSeries {
  entries: SeriesEntry[];
  /** Its series refused for the series limit (their droppedKeys entries). */
  refused: string[];
}

interface Family {
  header: string;
  /** Merged series show the earliest value (timestamps), not the largest. */
  earliest: boolean;
  series: Map<string, SeriesEntry>;
}

/** Statement text and process ids: in the store's samples, never in the exposition. */
export const STORE_ONLY_LABELS: ReadonlySet<string> = new Set(['query', 'pid', 'blocking_pids', 'leader_pid', 'owner_pid']);

/** The poller's reachability sample (1 connected, 0 not). */
const UP_METRIC = 'pg_up';

/** Distinct refused series remembered for the dropped-series gauge, beyond which it saturates. */
const MAX_REMEMBERED_DROPS = 100_000;

export class LatestSamples {
  private readonly families = new Map<string, Family>();
  private readonly descriptions: Map<string, MetricDescription>;
  private seriesCount = 0;
  private readonly droppedKeys = new Set<string>();
  private readonly downTargets = new Set<string>();
  /** The latest run of each snapshot key. */
  private readonly runs = new Map<string, RunSeries>();
  readonly refusedSamples: Record<RefusalReason, number> = { invalid_name: 0, invalid_label: 0, reserved_name: 0, series_limit: 0 };

  constructor(private readonly options: LatestSamplesOptions) {
    this.descriptions = new Map(options.descriptions.map((d) => [d.name, d]));
  }

  get series(): number {
    return this.seriesCount;
  }

  /** Distinct series refused for the series limit (saturates at 100,000). */
  get droppedSeries(): number {
    return this.droppedKeys.size;
  }

  /**
   * Takes a commit's samples in order; `snapshots` marks the ranges that are complete runs (see
   * StoreWriter's WriteBatch.snapshot), each retiring what the previous run of its key had and it lacks.
   */
  add(samples: readonly Sample[], nowMs: number, snapshots: readonly SnapshotRange[] = []): void {
    let at = 0;
    for (const snapshot of snapshots) {
      for (; at < snapshot.start; at++) this.addOne(samples[at]!, nowMs, null);
      const run: RunSeries = { entries: [], refused: [] };
      for (; at < snapshot.end; at++) this.addOne(samples[at]!, nowMs, run);
      this.replaceRun(snapshot.key, run);
    }
    for (; at < samples.length; at++) this.addOne(samples[at]!, nowMs, null);
  }

  get staleAfterMs(): number {
    return this.options.staleAfterMs;
  }

  /**
   * Appends every fresh series to `parts` (joined once by the caller); drops stale ones on the way.
   * Returns when the oldest series kept was last seen (Infinity for none): until that plus
   * staleAfterMs, the same text is still right if no sample arrives.
   */
  render(nowMs: number, parts: string[]): number {
    const staleBeforeMs = nowMs - this.options.staleAfterMs;
    let oldestSeenMs = Infinity;
    for (const [name, family] of this.families) {
      const headerAt = parts.length;
      parts.push(family.header);
      for (const entry of family.series.values()) {
        if (entry.seenMs < staleBeforeMs) {
          this.remove(entry);
          continue;
        }
        if (entry.seenMs < oldestSeenMs) oldestSeenMs = entry.seenMs;
        if (entry.valueText === '' || (this.downTargets.has(entry.target) && name !== UP_METRIC)) continue;
        parts.push(entry.prefix, entry.valueText);
      }
      // Also a family whose every sample was refused (series limit, invalid label).
      if (family.series.size === 0) this.families.delete(name);
      if (parts.length === headerAt + 1) parts.pop();
    }
    return oldestSeenMs;
  }

  private addOne(sample: Sample, nowMs: number, run: RunSeries | null): void {
    if (sample.name === UP_METRIC) {
      if (sample.value === 0) this.downTargets.add(sample.target);
      else this.downTargets.delete(sample.target);
    }
    const family = this.families.get(sample.name) ?? this.newFamily(sample.name);
    if (family === null) return;
    const key = seriesKey(sample.target, sample.labels);
    let entry = family.series.get(key);
    if (entry === undefined) {
      entry = this.newSeries(sample, key, run);
      if (entry === undefined) return;
      family.series.set(key, entry);
    }
    // Samples of one run that share an exposed series (they differed in store-only labels) merge.
    const value = run !== null && entry.run === run ? mergedValue(entry.value, sample.value, family.earliest) : sample.value;
    entry.value = value;
    entry.valueText = value === null ? '' : `${formatValue(value)}\n`;
    entry.seenMs = nowMs;
    if (run !== null) {
      entry.run = run;
      run.entries.push(entry);
    }
  }

  /** `run` is now its key's latest: what the previous one produced and it did not leaves. */
  private replaceRun(key: string, run: RunSeries): void {
    const previous = this.runs.get(key);
    if (previous !== undefined) {
      // An entry a later run (of this key or another) produced again points at that run instead.
      for (const entry of previous.entries) if (entry.run === previous) this.remove(entry);
      if (previous.refused.length > 0) {
        const stillRefused = new Set(run.refused);
        for (const dropKey of previous.refused) if (!stillRefused.has(dropKey)) this.droppedKeys.delete(dropKey);
      }
    }
    if (run.entries.length === 0 && run.refused.length === 0) this.runs.delete(key);
    else this.runs.set(key, run);
  }

  /** No-op for an entry already gone (stale, or retired by another run), so counts stay right. */
  private remove(entry: SeriesEntry): void {
    const family = this.families.get(entry.name);
    if (family?.series.get(entry.key) !== entry) return;
    family.series.delete(entry.key);
    this.seriesCount--;
    if (family.series.size === 0) this.families.delete(entry.name);
  }

  private newFamily(name: string): Family | null {
    if (!isValidMetricName(name)) {
      this.refusedSamples.invalid_name++;
      return null;
    }
    if (this.options.reservedNames.has(name)) {
      this.refusedSamples.reserved_name++;
      return null;
    }
    const description = this.descriptions.get(name);
    const type = description?.type ?? (name.endsWith('_total') ? 'counter' : 'gauge');
    const help = description?.help ?? `${name} as last sampled by pgvigil's collectors.`;
    const family: Family = { header: flat(familyHeader(name, type, help)), earliest: name.endsWith('_timestamp_seconds'), series: new Map() };
    this.families.set(name, family);
    return family;
  }

  private newSeries(sample: Sample, key: string, run: RunSeries | null): SeriesEntry | undefined {
    if (this.seriesCount >= this.options.maxSeries) {
      this.refusedSamples.series_limit++;
      const dropKey = `${sample.name}\u0000${key}`;
      if (this.droppedKeys.size < MAX_REMEMBERED_DROPS) this.droppedKeys.add(dropKey);
      if (run !== null && this.droppedKeys.has(dropKey)) run.refused.push(dropKey);
      return undefined;
    }
    const pairs: Array<[string, string]> = [['target', sample.target]];
    for (const name of Object.keys(sample.labels).sort()) {
      if (name === 'target' || STORE_ONLY_LABELS.has(name)) continue;
      if (!isValidLabelName(name)) {
        this.refusedSamples.invalid_label++;
        return undefined;
      }
      pairs.push([name, sample.labels[name]!]);
    }
    this.seriesCount++;
    this.droppedKeys.delete(`${sample.name}\u0000${key}`);
    return {
      target: sample.target, name: sample.name, key, prefix: flat(sample.name, formatLabels(pairs), ' '), valueText: '', value: null, seenMs: 0, run: null,
    };
  }
}

/** Two values of one exposed series in one run: the largest, or the earliest; NULL only when both are. */
function mergedValue(a: number | null, b: number | null, earliest: boolean): number | null {
  if (a === null || b === null) return a ?? b;
  return earliest ? Math.min(a, b) : Math.max(a, b);
}

/**
 * A series' key within its family: target and the exposed labels in name order. Cheaper than labelsKey (no
 * JSON, and no sort when the collector already gives names in order, as they do) and unambiguous:
 * the separators are control characters no PostgreSQL identifier or text value contains.
 */
function seriesKey(target: string, labels: Labels): string {
  const names = Object.keys(labels);
  for (let i = 1; i < names.length; i++) {
    if (names[i - 1]! > names[i]!) {
      names.sort();
      break;
    }
  }
  let key = target;
  for (const name of names) if (!STORE_ONLY_LABELS.has(name)) key += `\u0000${name}\u0001${labels[name]!}`;
  return key;
}
