/**
 * The summary `pgvigil analyze` prints: a pure, incremental fold over events. Memory stays flat
 * whatever the size of the logs: per-table and per-relation maps are capped (the overflow is
 * counted, not dropped silently), per-minute counts are kept for a sliding window only and closed
 * minutes compete for a fixed-size top list.
 *
 * Owns: aggregation. Never: reading files or formatting text (analyze-text.ts does that).
 */
import type { AnyLogEvent, EventKind, LogEvent, LogLevel } from '../domain/index.js';
import { EVENT_KINDS, lockObjectName } from '../domain/index.js';
import { deadlockCycle, type DeadlockCycle } from './log-report/locks.js';
import { ServerStarts, type ServerStartCounts } from './server-starts.js';

export interface SummaryLimits {
  /** Distinct tables / relations / reasons kept; further keys are folded into `other`. */
  maxKeys: number;
  /** Entries in each ranked list of the result. */
  topN: number;
  /**
   * Minutes kept open for late (out-of-order) events. Logs are written nearly in time order, so a
   * minute this far behind the newest one is final and leaves the window for the top list.
   */
  openMinutes: number;
}

export const DEFAULT_LIMITS: SummaryLimits = { maxKeys: 10_000, topN: 20, openMinutes: 10 };

export interface TableVacuumStats {
  table: string;
  runs: number;
  aggressive_runs: number;
  wraparound_runs: number;
  total_elapsed_s: number;
  max_elapsed_s: number | null;
  max_dead_not_removable: number | null;
  max_removable_cutoff_age_xids: number | null;
  tuples_removed: number;
}

export interface TableAnalyzeStats {
  table: string;
  runs: number;
  total_elapsed_s: number;
  max_elapsed_s: number | null;
}

export interface MinuteStats {
  /** Start of the minute, ISO 8601 UTC. */
  minute: string;
  events: number;
  /** Events other than `generic`. */
  notable: number;
  /** Events at ERROR, FATAL or PANIC. */
  errors: number;
}

export interface Ranked {
  key: string;
  count: number;
}

/**
 * Consecutive generic events of one minute, level and SQLSTATE: all the summary reads of them.
 * `analyze -j N` workers send generic events this way (generic-columns.ts), most of a log in a
 * few runs per minute.
 */
export interface GenericRun {
  level: LogLevel;
  sqlstate: string | null;
  count: number;
  minTsMs: number;
  maxTsMs: number;
}

/** The errors_by_sqlstate key of errors logged without a SQLSTATE (a stderr log_line_prefix without %e). */
export const NO_SQLSTATE = '(none)';

export interface AnalyzeSummary {
  events: number;
  first_ts: string | null;
  last_ts: string | null;
  events_by_kind: Record<EventKind, number>;
  events_by_level: Partial<Record<LogLevel, number>>;
  errors_by_sqlstate: Ranked[];
  autovacuum: { runs: number; tables: TableVacuumStats[]; tables_total: number; other_tables_runs: number };
  autoanalyze: { runs: number; tables: TableAnalyzeStats[]; tables_total: number; other_tables_runs: number };
  recovery_conflicts: { total: number; fatal: number; by_reason: Ranked[] };
  lock_timeouts: { total: number; by_relation: Ranked[] };
  lock_waits: { total: number; by_phase: Ranked[]; max_wait_ms: number | null };
  /** Each with its whole cycle (the DETAIL's processes, locks and statements), the first topN. */
  deadlocks: { count: number; cycles: DeadlockCycle[] };
  /** Completed checkpoints and restartpoints: one per `complete` line, its `starting` line not counted. */
  checkpoints: { completed: number; max_total_s: number | null; too_frequent: number };
  /** What the server_restart events (one per start, stop or recovery line) add up to. */
  server_starts: ServerStartCounts;
  temp_files: { count: number; total_bytes: number; max_bytes: number | null };
  server_crashes: number;
  busiest_minutes: MinuteStats[];
}

/** A capped count map: keys past the cap are counted under `otherCount`. */
class CappedMap<V> {
  readonly map = new Map<string, V>();
  otherCount = 0;
  constructor(private readonly maxKeys: number) {}

