/**
 * The `Queries` section of `pgvigil analyze`'s text: the ten fingerprints that took the most
 * time and the ten run most often, each statement on one line. Pure: result in, lines out.
 */
import { count, milliseconds, table } from '../text-format.js';
import type { FingerprintRow, QueriesResult } from './queries.js';

const TOP = 10;
const STATEMENT_CHARS = 100;

/** The section's lines (a blank line first), or none when the log had no statement. */
export function renderQueriesText(result: QueriesResult | undefined): string[] {
  if (result === undefined || result.queries === 0) return [];
  const title = `Queries (${count(result.queries)} executions, ${milliseconds(result.total_ms)} ms in all, ${count(result.fingerprints)} statements by fingerprint)`;
  const indent = (lines: string[]): string[] => lines.map((line) => `  ${line}`);
  return [
    '', title,
    ...indent(['by total time:', ...fingerprintTable(result.by_total_time.slice(0, TOP))]),
    ...indent(['by count:', ...fingerprintTable(result.by_count.slice(0, TOP))]),
    ...(result.statement_not_logged.count > 0 ? [`  ${count(result.statement_not_logged.count)} durations without their statement (log_duration with no log_statement line before)`] : []),
  ];
}

function fingerprintTable(rows: readonly FingerprintRow[]): string[] {
  return table<FingerprintRow>([
    { header: 'total ms', align: 'right', cell: (r) => milliseconds(r.total_ms) },
    { header: 'count', align: 'right', cell: (r) => count(r.count) },
    { header: 'mean ms', align: 'right', cell: (r) => milliseconds(r.mean_ms) },
    { header: 'p95 ms', align: 'right', cell: (r) => milliseconds(r.p95_ms) },
    { header: 'max ms', align: 'right', cell: (r) => milliseconds(r.max_ms) },
    { header: 'statement', align: 'left', cell: (r) => oneLine(r.text) },
  ], rows);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > STATEMENT_CHARS ? `${flat.slice(0, STATEMENT_CHARS - 3)}...` : flat;
}
