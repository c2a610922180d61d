/**
 * Errors (pgBadger's "Events"): per SQLSTATE class and code, the normalised messages with their
 * count, first and last seen and an example with its statement, warnings apart, and per minute
 * how many of each severity. Pure.
 */
import type { ClassRow, ErrorsResult, MessageRow, SqlstateRow } from '../log-report/errors.js';
import { shortTime } from '../report-html.js';
import { count } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type HtmlColumn, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_ERRORS = 'no ERROR, FATAL or PANIC in this log';

export function errorsSection(errors: ErrorsResult, window: TimeWindow): PageSection {
  const total = errors.counts.error + errors.counts.fatal + errors.counts.panic;
  const title = `Errors: ${count(total)}`;
  if (total + errors.counts.warning === 0) return { id: 'errors', title, body: absent('no ERROR, FATAL, PANIC or WARNING in this log') };
  return {
    id: 'errors',
    title,
    body: [
      factsTable([
        ['ERROR', count(errors.counts.error)],
        ['FATAL', count(errors.counts.fatal)],
        ['PANIC', count(errors.counts.panic)],
        ['WARNING', count(errors.counts.warning)],
        ...(errors.sqlstate_unknown > 0 ? [['without a SQLSTATE', `${count(errors.sqlstate_unknown)} (add %e to log_line_prefix)`] as [string, string]] : []),
      ]),
      chartGrid([minuteChart('errors_per_minute', 'Errors and warnings per minute', 'count', errors.per_minute, [
        { counter: 'error', label: 'ERROR' }, { counter: 'fatal', label: 'FATAL' }, { counter: 'panic', label: 'PANIC' }, { counter: 'warning', label: 'WARNING' },
      ], 'no error or warning')], window),
      subheading('By SQLSTATE class'),
      htmlTable<ClassRow>([
        { header: 'class', align: 'left', cell: (r) => r.class ?? '-' },
        { header: 'name', align: 'left', cell: (r) => r.name },
        { header: 'count', align: 'right', cell: (r) => count(r.count) },
      ], errors.by_class, NO_ERRORS),
      subheading('By SQLSTATE'),
      htmlTable<SqlstateRow>([
        { header: 'SQLSTATE', align: 'left', cell: (r) => r.sqlstate ?? 'not logged' },
        { header: 'condition', align: 'left', cell: (r) => r.condition ?? '-' },
        { header: 'count', align: 'right', cell: (r) => count(r.count) },
      ], errors.by_sqlstate, NO_ERRORS),
      subheading('Most frequent errors'),
      htmlTable(MESSAGE_COLUMNS, errors.messages, NO_ERRORS),
      subheading('Most frequent warnings'),
      htmlTable(MESSAGE_COLUMNS, errors.warnings, 'no WARNING in this log'),
    ].join('\n'),
  };
}

const MESSAGE_COLUMNS: ReadonlyArray<HtmlColumn<MessageRow>> = [
  { header: 'count', align: 'right', cell: (r) => count(r.count) },
  { header: 'level', align: 'left', cell: (r) => r.level },
  { header: 'SQLSTATE', align: 'left', cell: (r) => (r.sqlstate === null ? '-' : `${r.sqlstate}${r.condition ? ` ${r.condition}` : ''}`) },
  { header: 'message (normalised)', align: 'left', cell: (r) => r.message },
  { header: 'first / last seen', align: 'left', cell: (r) => `${shortTime(r.first_seen)} / ${shortTime(r.last_seen)}` },
  { header: 'example', align: 'left', sql: true, cell: (r) => `${[r.example.user, r.example.database].filter(Boolean).join('@') || '-'} ${shortTime(r.example.ts)}: ${r.example.statement ?? '(no statement logged)'}` },
];
