/**
 * What the database was running while an alert was open, shown under the alert: the queries and
 * their total time in the alert's minutes against the log's average minute, and the slowest
 * statements of the report that ran then. The result keeps per-minute totals and the slowest
 * statements, not every fingerprint per minute, so this is what can be said from it. Pure.
 */
import type { OfflineAlert } from '../alerts-text.js';
import type { QueriesResult, SlowRow } from '../log-report/queries.js';
import { count, milliseconds } from '../text-format.js';
import { esc, htmlTable } from './html-parts.js';

const MINUTE_MS = 60_000;
/** Slow statements listed under an alert: the report's own list has the rest. */
const MAX_SLOW = 5;

/** The queries of the alert's window as HTML; empty when the log has no query lines. */
export function queriesOfAlertWindow(queries: QueriesResult | undefined, alert: OfflineAlert, logEndIso: string | null): string {
  if (queries === undefined || queries.queries === 0) return '';
  const fromMs = Math.floor(Date.parse(alert.started_at) / MINUTE_MS) * MINUTE_MS;
  const toMs = Date.parse(alert.ended_at ?? logEndIso ?? alert.started_at);
  const minutes = queries.per_minute.filter((m) => { const at = Date.parse(m.minute); return at >= fromMs && at <= toMs; });
  const inWindow = minutes.reduce((sum, m) => ({ queries: sum.queries + m.queries, ms: sum.ms + m.duration_ms }), { queries: 0, ms: 0 });
  const average = queries.per_minute.length === 0 ? 0 : queries.queries / queries.per_minute.length;
  const slow = queries.slowest.filter((s) => { const at = Date.parse(s.ts); return at >= fromMs && at <= toMs; }).slice(0, MAX_SLOW);
  const summary = `While open: ${count(inWindow.queries)} queries in ${count(minutes.length)} minute(s), ${milliseconds(inWindow.ms)} ms in all (the log's average: ${count(Math.round(average))} a minute).`;
  return `<div class="evidence">${esc(summary)}</div>${slow.length === 0 ? '' : htmlTable<SlowRow>([
    { header: 'ms', align: 'right', cell: (s) => milliseconds(s.duration_ms) },
    { header: 'at', align: 'left', cell: (s) => s.ts },
    { header: 'slowest statements while open', align: 'left', sql: true, cell: (s) => s.text },
  ], slow, '')}`;
}
