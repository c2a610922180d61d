/**
 * The human-readable form of `pgvigil analyze`'s result: short sections, most telling first,
 * empty sections left out. Pure: result in, text out.
 */
import { NO_SQLSTATE, type AnalyzeSummary, type MinuteStats, type Ranked, type TableAnalyzeStats } from './analyze-summary.js';
import { renderAlertsSection, type OfflineAlert } from './alerts-text.js';
import { deadlockLines } from './deadlocks-text.js';
import type { ErrorsResult } from './log-report/errors.js';
import { renderErrorsText } from './log-report/errors-text.js';
import type { QueriesResult } from './log-report/queries.js';
import { renderQueriesText } from './log-report/queries-text.js';
import type { SessionsResult } from './log-report/sessions.js';
import { renderSessionsText } from './log-report/sessions-text.js';
import { count, counted, countOrDash, lpad, mb, milliseconds, pad, seconds, table, type Column } from './text-format.js';

export interface AnalyzeFileReport {
  path: string;
  format: string | null;
  prefix: string | null;
  bytes: number;
  lines: number;
  error: string | null;
}

/** What `analyze --json` prints; the text form shows the same. */
export interface AnalyzeReport {
  files: AnalyzeFileReport[];
  lines: number;
  entries: number;
  unparsed_lines: number;
  unparsed_by_reason: Record<string, number>;
  unparsed_examples: Array<{ file: string; reason: string; offset: number; line: number | null; text: string }>;
  over_long_lines: number;
  events_by_kind: AnalyzeSummary['events_by_kind'];
  summary: AnalyzeSummary;
  /** The log report: each registered section's result under its key (src/report/log-report/). */
  report: Record<string, unknown>;
  /** With --rules: what the rules concluded, replayed on the log's time. */
  alerts?: OfflineAlert[];
}

export function renderAnalyzeText(report: AnalyzeReport): string {
  const s = report.summary;
  const out: string[] = [];

  out.push(`pgvigil analyze: ${counted(report.files.length, 'file')}, ${counted(report.lines, 'line')}, ${counted(report.entries, 'entry', 'entries')}, ${counted(s.events, 'event')}`);
  if (s.first_ts) out.push(`from ${s.first_ts} to ${s.last_ts}`);
  for (const f of report.files) {
    const what = f.error ? `ERROR: ${f.error}` : `${f.format ?? '?'}${f.prefix ? ` prefix '${f.prefix}'` : ''}, ${mb(f.bytes)}, ${counted(f.lines, 'line')}`;
    out.push(`  ${f.path}: ${what}`);
  }

  out.push(...renderAlertsSection(report.alerts));
  out.push(...renderSummarySections(s));
  out.push(...renderQueriesText(report.report.queries as QueriesResult | undefined));
  out.push(...renderErrorsText(report.report.errors as ErrorsResult | undefined));
  out.push(...renderSessionsText(report.report.sessions as SessionsResult | undefined));

  const reasons = Object.entries(report.unparsed_by_reason).sort((a, b) => b[1] - a[1]);
  pushSection(out, `Lines not understood (${count(report.unparsed_lines)})`, [
    ...reasons.map(([reason, n]) => `${pad(reason, 28)} ${count(n)}`),
    ...report.unparsed_examples.slice(0, 5).map((e) => `e.g. ${e.file}:${e.line ?? `@${e.offset}`}: ${e.text.slice(0, 160)}`),
  ].filter(() => report.unparsed_lines > 0));
  if (report.over_long_lines > 0) out.push('', `${count(report.over_long_lines)} over-long lines were cut at 1 MiB`);
  // What a first reader of the counts wants next: the causes, which only the rules name.
  if (report.alerts === undefined && s.events > s.events_by_kind.generic) out.push('', RULES_HINT);
  return `${out.join('\n')}\n`;
}

export const RULES_HINT = "Run again with --rules to have pgvigil's rules name the causes (replayed on the log's own time).";

/** A lock as PostgreSQL printed it, without the names the daemon puts in front (lock-name.ts). */
const UNNAMED_OIDS = /of database \d+$/;
const UNNAMED_OIDS_NOTE = '(OIDs as logged: analyze has no connection to look names up; the daemon names them)';

