/**
 * Metrics derived from classified log events, updated as the store commits them (never at
 * scrape time). Names start with `pg_log_`: they count what PostgreSQL reported in its log.
 *
 * Every counter starts at 0 for the label sets known before its first event (Prometheus practice:
 * rate() and every panel work from the first scrape): per target from the start, per database
 * once the database is known. Per-table series are not: the tables are too many.
 *
 * Per-table series (autovacuum elapsed, dead-but-not-removable tuples) are kept for at most
 * `maxTables` tables per target; later tables are counted under schemaname="" relname="" of
 * their database (an empty name no PostgreSQL table can have), so no run goes uncounted.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { EVENT_KINDS, RECOVERY_CONFLICT_REASONS, type AnyLogEvent } from '../domain/index.js';

export interface LogMetricsOptions {
  /** Distinct tables per target with their own per-table series. */
  maxTables: number;
}

/** What a server log holds at the default log_min_messages (warning): the levels events come at. */
const SERVER_LOG_LEVELS = ['LOG', 'WARNING', 'ERROR', 'FATAL', 'PANIC'] as const;
const PARALLEL_PHASES = ['index_vacuum', 'index_cleanup'] as const;

const ELAPSED_BUCKETS_SECONDS = [0.1, 1, 10, 60, 300, 1_800, 3_600, 4 * 3_600, 12 * 3_600];
const WAIT_BUCKETS_SECONDS = [0.1, 1, 5, 15, 30, 60, 120, 300, 900];

export class LogMetrics {
  private readonly events;
  private readonly autovacuumRuns;
  private readonly autoanalyzeRuns;
  private readonly autovacuumElapsed;
  private readonly deadNotRemovable;
  private readonly parallelPlanned;
  private readonly parallelLaunched;
  private readonly conflicts;
  private readonly conflictWait;
  private readonly lockTimeouts;
  private readonly deadlocks;
  private readonly checkpoints;
  private readonly crashes;
  private readonly tables = new Map<string, Set<string>>();
  private readonly knownDatabases = new Set<string>();

  constructor(registry: Registry, private readonly options: LogMetricsOptions) {
    const registers = [registry];
    this.events = new Counter({ name: 'pg_log_events_total', help: 'Server log entries read, by pgvigil event kind and severity.', labelNames: ['target', 'kind', 'level'], registers });
    this.autovacuumRuns = new Counter({ name: 'pg_log_autovacuum_runs_total', help: 'Automatic vacuum reports in the server log (log_autovacuum_min_duration decides which runs report).', labelNames: ['target', 'datname'], registers });
    this.autoanalyzeRuns = new Counter({ name: 'pg_log_autoanalyze_runs_total', help: 'Automatic analyze reports in the server log.', labelNames: ['target', 'datname'], registers });
    this.autovacuumElapsed = new Histogram({
      name: 'pg_log_autovacuum_elapsed_seconds',
      help: 'Elapsed time of automatic vacuum runs as reported in the log (system usage line); tables past the cap are under relname="".',
      labelNames: ['target', 'datname', 'schemaname', 'relname'],
      buckets: ELAPSED_BUCKETS_SECONDS,
      registers,
    });
    this.deadNotRemovable = new Gauge({
      name: 'pg_log_autovacuum_dead_not_removable_tuples',
      help: 'Dead tuples the latest automatic vacuum of the table reported as not yet removable (the xmin horizon held them).',
      labelNames: ['target', 'datname', 'schemaname', 'relname'],
      registers,
    });
    this.parallelPlanned = new Counter({ name: 'pg_log_autovacuum_parallel_workers_planned_total', help: 'Parallel vacuum workers planned, summed over vacuum reports (PG 19+).', labelNames: ['target', 'datname', 'phase'], registers });
    this.parallelLaunched = new Counter({ name: 'pg_log_autovacuum_parallel_workers_launched_total', help: 'Parallel vacuum workers launched, summed over vacuum reports (PG 19+).', labelNames: ['target', 'datname', 'phase'], registers });
    this.conflicts = new Counter({ name: 'pg_log_recovery_conflicts_total', help: 'Queries cancelled or sessions terminated for a conflict with recovery, by reason.', labelNames: ['target', 'datname', 'reason'], registers });
    this.conflictWait = new Histogram({
      name: 'pg_log_recovery_conflict_wait_seconds',
      help: 'How long replay waited on a recovery conflict (log_recovery_conflict_waits "finished waiting" lines, PG 14+).',
      labelNames: ['target', 'reason'],
      buckets: WAIT_BUCKETS_SECONDS,
      registers,
    });
    this.lockTimeouts = new Counter({ name: 'pg_log_lock_timeouts_total', help: 'Statements cancelled by lock_timeout.', labelNames: ['target', 'datname'], registers });
    this.deadlocks = new Counter({ name: 'pg_log_deadlocks_total', help: 'Deadlocks detected.', labelNames: ['target', 'datname'], registers });
    this.checkpoints = new Counter({ name: 'pg_log_checkpoints_total', help: 'Completed checkpoints and restartpoints reported in the log (log_checkpoints).', labelNames: ['target', 'kind'], registers });
    this.crashes = new Counter({ name: 'pg_log_crashes_total', help: 'Server processes that exited abnormally (the postmaster then resets every session).', labelNames: ['target'], registers });
  }

