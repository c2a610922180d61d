/**
 * PostgreSQL 19 REPACK (CONCURRENTLY) runs as the rules see them. From the samples: its temporary
 * logical slot (`pg_repack_<decoding worker pid>`, plugin `pgrepack`; owner `repack` in
 * pg_replication_slots_info, with owner_pid = the REPACK session, pg-messages.md §9.2, §13.3), and
 * the table it works on from pg_stat_progress_repack (or, without that series, from the session's
 * logged statement). The slot is what holds vacuum back, so a sampled run is "running" exactly
 * while its slot is sampled. A target no collector watches (an old log under `pgvigil analyze
 * --rules`) has only the runs its log shows (repack-log-runs.ts): running while no end was logged.
 *
 * A run is one execution by one session: its pid and its start. A session that retries REPACK, or
 * ran VACUUM FULL on the table before, starts a new run; nothing of the earlier one (its start, its
 * lock waits) is the new one's.
 */
import type { Labels } from '../domain/index.js';
import { logRepackRuns, type LogRun } from './repack-log-runs.js';
import { DEFAULT_STALE_AFTER_MS, type RuleEvent, type RuleView, type SeriesData } from './rule-view.js';
import { citeLast, type CitedSeries } from './sample-evidence.js';
import { relationName, tableCommandOf } from './statements.js';

export const SLOT_INFO = 'pg_replication_slots_info';
export const PROGRESS_INFO = 'pg_stat_progress_repack_info';
export const PROGRESS_XACT_START = 'pg_stat_progress_repack_xact_start_timestamp_seconds';
/** Sampled by the poll scheduler for every watched target: its presence means samples watch the target. */
const TARGET_UP = 'pg_up';

/** How far apart two samples of one running thing can be (a poll interval and then some). */
const SAMPLE_GAP_MS = DEFAULT_STALE_AFTER_MS;

export interface TableRef {
  database: string | null;
  /** null when only the bare name is known (a statement relying on search_path). */
  schema: string | null;
  table: string;
}

export interface RepackRun {
  target: string;
  /** The temporary slot, when sampled; null for a run only the log shows. */
  slotName: string | null;
  database: string | null;
  /** The REPACK session (the decoding worker's leader). */
  sessionPid: number | null;
  /** First and last sample of the slot (or first and last logged line of a log-only run). */
  firstSeenMs: number;
  lastSeenMs: number;
  /** When the run really started, when known: its transaction start (pg_stat_progress_repack) or its logged statement. */
  xactStartMs: number | null;
  table: TableRef | null;
  /** Events that show the run (a logged REPACK statement, its lock waits). */
  eventIds: number[];
  /** Samples that show it (its slot, its progress row and transaction start), cited by every finding about the run. */
  series: CitedSeries[];
  /** Only the log shows it: its end may have gone unlogged (a successful REPACK logs nothing). */
  logOnly: boolean;
}

/** Runs going on now: sampled runs whose slot is fresh, and on targets no collector watches, logged runs with no end yet. */
export function runningRepacks(view: RuleView, lookbackMs: number): RepackRun[] {
  const fresh = view.latest(SLOT_INFO, { labels: { owner: 'repack' } });
  const sinceMs = view.nowMs - lookbackMs;
  const sampled = sampledRuns(view, sinceMs)
    .filter((run) => fresh.some((s) => s.target === run.target && s.labels.slot_name === run.slotName))
    .map((run) => withTable(view, run, sinceMs));
  const logged = view.targets()
    .filter((t) => !watchedBySamples(view, t.name, sinceMs))
    .flatMap((t) => logRepackRuns(view, t.name, sinceMs))
    .filter((r) => r.endMs === null && r.concurrently)
    .map(fromLog);
  return [...sampled, ...logged];
}

/** Is the target polled (its scheduler sample is fresh, or REPACK slots were sampled)? Then the samples, not the log, say what runs. */
function watchedBySamples(view: RuleView, target: string, sinceMs: number): boolean {
  return view.latest(TARGET_UP, { target }).length > 0 || view.series(SLOT_INFO, { sinceMs, target, labels: { owner: 'repack' } }).length > 0;
}

/**
 * The run that `failure` (an event of session `pid`) ended, with its start as well as samples and
 * log tell: a sampled slot or progress row of that session seen up to the failure and not before
 * the logged run began, and the logged run the failure closes. Nothing of an earlier run counts.
 */