  /** The value for key, created with `make` while under the cap; undefined once over it. */
  get(key: string, make: () => V): V | undefined {
    let value = this.map.get(key);
    if (value === undefined) {
      if (this.map.size >= this.maxKeys) return undefined;
      value = make();
      this.map.set(key, value);
    }
    return value;
  }
}

/**
 * Per-table values under a cap like CappedMap's, found by the table name and then the database
 * and schema: no "db.schema.table" string is built and hashed for every vacuum and analyze report.
 * The classifiers cut a name at its first and last dot (splitQualifiedName), so database and table
 * hold no dot and the three names tell tables apart exactly as the joined name does.
 */
class TableMap<V> {
  private readonly byTable = new Map<string, Array<{ database: string; schema: string; value: V }>>();
  readonly values: V[] = [];
  otherCount = 0;
  constructor(private readonly maxKeys: number) {}

  /** The table's value, created with `make` (given the joined name) while under the cap; undefined once over it. */
  get(name: { database: string; schema: string; table: string }, make: (table: string) => V): V | undefined {
    let bucket = this.byTable.get(name.table);
    if (bucket !== undefined) {
      for (const known of bucket) if (known.database === name.database && known.schema === name.schema) return known.value;
    }
    if (this.values.length >= this.maxKeys) return undefined;
    const value = make(`${name.database}.${name.schema}.${name.table}`);
    if (bucket === undefined) this.byTable.set(name.table, (bucket = []));
    bucket.push({ database: name.database, schema: name.schema, value });
    this.values.push(value);
    return value;
  }
}

class Counter {
  private readonly counts: CappedMap<{ n: number }>;
  constructor(maxKeys: number) {
    this.counts = new CappedMap(maxKeys);
  }
  add(key: string, n = 1): void {
    const entry = this.counts.get(key, () => ({ n: 0 }));
    if (entry) entry.n += n;
    else this.counts.otherCount += n;
  }
  top(n: number): Ranked[] {
    const ranked = [...this.counts.map].map(([key, { n: count }]) => ({ key, count }));
    ranked.sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
    const top = ranked.slice(0, n);
    const rest = ranked.slice(n).reduce((sum, r) => sum + r.count, 0) + this.counts.otherCount;
    if (rest > 0) top.push({ key: '(other)', count: rest });
    return top;
  }
}

export const MINUTE_MS = 60_000;

/** Start of the minute an event is counted in (busiest_minutes); a GenericRun stays within one. */
export function minuteStartMs(tsMs: number): number {
  return Math.floor(tsMs / MINUTE_MS) * MINUTE_MS;
}

function isErrorLevel(level: LogLevel): boolean {
  return level === 'ERROR' || level === 'FATAL' || level === 'PANIC';
}

/**
 * A lock_timeout names no lock before PG 19; it borrows the lock its pid was logged waiting for
 * (log_lock_waits, after deadlock_timeout) when that wait is recent and was not acquired.
 */
const BORROW_LOCK_WITHIN_MS = 10 * MINUTE_MS;
const UNKNOWN_LOCK = '(not logged: PostgreSQL < 19 names no lock in a lock timeout)';

export class AnalyzeSummaryBuilder {
  private readonly limits: SummaryLimits;
  private events = 0;
  private firstTsMs: number | null = null;
  private lastTsMs: number | null = null;
  private readonly byKind = Object.fromEntries(EVENT_KINDS.map((k) => [k, 0])) as Record<EventKind, number>;
  private genericEvents = 0;
  private readonly byLevel: Partial<Record<LogLevel, number>> = {};
  private logEvents = 0;
  private readonly sqlstates: Counter;
  private readonly vacuums: TableMap<TableVacuumStats>;
  private vacuumRuns = 0;
  private readonly analyzes: TableMap<TableAnalyzeStats>;
  private analyzeRuns = 0;
  private readonly conflictReasons: Counter;
  private conflicts = { total: 0, fatal: 0 };
  private readonly lockTimeoutRelations: Counter;
  private lockTimeouts = 0;
  private readonly lockWaitPhases: Counter;
  private lockWaits = 0;
  private maxLockWaitMs: number | null = null;
  /** pid -> the lock it is logged waiting for (until it acquires it); oldest pids evicted first. */
  private readonly waitingByPid = new Map<number, { lock: string; tsMs: number }>();
  private deadlocks = { count: 0, cycles: [] as DeadlockCycle[] };
  private readonly serverStarts = new ServerStarts();
  private checkpoints = { completed: 0, max_total_s: null as number | null, too_frequent: 0 };
  private tempFiles = { count: 0, total_bytes: 0, max_bytes: null as number | null };
  private serverCrashes = 0;
  private readonly openMinutes = new Map<number, MinuteStats>();
  private newestMinuteMs = -Infinity;
  private topMinutes: MinuteStats[] = [];
  /** The open minute the previous event fell in (a cache; null after it was closed). */
  private lastMinute: MinuteStats | null = null;
  private lastMinuteMs = 0;