  /** Zero series for what a target can report whatever its databases. */
  knowTarget(target: string): void {
    for (const kind of EVENT_KINDS) for (const level of SERVER_LOG_LEVELS) this.events.inc({ target, kind, level }, 0);
    for (const kind of ['checkpoint', 'restartpoint']) this.checkpoints.inc({ target, kind }, 0);
    this.crashes.inc({ target }, 0);
    for (const reason of RECOVERY_CONFLICT_REASONS) this.conflictWait.zero({ target, reason });
  }

  /** Zero series for what one database of a target can report (once; later calls are cheap). */
  knowDatabase(target: string, datname: string): void {
    const key = `${target}\u0000${datname}`;
    if (this.knownDatabases.has(key)) return;
    this.knownDatabases.add(key);
    for (const counter of [this.autovacuumRuns, this.autoanalyzeRuns, this.lockTimeouts, this.deadlocks]) counter.inc({ target, datname }, 0);
    for (const reason of RECOVERY_CONFLICT_REASONS) this.conflicts.inc({ target, datname, reason }, 0);
    for (const phase of PARALLEL_PHASES) {
      this.parallelPlanned.inc({ target, datname, phase }, 0);
      this.parallelLaunched.inc({ target, datname, phase }, 0);
    }
  }

  observe(event: AnyLogEvent): void {
    const target = event.target;
    this.events.inc({ target, kind: event.kind, level: event.level });
    const datname = event.database ?? '';
    switch (event.kind) {
      case 'autovacuum': {
        const d = event.details;
        this.autovacuumRuns.inc({ target, datname: d.database });
        const table = this.tableLabels(target, d.database, d.schema, d.table);
        if (d.elapsed_s !== null) this.autovacuumElapsed.observe(table, d.elapsed_s);
        // Past the cap, tables share one series: a last value there would mean nothing.
        if (d.tuples_dead_not_removable !== null && table.relname !== '') this.deadNotRemovable.set(table, d.tuples_dead_not_removable);
        this.parallel({ target, datname: d.database, phase: 'index_vacuum' }, d.parallel_workers_planned, d.parallel_workers_launched);
        this.parallel({ target, datname: d.database, phase: 'index_cleanup' }, d.parallel_cleanup_workers_planned, d.parallel_cleanup_workers_launched);
        return;
      }
      case 'autoanalyze':
        this.autoanalyzeRuns.inc({ target, datname: event.details.database });
        return;
      case 'recovery_conflict':
        this.conflicts.inc({ target, datname, reason: event.details.reason ?? 'unknown' });
        return;
      case 'recovery_conflict_wait': {
        const d = event.details;
        if (d.phase === 'finished' && d.wait_ms !== null) this.conflictWait.observe({ target, reason: d.reason ?? 'unknown' }, d.wait_ms / 1000);
        return;
      }
      case 'lock_timeout':
        this.lockTimeouts.inc({ target, datname });
        return;
      case 'deadlock':
        this.deadlocks.inc({ target, datname });
        return;
      case 'checkpoint':
        if (event.details.phase === 'complete') this.checkpoints.inc({ target, kind: event.details.restartpoint ? 'restartpoint' : 'checkpoint' });
        return;
      case 'server_crash':
        this.crashes.inc({ target });
        return;
      default:
        return;
    }
  }

  private parallel(labels: { target: string; datname: string; phase: string }, planned: number | null, launched: number | null): void {
    if (planned !== null) this.parallelPlanned.inc(labels, planned);
    if (launched !== null) this.parallelLaunched.inc(labels, launched);
  }

  private tableLabels(target: string, datname: string, schemaname: string, relname: string): Record<'target' | 'datname' | 'schemaname' | 'relname', string> {
    let known = this.tables.get(target);
    if (!known) this.tables.set(target, (known = new Set()));
    const key = `${datname}\u0000${schemaname}\u0000${relname}`;
    if (!known.has(key)) {
      if (known.size >= this.options.maxTables) return { target, datname, schemaname: '', relname: '' };
      known.add(key);
    }
    return { target, datname, schemaname, relname };
  }
}
