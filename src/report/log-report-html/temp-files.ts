/**
 * Temporary files (pgBadger's "Temp Files"): how many and how big, the statements that wrote the
 * most with an example as logged, and per minute files and bytes. Pure.
 */
import type { TempFilesResult } from '../log-report/temp-files.js';
import { count, mb } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_TEMP_FILES = 'no temporary file logged: set log_temp_files = 0 (or a size in kB) to have PostgreSQL log each one';

export function tempFilesSection(result: TempFilesResult, window: TimeWindow): PageSection {
  const title = `Temporary files: ${count(result.count)}`;
  if (result.count === 0) return { id: 'temp_files', title, body: absent(NO_TEMP_FILES) };
  const statements = result.other === null ? result.by_statement : [...result.by_statement, { fingerprint: null, statement: '(further statements, added up)', example: null, ...result.other }];
  return {
    id: 'temp_files',
    title,
    body: [
      chartGrid([minuteChart('temp_bytes_per_minute', 'Temporary file bytes per minute', 'bytes', result.per_minute, [{ counter: 'temp_bytes', label: 'bytes written' }], NO_TEMP_FILES)], window),
      factsTable([
        ['files', count(result.count)],
        ['total size', mb(result.total_bytes)],
        ['largest', result.max_bytes === null ? '-' : mb(result.max_bytes)],
      ]),
      subheading('Statements by temporary file size'),
      htmlTable<TempFilesResult['by_statement'][number]>([
        { header: 'statement (normalised)', align: 'left', sql: true, cell: (s) => s.statement },
        { header: 'files', align: 'right', cell: (s) => count(s.count) },
        { header: 'total', align: 'right', cell: (s) => mb(s.total_bytes) },
        { header: 'largest', align: 'right', cell: (s) => (s.max_bytes === null ? '-' : mb(s.max_bytes)) },
        { header: 'example as logged', align: 'left', sql: true, cell: (s) => s.example ?? '-' },
      ], statements, 'no statement logged with the files: PostgreSQL names it only when the file is written by a statement'),
    ].join('\n'),
  };
}
