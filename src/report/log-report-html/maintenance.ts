/**
 * Autovacuum and autoanalyze per table (pgBadger's "Vacuums" page): runs, time spent, and what
 * pgBadger does not show, the dead rows a vacuum could not remove and how old its cutoff was.
 * Pure.
 */
import type { AnalyzeSummary, TableAnalyzeStats, TableVacuumStats } from '../analyze-summary.js';
import { count, counted, countOrDash, seconds, type Column } from '../text-format.js';
import { htmlTable, paragraph, subheading, type PageSection } from './html-parts.js';

const NO_AUTOVACUUM = 'no autovacuum report: set log_autovacuum_min_duration = 0 (or a threshold in ms) to have PostgreSQL log each run';
const NO_AUTOANALYZE = 'no autoanalyze report: log_autovacuum_min_duration (PostgreSQL 19: log_autoanalyze_min_duration) logs them';

export function maintenanceSection(summary: AnalyzeSummary, charts: string): PageSection {
  return {
    id: 'maintenance',
    title: 'Autovacuum and autoanalyze',
    body: [
      charts,
      subheading(`Autovacuum: ${counted(summary.autovacuum.runs, 'run')} on ${counted(summary.autovacuum.tables_total, 'table')}`),
      tableRuns<TableVacuumStats>(summary.autovacuum, [
        { header: 'tuples removed', align: 'right', cell: (t) => count(t.tuples_removed) },
        { header: 'max dead not removable', align: 'right', cell: (t) => countOrDash(t.max_dead_not_removable) },
        { header: 'max cutoff age (xids)', align: 'right', cell: (t) => countOrDash(t.max_removable_cutoff_age_xids) },
        { header: 'aggressive', align: 'right', cell: (t) => count(t.aggressive_runs) },
        { header: 'wraparound', align: 'right', cell: (t) => count(t.wraparound_runs) },
      ], NO_AUTOVACUUM),
      subheading(`Autoanalyze: ${counted(summary.autoanalyze.runs, 'run')} on ${counted(summary.autoanalyze.tables_total, 'table')}`),
      tableRuns<TableAnalyzeStats>(summary.autoanalyze, [], NO_AUTOANALYZE),
    ].join('\n'),
  };
}

function tableRuns<T extends TableAnalyzeStats>(
  runs: { tables: T[]; other_tables_runs: number }, ownColumns: Array<Column<T>>, whenEmpty: string,
): string {
  const table = htmlTable<T>([
    { header: 'table', align: 'left', cell: (t) => t.table },
    { header: 'runs', align: 'right', cell: (t) => count(t.runs) },
    { header: 'total s', align: 'right', cell: (t) => seconds(t.total_elapsed_s) },
    { header: 'max s', align: 'right', cell: (t) => seconds(t.max_elapsed_s) },
    ...ownColumns,
  ], runs.tables, whenEmpty);
  return runs.other_tables_runs > 0 ? `${table}\n${paragraph(`${counted(runs.other_tables_runs, 'run')} on further tables not itemised`)}` : table;
}
