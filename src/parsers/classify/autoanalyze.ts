/**
 * Autoanalyze reports (analyze.c do_analyze_rel(), LOG). PG 13 prints one line,
 * `automatic analyze of table "d.s.t" system usage: ...`; 14+ print a multi-line report whose
 * continuation lines are the usage lines shared with vacuum. Manual `ANALYZE (VERBOSE)` reports
 * (`finished analyzing table ...`, 18+, INFO) are not autoanalyze.
 */
import type { AutoanalyzeDetails, LogEntry } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { parseRusage, splitQualifiedName } from './fields.js';
import { emptyUsage, firstLine, forEachLaterLine, LineTable, USAGE_LINES } from './usage-lines.js';

const LINES = new LineTable<AutoanalyzeDetails>(USAGE_LINES);

const HEADER = /^automatic analyze of table "(.+?)"(?: system usage: (.*))?$/;

export function classifyAutoanalyze(entry: LogEntry, message: string): Classification | null {
  const first = firstLine(message);
  const header = HEADER.exec(first);
  const name = header?.[1] === undefined ? null : splitQualifiedName(header[1]);
  if (!header || !name) return null;
  const details: AutoanalyzeDetails = Object.assign(emptyUsage(), { database: name.database, schema: name.schema, table: name.table, unknown_lines: [] });
  // PG 13: the usage is on the header line.
  if (header[2] !== undefined && !parseRusage(header[2], details)) details.unknown_lines.push(first);
  forEachLaterLine(message, (line) => {
    const parser = LINES.get(line);
    if (parser === undefined || !parser(line, details)) details.unknown_lines.push(line);
  });
  return { kind: 'autoanalyze', details, message: first, database: name.database };
}
