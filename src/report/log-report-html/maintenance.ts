/**
 * Autovacuum and autoanalyze per table (pgBadger's "Vacuums"): runs, time spent, index scans,
 * buffers, and what pgBadger does not show, the dead rows a vacuum could not remove and how old
 * its cutoff was; per minute how many ran. Pure.
 */
import type { MaintenanceResult } from '../log-report/maintenance.js';
import { count, counted, countOrDash, seconds } from '../text-format.js';
import { absent, chartGrid, htmlTable, paragraph, subheading, type HtmlColumn, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_AUTOVACUUM = 'no autovacuum report: set log_autovacuum_min_duration = 0 (or a threshold in ms) to have PostgreSQL log each run';
const NO_AUTOANALYZE = 'no autoanalyze report: log_autovacuum_min_duration (PostgreSQL 19: log_autoanalyze_min_duration) logs them';

type VacuumRow = MaintenanceResult['autovacuum']['tables'][number];
type AnalyzeRow = MaintenanceResult['autoanalyze']['tables'][number];

export function maintenanceSection(result: MaintenanceResult, window: TimeWindow): PageSection {
  const { autovacuum, autoanalyze } = result;
  const title = 'Autovacuum and autoanalyze';
  if (autovacuum.runs + autoanalyze.runs === 0) return { id: 'maintenance', title, body: absent(NO_AUTOVACUUM) };
  return {
    id: 'maintenance',
    title,
    body: [
      chartGrid([minuteChart('maintenance_per_minute', 'Autovacuum and autoanalyze runs per minute', 'count', result.per_minute, [
        { counter: 'autovacuum', label: 'autovacuum' }, { counter: 'autoanalyze', label: 'autoanalyze' },
      ], NO_AUTOVACUUM)], window),
      subheading(`Autovacuum: ${counted(autovacuum.runs, 'run')} on ${counted(autovacuum.tables_total, 'table')}`),
      htmlTable(VACUUM_COLUMNS, withOther(autovacuum), NO_AUTOVACUUM),
      subheading(`Autoanalyze: ${counted(autoanalyze.runs, 'run')} on ${counted(autoanalyze.tables_total, 'table')}`),
      htmlTable(USAGE_COLUMNS, withOther(autoanalyze), NO_AUTOANALYZE),
      autovacuum.tables.length < autovacuum.tables_total ? paragraph(`The ${autovacuum.tables.length} tables with the most vacuum time of ${autovacuum.tables_total}.`) : '',
    ].join('\n'),
  };
}

/** The tables past the report's limit of distinct ones, as one last row. */
function withOther<Row extends { table: string }>(kind: { tables: Row[]; other: Row | null }): Row[] {
  return kind.other === null ? kind.tables : [...kind.tables, { ...kind.other, table: '(further tables, added up)' }];
}

const USAGE_COLUMNS: ReadonlyArray<HtmlColumn<AnalyzeRow>> = [
  { header: 'table', align: 'left', cell: (t) => t.table },
  { header: 'runs', align: 'right', cell: (t) => count(t.runs) },
  { header: 'total s', align: 'right', cell: (t) => seconds(t.elapsed_s) },
  { header: 'max s', align: 'right', cell: (t) => seconds(t.max_elapsed_s) },
  { header: 'buffer hits', align: 'right', cell: (t) => countOrDash(t.buffer_hits) },
  { header: 'reads', align: 'right', cell: (t) => countOrDash(t.buffer_reads) },
  { header: 'dirtied', align: 'right', cell: (t) => countOrDash(t.buffer_dirtied) },
  { header: 'WAL bytes', align: 'right', cell: (t) => countOrDash(t.wal_bytes) },
];

const VACUUM_COLUMNS: ReadonlyArray<HtmlColumn<VacuumRow>> = [
  ...USAGE_COLUMNS.slice(0, 4),
  { header: 'tuples removed', align: 'right', cell: (t) => countOrDash(t.tuples_removed) },
  { header: 'dead not removable (max)', align: 'right', cell: (t) => countOrDash(t.max_dead_not_removable) },
  { header: 'cutoff age xids (max)', align: 'right', cell: (t) => countOrDash(t.max_removable_cutoff_age_xids) },
  { header: 'index scans', align: 'right', cell: (t) => countOrDash(t.index_scans) },
  { header: 'aggressive', align: 'right', cell: (t) => count(t.aggressive_runs) },
  ...USAGE_COLUMNS.slice(4),
];
