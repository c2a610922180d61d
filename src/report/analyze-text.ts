/**
 * The human-readable form of `pgvigil analyze`'s result: short sections, most telling first,
 * empty sections left out. Pure: result in, text out.
 */
import type { AnalyzeSummary, Ranked } from './analyze-summary.js';
import { renderAlertsSection, type OfflineAlert } from './alerts-text.js';

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
  /** With --rules: what the rules concluded, replayed on the log's time. */
  alerts?: OfflineAlert[];
}

export function renderAnalyzeText(report: AnalyzeReport): string {
  const s = report.summary;
  const out: string[] = [];

  out.push(`pgvigil analyze: ${report.files.length} file(s), ${count(report.lines)} lines, ${count(report.entries)} entries, ${count(s.events)} events`);
  if (s.first_ts) out.push(`from ${s.first_ts} to ${s.last_ts}`);
  for (const f of report.files) {
    const what = f.error ? `ERROR: ${f.error}` : `${f.format ?? '?'}${f.prefix ? ` prefix '${f.prefix}'` : ''}, ${mb(f.bytes)}, ${count(f.lines)} lines`;
    out.push(`  ${f.path}: ${what}`);
  }

  out.push(...renderAlertsSection(report.alerts));
  out.push(...renderSummarySections(s));

  const reasons = Object.entries(report.unparsed_by_reason).sort((a, b) => b[1] - a[1]);
  pushSection(out, `Lines not understood (${count(report.unparsed_lines)})`, [
    ...reasons.map(([reason, n]) => `${pad(reason, 28)} ${count(n)}`),
    ...report.unparsed_examples.slice(0, 5).map((e) => `e.g. ${e.file}:${e.line ?? `@${e.offset}`}: ${e.text.slice(0, 160)}`),
  ].filter(() => report.unparsed_lines > 0));
  if (report.over_long_lines > 0) out.push('', `${count(report.over_long_lines)} over-long lines were cut at 1 MiB`);
  return `${out.join('\n')}\n`;
}

/** The summary's sections as text lines (each section: a blank line, a title, indented rows). */
export function renderSummarySections(s: AnalyzeSummary): string[] {
  const out: string[] = [];
  const tableWidth = Math.max(40, ...s.autovacuum.tables.map((t) => t.table.length), ...s.autoanalyze.tables.map((t) => t.table.length));
  const kinds = Object.entries(s.events_by_kind).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  pushSection(out, 'Events by kind', kinds.map(([kind, n]) => `${pad(kind, 28)} ${count(n)}`));

  pushSection(out, `Autovacuum (${count(s.autovacuum.runs)} runs on ${count(s.autovacuum.tables_total)} tables)`, s.autovacuum.tables.length === 0 ? [] : [
    `${pad('table', tableWidth)} ${lpad('runs', 6)} ${lpad('total s', 10)} ${lpad('max s', 9)} ${lpad('max dead not removable', 22)} ${lpad('max cutoff age', 14)}`,
    ...s.autovacuum.tables.map((t) =>
      `${pad(t.table, tableWidth)} ${lpad(count(t.runs), 6)} ${lpad(t.total_elapsed_s.toFixed(2), 10)} ${lpad(num(t.max_elapsed_s), 9)} ${lpad(num(t.max_dead_not_removable), 22)} ${lpad(num(t.max_removable_cutoff_age_xids), 14)}`),
    ...(s.autovacuum.other_tables_runs > 0 ? [`(${count(s.autovacuum.other_tables_runs)} runs on further tables not itemised)`] : []),
  ]);
  pushSection(out, `Autoanalyze (${count(s.autoanalyze.runs)} runs on ${count(s.autoanalyze.tables_total)} tables)`, s.autoanalyze.tables.map((t) =>
    `${pad(t.table, tableWidth)} ${lpad(count(t.runs), 6)} runs, ${t.total_elapsed_s.toFixed(2)} s total, max ${num(t.max_elapsed_s)} s`));

  pushSection(out, `Recovery conflicts (${count(s.recovery_conflicts.total)}, ${count(s.recovery_conflicts.fatal)} terminated the session)`, ranked(s.recovery_conflicts.by_reason));
  pushSection(out, `Lock timeouts (${count(s.lock_timeouts.total)}) by lock`, ranked(s.lock_timeouts.by_relation));
  pushSection(out, `Lock waits logged (${count(s.lock_waits.total)}, longest ${num(s.lock_waits.max_wait_ms)} ms)`, ranked(s.lock_waits.by_phase));
  const incidents = [
    s.deadlocks > 0 ? `deadlocks: ${count(s.deadlocks)}` : '',
    s.server_crashes > 0 ? `server process crashes: ${count(s.server_crashes)}` : '',
    s.checkpoints.completed > 0 ? `checkpoints: ${count(s.checkpoints.completed)}, longest ${num(s.checkpoints.max_total_s)} s` : '',
    s.checkpoints.too_frequent > 0 ? `checkpoints too frequent: ${count(s.checkpoints.too_frequent)}` : '',
    s.temp_files.count > 0 ? `temporary files: ${count(s.temp_files.count)}, ${mb(s.temp_files.total_bytes)} total, largest ${mb(s.temp_files.max_bytes ?? 0)}` : '',
  ].filter(Boolean);
  pushSection(out, 'Other incidents', incidents);
  pushSection(out, 'Errors by SQLSTATE', ranked(s.errors_by_sqlstate));
  pushSection(out, 'Busiest minutes', s.busiest_minutes.map((m) =>
    `${m.minute}  ${lpad(count(m.events), 9)} events, ${count(m.notable)} notable, ${count(m.errors)} errors`));

  return out;
}

/** A section of the text: a blank line, the title, the rows indented; nothing when it has no rows. */
function pushSection(out: string[], title: string, rows: string[]): void {
  if (rows.length > 0) out.push('', title, ...rows.map((row) => `  ${row}`));
}

function ranked(rows: Ranked[]): string[] {
  return rows.map((r) => `${pad(r.key, 60)} ${lpad(count(r.count), 8)}`);
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function num(n: number | null): string {
  return n === null ? '-' : Number.isInteger(n) ? count(n) : n.toFixed(2);
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

function lpad(text: string, width: number): string {
  return text.length >= width ? text : ' '.repeat(width - text.length) + text;
}