  constructor(limits: Partial<SummaryLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
    const max = this.limits.maxKeys;
    this.sqlstates = new Counter(max);
    this.vacuums = new TableMap(max);
    this.analyzes = new TableMap(max);
    this.conflictReasons = new Counter(max);
    this.lockTimeoutRelations = new Counter(max);
    this.lockWaitPhases = new Counter(max);
  }

  add(event: AnyLogEvent): void {
    this.events++;
    // Generic LOG events are most of a busy log: counted apart, without a keyed store each.
    const generic = event.kind === 'generic';
    if (generic) this.genericEvents++;
    else this.byKind[event.kind]++;
    const error = this.countLevel(event.level, event.sqlstate, 1);
    this.spanTime(event.tsMs, event.tsMs);
    this.countMinute(event.tsMs, 1, generic ? 0 : 1, error);
    if (!generic) this.addKind(event);
  }

  /** Adds `run.count` generic events at once, exactly as adding them one by one. */
  addGenericRun(run: GenericRun): void {
    this.events += run.count;
    this.genericEvents += run.count;
    const error = this.countLevel(run.level, run.sqlstate, run.count);
    this.spanTime(run.minTsMs, run.maxTsMs);
    this.countMinute(run.minTsMs, run.count, 0, error);
  }

  /** Counts `n` events of a level (and their SQLSTATE if errors); true for an error level. */
  private countLevel(level: LogLevel, sqlstate: string | null, n: number): boolean {
    if (level === 'LOG') {
      if (this.logEvents === 0) this.byLevel.LOG = 0; // keeps the level's place in the key order
      this.logEvents += n;
    } else {
      this.byLevel[level] = (this.byLevel[level] ?? 0) + n;
    }
    const error = isErrorLevel(level);
    if (error) this.sqlstates.add(sqlstate ?? NO_SQLSTATE, n);
    return error;
  }

  private spanTime(minTsMs: number, maxTsMs: number): void {
    if (this.firstTsMs === null || minTsMs < this.firstTsMs) this.firstTsMs = minTsMs;
    if (this.lastTsMs === null || maxTsMs > this.lastTsMs) this.lastTsMs = maxTsMs;
  }

  private addKind(event: AnyLogEvent): void {
    switch (event.kind) {
      case 'autovacuum': return this.addVacuum(event);
      case 'autoanalyze': return this.addAnalyze(event);
      case 'recovery_conflict':
        this.conflicts.total++;
        if (event.details.fatal) this.conflicts.fatal++;
        return this.conflictReasons.add(event.details.reason ?? '(unknown)');
      case 'lock_timeout': {
        this.lockTimeouts++;
        const named = event.details.lock_object ? lockObjectName(event.details.lock_object) : undefined;
        return this.lockTimeoutRelations.add(named ?? this.lockWaitedOn(event) ?? UNKNOWN_LOCK);
      }
      case 'lock_wait': {
        this.lockWaits++;
        this.lockWaitPhases.add(event.details.phase);
        const waitMs = event.details.wait_ms;
        if (waitMs !== null) this.maxLockWaitMs = Math.max(this.maxLockWaitMs ?? waitMs, waitMs);
        const pid = event.details.waiting_pid;
        this.waitingByPid.delete(pid);
        if (event.details.phase !== 'waiting') return;
        if (this.waitingByPid.size >= this.limits.maxKeys) this.waitingByPid.delete(this.waitingByPid.keys().next().value!);
        this.waitingByPid.set(pid, { lock: lockObjectName(event.details.lock_object), tsMs: event.tsMs });
        return;
      }
      case 'deadlock':
        this.deadlocks.count++;
        if (this.deadlocks.cycles.length < this.limits.topN) this.deadlocks.cycles.push(deadlockCycle(event, event.details));
        return;
      case 'server_restart':
        return this.serverStarts.add(event.details);
      case 'checkpoint': {
        const d = event.details;
        if (d.phase === 'complete') {
          this.checkpoints.completed++;
          if (d.total_s !== null) this.checkpoints.max_total_s = Math.max(this.checkpoints.max_total_s ?? d.total_s, d.total_s);
        } else if (d.phase === 'too_frequent') {
          this.checkpoints.too_frequent++;
        }
        return;
      }
      case 'temp_file': {
        const bytes = event.details.size_bytes;
        this.tempFiles.count++;
        this.tempFiles.total_bytes += bytes;
        this.tempFiles.max_bytes = Math.max(this.tempFiles.max_bytes ?? bytes, bytes);
        return;
      }
      case 'server_crash':
        this.serverCrashes++;
        return;
      default:
        return;
    }
  }

