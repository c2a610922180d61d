/**
 * The maintenance section: autovacuum and autoanalyze runs per table (from their log reports,
 * log_autovacuum_min_duration): how often, how long, what vacuum removed and could not remove,
 * its index scans, the buffers and WAL both used, the runs a conflicting lock request cancelled;
 * and runs per minute.
 *
 * Tables past limits.maxKeys are added up under `other`. A figure no run printed (13's one-line
 * autoanalyze report has no buffers or WAL) stays null, never 0.
 */
import type { AnyLogEvent, AutoanalyzeDetails, AutovacuumDetails, LogEvent } from '../../domain/index.js';
import { cappedEntry, emptyCappedMap, maxOf, mergeCappedMap, msToSeconds, secondsToMs, sumOf, type CappedMap } from './figures.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportSection } from './section.js';

/** Figures both reports print, summed over runs. */
const USAGE_SUMS = ['elapsed_ms', 'buffer_hits', 'buffer_reads', 'buffer_dirtied', 'wal_records', 'wal_fpi', 'wal_bytes'] as const;
/** Figures only the vacuum report prints, summed over runs. */
const VACUUM_SUMS = ['tuples_removed', 'tuples_dead_not_removable', 'index_scans', 'pages_removed'] as const;
/** Worst single run. */
const USAGE_MAXES = ['max_elapsed_ms'] as const;
const VACUUM_MAXES = ['max_dead_not_removable', 'max_removable_cutoff_age_xids'] as const;

type Figures<K extends string> = Record<K, number | null>;

/** `cancelled`: runs cancelled by a conflicting lock request (`canceling autovacuum task`), which log no report. */
type AnalyzeRuns = { runs: number; cancelled: number } & Figures<(typeof USAGE_SUMS)[number] | (typeof USAGE_MAXES)[number]>;
type VacuumRuns = AnalyzeRuns & { aggressive_runs: number; wraparound_runs: number }
  & Figures<(typeof VACUUM_SUMS)[number] | (typeof VACUUM_MAXES)[number]>;

interface KindState<Runs> {
  runs: number;
  tables: CappedMap<Runs>;
  /** Runs on tables past limits.maxKeys, added up. */
  other: Runs;
}

export interface MaintenanceState {
  autovacuum: KindState<VacuumRuns>;
  autoanalyze: KindState<AnalyzeRuns>;
  per_minute: PerMinute;
}

/** Per table in a result: elapsed times in seconds. */
type ResultRuns<Runs> = { table: string } & Omit<Runs, 'elapsed_ms' | 'max_elapsed_ms'> & { elapsed_s: number | null; max_elapsed_s: number | null };

export interface MaintenanceKindResult<Runs> {
  runs: number;
  /** Distinct tables itemised (at most limits.maxKeys). */
  tables_total: number;
  /** The limits.topN tables with the most elapsed time. */
  tables: Array<ResultRuns<Runs>>;
  /** Runs on tables past limits.maxKeys; null when there were none. */
  other: ResultRuns<Runs> | null;
}

export interface MaintenanceResult {
  autovacuum: MaintenanceKindResult<VacuumRuns>;
  autoanalyze: MaintenanceKindResult<AnalyzeRuns>;
  per_minute: MinuteRow[];
}

function nulls<K extends string>(fields: readonly K[]): Figures<K> {
  return Object.fromEntries(fields.map((f) => [f, null])) as Figures<K>;
}

function emptyAnalyzeRuns(): AnalyzeRuns {
  return { runs: 0, cancelled: 0, ...nulls(USAGE_SUMS), ...nulls(USAGE_MAXES) };
}

function emptyVacuumRuns(): VacuumRuns {
  return { ...emptyAnalyzeRuns(), aggressive_runs: 0, wraparound_runs: 0, ...nulls(VACUUM_SUMS), ...nulls(VACUUM_MAXES) };
}

function emptyKind<Runs>(make: () => Runs): KindState<Runs> {
  return { runs: 0, tables: emptyCappedMap(), other: make() };
}

/**
 * One run's figures in the shape of the totals, so that adding a run and merging are one fold.
 * Written out field by field: a spread of the analyze figures into the vacuum ones cost ~50 µs a
 * run in V8, most of the time of a log's maintenance section.
 */
function analyzeRun(d: AutoanalyzeDetails): AnalyzeRuns {
  const elapsedMs = secondsToMs(d.elapsed_s);
  return {
    runs: 1, cancelled: 0, elapsed_ms: elapsedMs, max_elapsed_ms: elapsedMs, buffer_hits: d.buffer_hits, buffer_reads: d.buffer_reads,
    buffer_dirtied: d.buffer_dirtied, wal_records: d.wal_records, wal_fpi: d.wal_fpi, wal_bytes: d.wal_bytes,
  };
}

function vacuumRun(d: AutovacuumDetails): VacuumRuns {
  const elapsedMs = secondsToMs(d.elapsed_s);
  return {
    runs: 1, cancelled: 0, elapsed_ms: elapsedMs, max_elapsed_ms: elapsedMs, buffer_hits: d.buffer_hits, buffer_reads: d.buffer_reads,
    buffer_dirtied: d.buffer_dirtied, wal_records: d.wal_records, wal_fpi: d.wal_fpi, wal_bytes: d.wal_bytes,
    aggressive_runs: d.aggressive ? 1 : 0, wraparound_runs: d.wraparound ? 1 : 0,
    tuples_removed: d.tuples_removed, tuples_dead_not_removable: d.tuples_dead_not_removable, index_scans: d.index_scans,
    pages_removed: d.pages_removed, max_dead_not_removable: d.tuples_dead_not_removable,
    max_removable_cutoff_age_xids: d.removable_cutoff_age_xids,
  };
}