export function failedRun(view: RuleView, failure: RuleEvent, pid: number, lookbackMs: number): { run: RepackRun | null; logged: LogRun | null } {
  const sinceMs = failure.tsMs - lookbackMs;
  // A run the event ended by being the session's next statement (a crash DETAIL naming another query) is not what failed.
  const logged = logRepackRuns(view, failure.target, sinceMs).find((r) => r.pid === pid && r.endEvent?.id === failure.id && r.end !== 'next_statement') ?? null;
  // A sample of the failed run was taken after the logged run began (when it shows its start) and shortly before the failure.
  const belongs = (firstMs: number, lastMs: number) =>
    firstMs <= failure.tsMs && lastMs >= failure.tsMs - SAMPLE_GAP_MS && (logged?.startExact !== true || firstMs >= logged.startMs - SAMPLE_GAP_MS);
  const slotRun = sampledRuns(view, sinceMs, failure.target).filter((r) => r.sessionPid === pid && belongs(r.firstSeenMs, r.lastSeenMs)).pop();
  if (slotRun) return { run: withTable(view, slotRun, sinceMs, failure.tsMs), logged };
  const progress = progressOf(view, failure.target, pid, sinceMs, failure.tsMs);
  if (progress && belongs(progress.points[0]!.tsMs, progress.points[progress.points.length - 1]!.tsMs)) {
    const xactStart = xactStartOf(view, failure.target, progress, sinceMs);
    const xactStartMs = xactStart?.ms ?? null;
    // Rows sampled before the run's transaction began are an earlier run's.
    const own = progress.points.filter((p) => xactStartMs === null || p.tsMs >= xactStartMs);
    const run: RepackRun = {
      target: failure.target, slotName: null, database: nonEmpty(progress.labels.datname), sessionPid: pid,
      firstSeenMs: (own[0] ?? progress.points[0]!).tsMs, lastSeenMs: progress.points[progress.points.length - 1]!.tsMs,
      xactStartMs, table: progressTable(progress), eventIds: [], logOnly: false,
      series: [citeLast(progress), ...(xactStart ? [xactStart.cited] : [])],
    };
    return { run, logged };
  }
  return { run: logged ? fromLog(logged) : null, logged };
}

/** Every run whose slot was sampled since `sinceMs`, running or not; tables not resolved. */
function sampledRuns(view: RuleView, sinceMs: number, target?: string): RepackRun[] {
  const runs = new Map<string, RepackRun>();
  for (const s of view.series(SLOT_INFO, { sinceMs, labels: { owner: 'repack' }, ...(target !== undefined && { target }) })) {
    const slotName = s.labels.slot_name ?? '';
    const key = `${s.target}\u0000${slotName}`;
    const first = s.points[0]!.tsMs;
    const last = s.points[s.points.length - 1]!.tsMs;
    const known = runs.get(key);
    if (known) {
      // The info labels can change during a run (e.g. the owner pid appears once the worker runs).
      known.firstSeenMs = Math.min(known.firstSeenMs, first);
      known.lastSeenMs = Math.max(known.lastSeenMs, last);
      known.sessionPid ??= pidOf(s.labels);
      if (last >= known.series[0]!.tsMs) known.series = [citeLast(s)];
      continue;
    }
    runs.set(key, {
      target: s.target, slotName, database: nonEmpty(s.labels.database), sessionPid: pidOf(s.labels),
      firstSeenMs: first, lastSeenMs: last, xactStartMs: null, table: null, eventIds: [], logOnly: false, series: [citeLast(s)],
    });
  }
  return [...runs.values()];
}

function fromLog(r: LogRun): RepackRun {
  return {
    target: r.target, slotName: null, database: r.database, sessionPid: r.pid, firstSeenMs: r.startMs, lastSeenMs: r.lastSeenMs,
    xactStartMs: r.startExact ? r.startMs : null, table: r.relation === null ? null : tableRef(r.relation, r.database),
    eventIds: [...r.eventIds], logOnly: true, series: [],
  };
}