  /** The lock this pid was logged waiting for shortly before its lock timeout (before PG 19). */
  private lockWaitedOn(event: AnyLogEvent): string | undefined {
    if (event.pid === null) return undefined;
    const waiting = this.waitingByPid.get(event.pid);
    if (!waiting || event.tsMs - waiting.tsMs > BORROW_LOCK_WITHIN_MS) return undefined;
    this.waitingByPid.delete(event.pid);
    return waiting.lock;
  }

  private addVacuum(event: LogEvent<'autovacuum'>): void {
    const d = event.details;
    this.vacuumRuns++;
    const stats = this.vacuums.get(d, newVacuumStats);
    if (!stats) {
      this.vacuums.otherCount++;
      return;
    }
    stats.runs++;
    if (d.aggressive) stats.aggressive_runs++;
    if (d.wraparound) stats.wraparound_runs++;
    stats.total_elapsed_s += d.elapsed_s ?? 0;
    stats.max_elapsed_s = maxOf(stats.max_elapsed_s, d.elapsed_s);
    stats.max_dead_not_removable = maxOf(stats.max_dead_not_removable, d.tuples_dead_not_removable);
    stats.max_removable_cutoff_age_xids = maxOf(stats.max_removable_cutoff_age_xids, d.removable_cutoff_age_xids);
    stats.tuples_removed += d.tuples_removed ?? 0;
  }

  private addAnalyze(event: LogEvent<'autoanalyze'>): void {
    const d = event.details;
    this.analyzeRuns++;
    const stats = this.analyzes.get(d, newAnalyzeStats);
    if (!stats) {
      this.analyzes.otherCount++;
      return;
    }
    stats.runs++;
    stats.total_elapsed_s += d.elapsed_s ?? 0;
    stats.max_elapsed_s = maxOf(stats.max_elapsed_s, d.elapsed_s);
  }

  /** Counts `n` events of the minute of `tsMs`, `notable` of them not generic. */
  private countMinute(tsMs: number, n: number, notable: number, error: boolean): void {
    // Most events fall in the same minute as the one before: skip the division and the lookup.
    let stats = this.lastMinute;
    if (stats === null || tsMs < this.lastMinuteMs || tsMs >= this.lastMinuteMs + MINUTE_MS) {
      stats = this.minuteOf(tsMs);
    }
    stats.events += n;
    stats.notable += notable;
    if (error) stats.errors += n;
  }

  private minuteOf(tsMs: number): MinuteStats {
    const minuteMs = minuteStartMs(tsMs);
    let stats = this.openMinutes.get(minuteMs);
    if (!stats) {
      stats = { minute: new Date(minuteMs).toISOString(), events: 0, notable: 0, errors: 0 };
      this.openMinutes.set(minuteMs, stats);
    }
    if (minuteMs > this.newestMinuteMs) {
      this.newestMinuteMs = minuteMs;
      this.closeMinutes(minuteMs - this.limits.openMinutes * MINUTE_MS);
    }
    this.lastMinute = stats;
    this.lastMinuteMs = minuteMs;
    return stats;
  }

  /** Moves minutes older than `beforeMs` from the window to the top list. */
  private closeMinutes(beforeMs: number): void {
    for (const [minuteMs, stats] of this.openMinutes) {
      if (minuteMs >= beforeMs) continue;
      this.openMinutes.delete(minuteMs);
      this.offerMinute(stats);
      if (stats === this.lastMinute) this.lastMinute = null;
    }
  }