function addAnalyzeRuns(into: AnalyzeRuns, from: AnalyzeRuns): void {
  into.runs += from.runs;
  into.cancelled += from.cancelled;
  for (const f of USAGE_SUMS) into[f] = sumOf(into[f], from[f]);
  for (const f of USAGE_MAXES) into[f] = maxOf(into[f], from[f]);
}

function addVacuumRuns(into: VacuumRuns, from: VacuumRuns): void {
  addAnalyzeRuns(into, from);
  into.aggressive_runs += from.aggressive_runs;
  into.wraparound_runs += from.wraparound_runs;
  for (const f of VACUUM_SUMS) into[f] = sumOf(into[f], from[f]);
  for (const f of VACUUM_MAXES) into[f] = maxOf(into[f], from[f]);
}

function addRun<Runs>(kind: KindState<Runs>, table: string, run: Runs, maxKeys: number, make: () => Runs, add: (into: Runs, from: Runs) => void): void {
  kind.runs++;
  add(cappedEntry(kind.tables, table, maxKeys, make) ?? kind.other, run);
}

/**
 * The ERROR an autovacuum worker logs when a lock request that conflicts with its table lock
 * cancels it (57014, postgres.c; 13-19), with the CONTEXT naming the run: `automatic vacuum of
 * table "db.schema.table"` (or analyze). English only, like the classifiers' texts.
 */
const CANCELLED = 'canceling autovacuum task';
const CANCELLED_RUN = /^automatic (vacuum|analyze) of table "(.+)"$/;

/** The run an autovacuum cancellation names in its CONTEXT; null for any other event. */
function cancelledRun(event: AnyLogEvent): { kind: 'autovacuum' | 'autoanalyze'; table: string } | null {
  if (event.kind !== 'generic' || event.level !== 'ERROR' || event.message !== CANCELLED) return null;
  const run = CANCELLED_RUN.exec(event.details.context ?? '');
  if (run?.[2] === undefined) return null;
  return { kind: run[1] === 'vacuum' ? 'autovacuum' : 'autoanalyze', table: run[2] };
}

function mergeKind<Runs>(earlier: KindState<Runs>, later: KindState<Runs>, maxKeys: number, add: (into: Runs, from: Runs) => void): void {
  earlier.runs += later.runs;
  mergeCappedMap(earlier.tables, later.tables, maxKeys, add, (overflow) => add(earlier.other, overflow));
  add(earlier.other, later.other);
}

function tableName(d: { database: string; schema: string; table: string }): string {
  return `${d.database}.${d.schema}.${d.table}`;
}

function resultRuns<Runs extends AnalyzeRuns>(table: string, runs: Runs): ResultRuns<Runs> {
  const { elapsed_ms: elapsedMs, max_elapsed_ms: maxElapsedMs, ...rest } = runs;
  return { table, ...rest, elapsed_s: msToSeconds(elapsedMs), max_elapsed_s: msToSeconds(maxElapsedMs) };
}

function kindResult<Runs extends AnalyzeRuns>(kind: KindState<Runs>, topN: number): MaintenanceKindResult<Runs> {
  const tables = Object.entries(kind.tables.entries)
    .sort(([a, x], [b, y]) => (y.elapsed_ms ?? 0) - (x.elapsed_ms ?? 0) || y.runs - x.runs || (a < b ? -1 : 1))
    .slice(0, topN)
    .map(([table, runs]) => resultRuns(table, runs));
  return { runs: kind.runs, tables_total: kind.tables.size, tables, other: kind.other.runs > 0 || kind.other.cancelled > 0 ? resultRuns('(other)', kind.other) : null };
}

export const maintenanceSection: ReportSection<MaintenanceState, MaintenanceResult> = {
  key: 'maintenance',

  empty: () => ({ autovacuum: emptyKind(emptyVacuumRuns), autoanalyze: emptyKind(emptyAnalyzeRuns), per_minute: {} }),

  add(state, event, limits) {
    if (event.kind === 'autovacuum') {
      const e: LogEvent<'autovacuum'> = event;
      addRun(state.autovacuum, tableName(e.details), vacuumRun(e.details), limits.maxKeys, emptyVacuumRuns, addVacuumRuns);
      countInMinute(state.per_minute, e.tsMs, 'autovacuum');
    } else if (event.kind === 'autoanalyze') {
      addRun(state.autoanalyze, tableName(event.details), analyzeRun(event.details), limits.maxKeys, emptyAnalyzeRuns, addAnalyzeRuns);
      countInMinute(state.per_minute, event.tsMs, 'autoanalyze');
    } else {
      const cancelled = cancelledRun(event);
      if (cancelled === null) return;
      const kind: KindState<AnalyzeRuns> = state[cancelled.kind];
      const make = cancelled.kind === 'autovacuum' ? emptyVacuumRuns : emptyAnalyzeRuns;
      (cappedEntry(kind.tables, cancelled.table, limits.maxKeys, make) ?? kind.other).cancelled++;
      countInMinute(state.per_minute, event.tsMs, 'cancelled');
    }
  },

  merge(earlier, later, limits) {
    mergeKind(earlier.autovacuum, later.autovacuum, limits.maxKeys, addVacuumRuns);
    mergeKind(earlier.autoanalyze, later.autoanalyze, limits.maxKeys, addAnalyzeRuns);
    earlier.per_minute = mergePerMinute(earlier.per_minute, later.per_minute);
    return earlier;
  },

  result(state, limits) {
    return {
      autovacuum: kindResult(state.autovacuum, limits.topN),
      autoanalyze: kindResult(state.autoanalyze, limits.topN),
      per_minute: perMinuteRows(state.per_minute, ['autovacuum', 'autoanalyze', 'cancelled']),
    };
  },
};
