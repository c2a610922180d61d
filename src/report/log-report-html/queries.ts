/**
 * Queries (pgBadger's "Queries" pages): statements grouped by fingerprint, the top ones by total
 * time and by count with their p50/p95/max, the slowest single executions, and per minute how
 * many ran, how long they took in all and their p50/p95/max. Pure.
 */
import type { FingerprintRow, NameCount, QueriesResult, SlowRow } from '../log-report/queries.js';
import { count, counted, milliseconds } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type HtmlColumn, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_STATEMENTS = 'no statement or duration line: set log_min_duration_statement = 0 (or a threshold in ms) to have PostgreSQL log each statement with its duration';
const NO_DURATIONS = 'statements logged without their durations (log_statement): set log_min_duration_statement = 0 (or a threshold in ms) for their times';

export function queriesSection(queries: QueriesResult, window: TimeWindow): PageSection {
  const title = `Queries: ${count(queries.queries)}`;
  if (queries.queries === 0) return { id: 'queries', title, body: absent(NO_STATEMENTS) };
  const charts = chartGrid([
    minuteChart('queries_per_minute', 'Queries per minute', 'count', queries.per_minute, [{ counter: 'queries', label: 'queries' }], 'no query'),
    minuteChart('query_duration_per_minute', 'Total query duration per minute', 'seconds', queries.per_minute, [{ counter: 'duration_ms', label: 'total duration', scale: 1 / 1000 }], NO_DURATIONS),
    minuteChart('query_duration_percentiles', 'Query duration percentiles per minute', 'milliseconds', queries.per_minute, [
      { counter: 'p50_ms', label: 'p50' }, { counter: 'p95_ms', label: 'p95' }, { counter: 'max_ms', label: 'max' },
    ], NO_DURATIONS),
  ], window);
  const unknownMinutes = queries.minutes_without_percentiles > 0
    ? absent(`p50/p95/max unknown for ${counted(queries.minutes_without_percentiles, 'minute', 'minutes')} with durations (the gaps in the percentiles chart): stored by a pgvigil that kept no per-minute durations`)
    : '';
  const untimed = queries.timed === 0;
  return {
    id: 'queries',
    title,
    body: [
      factsTable([
        ['queries', count(queries.queries)],
        ['with a duration', count(queries.timed)],
        ['total duration', `${milliseconds(queries.total_ms)} ms`],
        ['distinct (fingerprints)', count(queries.fingerprints)],
        ['parse and bind steps', `${count(queries.parse_bind.count)}, ${milliseconds(queries.parse_bind.total_ms)} ms`],
        ['durations without their statement (log_duration)', `${count(queries.statement_not_logged.count)}, ${milliseconds(queries.statement_not_logged.total_ms)} ms`],
        ...(queries.other_fingerprints.count > 0 ? [['further fingerprints not itemised', counted(queries.other_fingerprints.count, 'query', 'queries')] as [string, string]] : []),
      ]),
      charts + unknownMinutes,
      subheading('Top queries by total time'),
      untimed ? absent(NO_DURATIONS) : htmlTable(FINGERPRINT_COLUMNS, queries.by_total_time, NO_DURATIONS),
      subheading('Most frequent queries'),
      htmlTable(FINGERPRINT_COLUMNS, queries.by_count, NO_STATEMENTS),
      subheading('Slowest individual queries'),
      untimed ? absent(NO_DURATIONS) : htmlTable(SLOW_COLUMNS, queries.slowest, NO_DURATIONS),
    ].join('\n'),
  };
}

const FINGERPRINT_COLUMNS: ReadonlyArray<HtmlColumn<FingerprintRow>> = [
  { header: 'query (normalised)', align: 'left', sql: true, cell: (r) => r.text },
  { header: 'count', align: 'right', cell: (r) => count(r.count) },
  { header: 'total ms', align: 'right', cell: (r) => milliseconds(r.timed > 0 ? r.total_ms : null) },
  { header: 'mean ms', align: 'right', cell: (r) => milliseconds(r.mean_ms) },
  { header: 'p50 ms', align: 'right', cell: (r) => milliseconds(r.p50_ms) },
  { header: 'p95 ms', align: 'right', cell: (r) => milliseconds(r.p95_ms) },
  { header: 'max ms', align: 'right', cell: (r) => milliseconds(r.max_ms) },
  { header: 'databases', align: 'left', cell: (r) => names(r.databases) },
  { header: 'users', align: 'left', cell: (r) => names(r.users) },
  { header: 'applications', align: 'left', cell: (r) => names(r.applications) },
];

const SLOW_COLUMNS: ReadonlyArray<HtmlColumn<SlowRow>> = [
  { header: 'ms', align: 'right', cell: (r) => milliseconds(r.duration_ms) },
  { header: 'at', align: 'left', cell: (r) => r.ts },
  { header: 'database', align: 'left', cell: (r) => r.database ?? '-' },
  { header: 'user', align: 'left', cell: (r) => r.user ?? '-' },
  { header: 'application', align: 'left', cell: (r) => r.application ?? '-' },
  { header: 'statement', align: 'left', sql: true, cell: (r) => r.text },
];

/** "appdb 40, postgres 2": who ran it, most first; "-" when the log did not say. */
function names(counts: readonly NameCount[]): string {
  return counts.length === 0 ? '-' : counts.map((n) => `${n.name} ${count(n.count)}`).join(', ');
}