/** The summary's sections as text lines (each section: a blank line, a title, indented rows). */
export function renderSummarySections(s: AnalyzeSummary): string[] {
  const out: string[] = [];
  const kinds = Object.entries(s.events_by_kind).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  pushSection(out, 'Events by kind', kinds.map(([kind, n]) => `${pad(kind, 28)} ${count(n)}${linesOf(kind, s)}`));

  pushMaintenanceSection(out, 'Autovacuum', s.autovacuum, [
    { header: 'max dead not removable', align: 'right', cell: (t) => countOrDash(t.max_dead_not_removable) },
    { header: 'max cutoff age (xids)', align: 'right', cell: (t) => countOrDash(t.max_removable_cutoff_age_xids) },
  ]);
  pushMaintenanceSection(out, 'Autoanalyze', s.autoanalyze, []);

  pushSection(out, `Recovery conflicts (${count(s.recovery_conflicts.total)}, ${count(s.recovery_conflicts.fatal)} terminated the session)`, ranked(s.recovery_conflicts.by_reason));
  pushSection(out, `Lock timeouts (${count(s.lock_timeouts.total)}) by lock`, [
    ...ranked(s.lock_timeouts.by_relation),
    ...(s.lock_timeouts.by_relation.some((r) => UNNAMED_OIDS.test(r.key)) ? [UNNAMED_OIDS_NOTE] : []),
  ]);
  pushSection(out, `Lock waits logged (${count(s.lock_waits.total)}, longest ${milliseconds(s.lock_waits.max_wait_ms)} ms)`, ranked(s.lock_waits.by_phase));
  pushSection(out, `Deadlocks (${count(s.deadlocks.count)})`, deadlockLines(s.deadlocks));
  const incidents = [
    s.server_crashes > 0 ? `server process crashes: ${count(s.server_crashes)}` : '',
    s.checkpoints.completed > 0 ? `checkpoints: ${count(s.checkpoints.completed)}, longest ${seconds(s.checkpoints.max_total_s)} s` : '',
    s.checkpoints.too_frequent > 0 ? `checkpoints too frequent: ${count(s.checkpoints.too_frequent)}` : '',
    s.temp_files.count > 0 ? `temporary files: ${count(s.temp_files.count)}, ${mb(s.temp_files.total_bytes)} total, largest ${mb(s.temp_files.max_bytes ?? 0)}` : '',
  ].filter(Boolean);
  const life = serverLife(s.server_starts);
  if (life !== '') incidents.push(`server: ${life}`);
  pushSection(out, 'Other incidents', incidents);
  pushSection(out, 'Errors by SQLSTATE', ranked(s.errors_by_sqlstate.map((r) =>
    (r.key === NO_SQLSTATE ? { ...r, key: 'SQLSTATE not logged (add %e to log_line_prefix)' } : r))));
  pushSection(out, 'Busiest minutes', s.busiest_minutes.length === 0 ? [] : table<MinuteStats>([
    { header: 'minute', align: 'left', cell: (m) => m.minute },
    { header: 'events', align: 'right', cell: (m) => count(m.events) },
    { header: 'notable', align: 'right', cell: (m) => count(m.notable) },
    { header: 'errors', align: 'right', cell: (m) => count(m.errors) },
  ], s.busiest_minutes));

  return out;
}

/**
 * What the lines of a kind that tells a longer story add up to: a checkpoint logs a start and a
 * complete line, a server start several lines, so their event counts are no counts of either.
 */
function linesOf(kind: string, s: AnalyzeSummary): string {
  if (kind === 'checkpoint') return `  (lines: ${counted(s.checkpoints.completed, 'checkpoint')} completed)`;
  if (kind === 'server_restart') return `  (start, stop and recovery lines: ${serverLife(s.server_starts) || 'no start or stop'})`;
  return '';
}

/** Starts and shutdowns, each kind apart; empty when none. */
function serverLife(starts: AnalyzeSummary['server_starts']): string {
  return [
    starts.after_crash > 0 ? `${counted(starts.after_crash, 'restart')} after a crash or an immediate shutdown` : '',
    starts.normal > 0 ? counted(starts.normal, 'normal start') : '',
    starts.promotions > 0 ? counted(starts.promotions, 'promotion') : '',
    starts.clean_shutdowns > 0 ? counted(starts.clean_shutdowns, 'clean shutdown') : '',
    starts.immediate_shutdowns > 0 ? counted(starts.immediate_shutdowns, 'immediate shutdown') : '',
  ].filter(Boolean).join(', ');
}

/** Autovacuum or autoanalyze runs per table: the columns both have, then the kind's own. */
function pushMaintenanceSection<T extends TableAnalyzeStats>(
  out: string[], title: string, runs: { runs: number; tables: T[]; tables_total: number; other_tables_runs: number }, ownColumns: Array<Column<T>>,
): void {
  pushSection(out, `${title} (${counted(runs.runs, 'run')} on ${counted(runs.tables_total, 'table')})`, runs.tables.length === 0 ? [] : [
    ...table<T>([
      { header: 'table', align: 'left', cell: (t) => t.table },
      { header: 'runs', align: 'right', cell: (t) => count(t.runs) },
      { header: 'total s', align: 'right', cell: (t) => seconds(t.total_elapsed_s) },
      { header: 'max s', align: 'right', cell: (t) => seconds(t.max_elapsed_s) },
      ...ownColumns,
    ], runs.tables),
    ...(runs.other_tables_runs > 0 ? [`(${counted(runs.other_tables_runs, 'run')} on further tables not itemised)`] : []),
  ]);
}

/** A section of the text: a blank line, the title, the rows indented; nothing when it has no rows. */
function pushSection(out: string[], title: string, rows: string[]): void {
  if (rows.length > 0) out.push('', title, ...rows.map((row) => `  ${row}`));
}

function ranked(rows: Ranked[]): string[] {
  return rows.map((r) => `${pad(r.key, 60)} ${lpad(count(r.count), 8)}`);
}
