/**
 * Autoanalyze reports (analyze.c do_analyze_rel(), LOG). PG 13 prints one line,
 * `automatic analyze of table "d.s.t" system usage: ...`; 14+ print a multi-line report whose
 * continuation lines are the usage lines shared with vacuum. Manual `ANALYZE (VERBOSE)` reports
 * (`finished analyzing table ...`, 18+, INFO) are not autoanalyze.
 */
import type { AutoanalyzeDetails, LogEntry } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { parseRusage, splitQualifiedName } from './fields.js';
import { ReportBody } from './report-body.js';
import { emptyUsage, firstLine, LineTable, USAGE_LINES, type LineParser } from './usage-lines.js';

const LINES = new LineTable<AutoanalyzeDetails>(USAGE_LINES);

/** The parser of a report line after the header. */
export function analyzeLineParser(line: string): LineParser<AutoanalyzeDetails> | undefined {
  return LINES.get(line);
}

const BODY = new ReportBody(analyzeLineParser);

// `s`: without it a CR or U+2028 in the line (a table name may hold one) stops `.*` before `$`,
// and every `"` before it is retried to the end of the line: quadratic time.
const HEADER = /^automatic analyze of table "(.+?)"(?: system usage: (.*))?$/s;

/** Every field of a report, unread: each report starts as a copy (a clone, as autovacuum.ts's UNREAD, not an Object.assign per report). */
const UNREAD: AutoanalyzeDetails = Object.assign(emptyUsage(), { database: '', schema: '', table: '', unknown_lines: [] });

export function classifyAutoanalyze(entry: LogEntry, message: string): Classification | null {
  const first = firstLine(message);
  const header = HEADER.exec(first);
  const qualifiedName = header?.[1];
  const name = qualifiedName === undefined ? null : splitQualifiedName(qualifiedName);
  if (!header || !name || qualifiedName === undefined) return null;
  const details = { ...UNREAD };
  details.database = name.database;
  details.schema = name.schema;
  details.table = name.table;
  details.unknown_lines = [];
  // PG 13: the usage is on the header line.
  if (header[2] !== undefined && !parseRusage(header[2], details)) details.unknown_lines.push(first);
  BODY.read(message, qualifiedName, details, details.unknown_lines);
  return { kind: 'autoanalyze', details, message: first, database: name.database };
}