/** The run's table and true start, from its own progress rows or its own logged statement. */
function withTable(view: RuleView, run: RepackRun, sinceMs: number, untilMs = run.lastSeenMs + SAMPLE_GAP_MS): RepackRun {
  if (run.sessionPid === null) return run;
  // The run's own window: a sample or line before its slot existed belongs to an earlier run.
  const fromMs = Math.max(sinceMs, run.firstSeenMs - SAMPLE_GAP_MS);
  const progress = progressOf(view, run.target, run.sessionPid, fromMs, untilMs);
  if (progress && nonEmpty(progress.labels.relname)) {
    const xactStart = xactStartOf(view, run.target, progress, fromMs);
    run.table = progressTable(progress);
    run.xactStartMs = xactStart?.ms ?? null;
    run.series.push(citeLast(progress), ...(xactStart ? [xactStart.cited] : []));
    return run;
  }
  // Without the progress series: the statement that started this run (log_statement = ddl or all),
  // the last one of the session before its slot appeared, or a lock wait's STATEMENT line of the run.
  const ddl = view.events('ddl', { sinceMs, target: run.target, pid: run.sessionPid })
    .filter((e) => e.details.command === 'REPACK' && e.details.relation !== null && e.tsMs <= run.firstSeenMs).pop();
  if (ddl?.details.relation) {
    run.table = tableRef(ddl.details.relation, run.database);
    run.xactStartMs = ddl.tsMs;
    run.eventIds.push(ddl.id);
    return run;
  }
  const waited = view.events('lock_wait', { sinceMs: fromMs, target: run.target, pid: run.sessionPid })
    .map((e) => ({ e, command: tableCommandOf(e.details.statement) }))
    .filter((x) => x.e.tsMs <= untilMs && x.command?.command === 'REPACK' && x.command.relation !== null).pop();
  if (waited?.command?.relation) {
    run.table = tableRef(waited.command.relation, run.database);
    run.eventIds.push(waited.e.id);
  }
  return run;
}

/** The session's progress row sampled in [sinceMs, untilMs], its points limited to that window. */
function progressOf(view: RuleView, target: string, pid: number, sinceMs: number, untilMs: number): SeriesData | null {
  const s = view.series(PROGRESS_INFO, { sinceMs, target, labels: { pid: String(pid) } })[0];
  const points = s?.points.filter((p) => p.tsMs <= untilMs) ?? [];
  return s && points.length > 0 ? { ...s, points } : null;
}

function progressTable(progress: SeriesData): TableRef {
  const labels = progress.labels;
  return { database: nonEmpty(labels.datname), schema: nonEmpty(labels.schemaname), table: labels.relname ?? '' };
}

/**
 * The transaction start of the session's latest run, sampled together with its progress rows. The
 * series is per table, not per session: a value sampled outside the rows is another session's, and
 * an earlier value within them an earlier run's of the same session (a retry, a VACUUM FULL).
 */
function xactStartOf(view: RuleView, target: string, progress: SeriesData, sinceMs: number): { ms: number; cited: CitedSeries } | null {
  const { datname = '', schemaname = '', relname = '' } = progress.labels;
  const series = view.series(PROGRESS_XACT_START, { sinceMs, target, labels: { datname, schemaname, relname } })[0];
  const first = progress.points[0]!.tsMs;
  const last = progress.points[progress.points.length - 1]!.tsMs;
  const point = series?.points.filter((p) => p.tsMs >= first && p.tsMs <= last && p.value !== null).pop();
  if (!series || !point || point.value === null) return null;
  return { ms: point.value * 1000, cited: { name: series.name, labels: { ...series.labels }, value: point.value, tsMs: point.tsMs } };
}

/** `orders`, `public.orders` or `shop.public.orders` in `database`. */
export function tableRef(relation: string, database: string | null): TableRef {
  const parts = relation.split('.');
  if (parts.length >= 3) return { database: parts[0] ?? database, schema: parts[1] ?? null, table: parts[2] ?? relation };
  if (parts.length === 2) return { database, schema: parts[0] ?? null, table: parts[1] ?? relation };
  return { database, schema: null, table: relationName(relation) };
}

export function sameTable(ref: TableRef, database: string, schema: string, table: string): boolean {
  return ref.table === table && (ref.database === null || ref.database === database) && (ref.schema === null || ref.schema === schema);
}

export function describeTable(ref: TableRef): string {
  return [ref.database, ref.schema, ref.table].filter((p) => p !== null).join('.');
}

/** "REPACK (CONCURRENTLY) of shop.public.orders", "... in database shop (slot pg_repack_4242)", "... (pid 4242)". */
export function describeRun(run: RepackRun, command = 'REPACK (CONCURRENTLY)'): string {
  if (run.table) return `${command} of ${describeTable(run.table)}`;
  const where = run.database ? ` in database ${run.database}` : '';
  const which = run.slotName !== null ? `slot ${run.slotName}` : `pid ${run.sessionPid}`;
  return `${command}${where} (${which})`;
}

/** When the run started: its transaction start or statement when known, else its first sample (a little late). */
export function runStartMs(run: RepackRun): number {
  return run.xactStartMs ?? run.firstSeenMs;
}

/** The subject of a run's finding: its slot, or for a log-only run its session and start. */
export function runKey(run: RepackRun): string {
  return run.slotName ?? `pid_${run.sessionPid}_${runStartMs(run)}`;
}

function pidOf(labels: Labels): number | null {
  const n = Number(labels.owner_pid);
  return labels.owner_pid !== undefined && labels.owner_pid !== '' && Number.isInteger(n) ? n : null;
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}