  private offerMinute(stats: MinuteStats): void {
    // A late event can reopen a closed minute: merge instead of listing it twice.
    const same = this.topMinutes.find((m) => m.minute === stats.minute);
    if (same) {
      same.events += stats.events;
      same.notable += stats.notable;
      same.errors += stats.errors;
    } else {
      this.topMinutes.push({ ...stats });
    }
    this.topMinutes.sort(byBusiest);
    if (this.topMinutes.length > this.limits.topN) this.topMinutes.length = this.limits.topN;
  }

  /** The summary so far; adding more events afterwards is allowed. */
  result(): AnalyzeSummary {
    const top = this.limits.topN;
    const pending = [...this.topMinutes.map((m) => ({ ...m }))];
    for (const stats of this.openMinutes.values()) {
      const same = pending.find((m) => m.minute === stats.minute);
      if (same) {
        same.events += stats.events;
        same.notable += stats.notable;
        same.errors += stats.errors;
      } else {
        pending.push({ ...stats });
      }
    }
    const vacuumTables = [...this.vacuums.values].sort((a, b) => b.total_elapsed_s - a.total_elapsed_s || b.runs - a.runs || (a.table < b.table ? -1 : 1));
    const analyzeTables = [...this.analyzes.values].sort((a, b) => b.total_elapsed_s - a.total_elapsed_s || b.runs - a.runs || (a.table < b.table ? -1 : 1));
    return {
      events: this.events,
      first_ts: this.firstTsMs === null ? null : new Date(this.firstTsMs).toISOString(),
      last_ts: this.lastTsMs === null ? null : new Date(this.lastTsMs).toISOString(),
      events_by_kind: { ...this.byKind, generic: this.genericEvents },
      events_by_level: this.logEvents === 0 ? { ...this.byLevel } : { ...this.byLevel, LOG: this.logEvents },
      errors_by_sqlstate: this.sqlstates.top(top),
      autovacuum: {
        runs: this.vacuumRuns, tables: vacuumTables.slice(0, top).map((t) => ({ ...t, total_elapsed_s: roundMs(t.total_elapsed_s) })),
        tables_total: this.vacuums.values.length, other_tables_runs: this.vacuums.otherCount,
      },
      autoanalyze: {
        runs: this.analyzeRuns, tables: analyzeTables.slice(0, top).map((t) => ({ ...t, total_elapsed_s: roundMs(t.total_elapsed_s) })),
        tables_total: this.analyzes.values.length, other_tables_runs: this.analyzes.otherCount,
      },
      recovery_conflicts: { ...this.conflicts, by_reason: this.conflictReasons.top(top) },
      lock_timeouts: { total: this.lockTimeouts, by_relation: this.lockTimeoutRelations.top(top) },
      lock_waits: { total: this.lockWaits, by_phase: this.lockWaitPhases.top(top), max_wait_ms: this.maxLockWaitMs },
      deadlocks: { count: this.deadlocks.count, cycles: [...this.deadlocks.cycles] },
      checkpoints: { ...this.checkpoints },
      server_starts: this.serverStarts.counts(),
      temp_files: { ...this.tempFiles },
      server_crashes: this.serverCrashes,
      busiest_minutes: pending.sort(byBusiest).slice(0, top),
    };
  }
}

function newVacuumStats(table: string): TableVacuumStats {
  return {
    table, runs: 0, aggressive_runs: 0, wraparound_runs: 0, total_elapsed_s: 0, max_elapsed_s: null,
    max_dead_not_removable: null, max_removable_cutoff_age_xids: null, tuples_removed: 0,
  };
}

function newAnalyzeStats(table: string): TableAnalyzeStats {
  return { table, runs: 0, total_elapsed_s: 0, max_elapsed_s: null };
}

function byBusiest(a: MinuteStats, b: MinuteStats): number {
  return b.events - a.events || b.notable - a.notable || (a.minute < b.minute ? -1 : 1);
}

/** Seconds summed from two-decimal figures, without float noise (0.6300000000000003). */
function roundMs(seconds: number): number {
  return Math.round(seconds * 1000) / 1000;
}

function maxOf(current: number | null, value: number | null): number | null {
  if (value === null) return current;
  return current === null ? value : Math.max(current, value);
}
