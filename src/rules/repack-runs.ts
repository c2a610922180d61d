/**
 * PostgreSQL 19 REPACK (CONCURRENTLY) runs as the rules see them, from what the collectors sample:
 * its temporary logical slot (`pg_repack_<decoding worker pid>`, plugin `pgrepack`; owner `repack`
 * in pg_replication_slots_info, with owner_pid = the REPACK session, pg-messages.md §9.2, §13.3),
 * and the table it works on from pg_stat_progress_repack (or, without that series, from the
 * session's logged statement). The slot is what holds vacuum back, so a run is "running" exactly
 * while its slot is sampled.
 */
import type { Labels } from '../domain/index.js';
import type { RuleView } from './rule-view.js';
import { relationName, tableCommandOf } from './statements.js';

export const SLOT_INFO = 'pg_replication_slots_info';
export const PROGRESS_INFO = 'pg_stat_progress_repack_info';
export const PROGRESS_XACT_START = 'pg_stat_progress_repack_xact_start_timestamp_seconds';

export interface TableRef {
  database: string | null;
  /** null when only the bare name is known (a statement relying on search_path). */
  schema: string | null;
  table: string;
}

export interface RepackRun {
  target: string;
  slotName: string;
  database: string | null;
  /** The REPACK session (the decoding worker's leader). */
  sessionPid: number | null;
  /** First and last sample of the slot within the look-back: a lower bound of the run's start. */
  firstSeenMs: number;
  lastSeenMs: number;
  /** When the run really started, when known: the session's transaction start (pg_stat_progress_repack) or its logged statement. */
  xactStartMs: number | null;
  table: TableRef | null;
  /** Events that named the table (a logged REPACK statement). */
  eventIds: number[];
}

/** Runs whose slot is fresh (sampled within the view's staleness limit), with their table. */
export function runningRepacks(view: RuleView, lookbackMs: number): RepackRun[] {
  const fresh = view.latest(SLOT_INFO, { labels: { owner: 'repack' } });
  const sinceMs = view.nowMs - lookbackMs;
  return repackRuns(view, sinceMs)
    .filter((run) => fresh.some((s) => s.target === run.target && s.labels.slot_name === run.slotName))
    .map((run) => withTable(view, run, sinceMs));
}

/** The run of one REPACK session whose slot was sampled before `untilMs`, with its table. */
export function repackRunOf(view: RuleView, target: string, sessionPid: number, sinceMs: number, untilMs: number): RepackRun | null {
  const run = repackRuns(view, sinceMs, target).filter((r) => r.sessionPid === sessionPid && r.firstSeenMs <= untilMs).pop();
  return run ? withTable(view, run, sinceMs) : null;
}

/** Every run whose slot was sampled since `sinceMs`, running or not; tables not resolved. */
function repackRuns(view: RuleView, sinceMs: number, target?: string): RepackRun[] {
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
      continue;
    }
    runs.set(key, {
      target: s.target, slotName, database: nonEmpty(s.labels.database), sessionPid: pidOf(s.labels),
      firstSeenMs: first, lastSeenMs: last, xactStartMs: null, table: null, eventIds: [],
    });
  }
  return [...runs.values()];
}

function withTable(view: RuleView, run: RepackRun, sinceMs: number): RepackRun {
  resolveTable(view, run, sinceMs);
  return run;
}

function resolveTable(view: RuleView, run: RepackRun, sinceMs: number): void {
  if (run.sessionPid === null) return;
  const pid = String(run.sessionPid);
  const progress = view.series(PROGRESS_INFO, { sinceMs, target: run.target, labels: { pid } })[0];
  if (progress && nonEmpty(progress.labels.relname)) {
    const labels = progress.labels;
    run.table = { database: nonEmpty(labels.datname), schema: nonEmpty(labels.schemaname), table: labels.relname ?? '' };
    const start = view.series(PROGRESS_XACT_START, {
      sinceMs, target: run.target, labels: { datname: labels.datname ?? '', schemaname: labels.schemaname ?? '', relname: labels.relname ?? '' },
    })[0];
    const value = start?.points.find((p) => p.value !== null)?.value;
    if (value !== undefined && value !== null) run.xactStartMs = value * 1000;
    return;
  }
  // Without the progress series: the session's own logged statement (log_statement = all, or a
  // lock wait's STATEMENT line) names the table.
  const ddl = view.events('ddl', { sinceMs, target: run.target, pid: run.sessionPid })
    .filter((e) => e.details.command === 'REPACK' && e.details.relation !== null).pop();
  if (ddl?.details.relation) {
    run.table = tableRef(ddl.details.relation, run.database);
    run.xactStartMs = ddl.tsMs;
    run.eventIds.push(ddl.id);
    return;
  }
  const waited = view.events('lock_wait', { sinceMs, target: run.target, pid: run.sessionPid })
    .map((e) => ({ e, command: tableCommandOf(e.details.statement) }))
    .filter((x) => x.command?.command === 'REPACK' && x.command.relation !== null).pop();
  if (waited?.command?.relation) {
    run.table = tableRef(waited.command.relation, run.database);
    run.eventIds.push(waited.e.id);
  }
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

/** "REPACK (CONCURRENTLY) of shop.public.orders" or "REPACK (CONCURRENTLY) in database shop (slot pg_repack_4242)". */
export function describeRun(run: RepackRun): string {
  if (run.table) return `REPACK (CONCURRENTLY) of ${describeTable(run.table)}`;
  const where = run.database ? ` in database ${run.database}` : '';
  return `REPACK (CONCURRENTLY)${where} (slot ${run.slotName})`;
}

/** When the run started, as well as the samples tell. */
export function runStartMs(run: RepackRun): number {
  return run.xactStartMs !== null ? Math.min(run.xactStartMs, run.firstSeenMs) : run.firstSeenMs;
}

function pidOf(labels: Labels): number | null {
  const n = Number(labels.owner_pid);
  return labels.owner_pid !== undefined && labels.owner_pid !== '' && Number.isInteger(n) ? n : null;
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}
