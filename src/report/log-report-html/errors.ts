/**
 * Errors by SQLSTATE (pgBadger's "Events"): how many of each, and the levels they were logged at.
 * Pure.
 */
import { NO_SQLSTATE, type AnalyzeSummary, type Ranked } from '../analyze-summary.js';
import { count } from '../text-format.js';
import { htmlTable, type PageSection } from './html-parts.js';

export function errorsSection(summary: AnalyzeSummary, charts: string): PageSection {
  const errors = ['ERROR', 'FATAL', 'PANIC'] as const;
  const total = errors.reduce((sum, level) => sum + (summary.events_by_level[level] ?? 0), 0);
  return {
    id: 'errors',
    title: `Errors: ${count(total)}`,
    body: [
      charts,
      htmlTable<Ranked>([
        { header: 'SQLSTATE', align: 'left', cell: (r) => (r.key === NO_SQLSTATE ? 'not logged (add %e to log_line_prefix)' : r.key) },
        { header: 'class', align: 'left', cell: (r) => (r.key === NO_SQLSTATE ? '-' : r.key.slice(0, 2)) },
        { header: 'count', align: 'right', cell: (r) => count(r.count) },
      ], summary.errors_by_sqlstate, 'no ERROR, FATAL or PANIC in this log'),
    ].join('\n'),
  };
}
