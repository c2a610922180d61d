/**
 * The `Error messages` section of `pgvigil analyze`'s text: the ten most frequent error messages
 * (normalised, errors.ts) with their SQLSTATE and when they were first and last seen. The counts
 * by SQLSTATE are the summary's own section. Pure: result in, lines out.
 */
import { count, table } from '../text-format.js';
import type { ErrorsResult, MessageRow } from './errors.js';

const TOP = 10;
const MESSAGE_CHARS = 100;

/** The section's lines (a blank line first), or none when the log had no error. */
export function renderErrorsText(result: ErrorsResult | undefined): string[] {
  if (result === undefined || result.messages.length === 0) return [];
  const { error, fatal, panic, warning } = result.counts;
  return [
    '', `Error messages (${count(error)} ERROR, ${count(fatal)} FATAL, ${count(panic)} PANIC; ${count(warning)} WARNING apart)`,
    ...table<MessageRow>([
      { header: 'count', align: 'right', cell: (r) => count(r.count) },
      { header: 'level', align: 'left', cell: (r) => r.level },
      { header: 'sqlstate', align: 'left', cell: (r) => r.sqlstate ?? '-' },
      { header: 'last seen', align: 'left', cell: (r) => r.last_seen },
      { header: 'message', align: 'left', cell: (r) => cut(r.message) },
    ], result.messages.slice(0, TOP)).map((line) => `  ${line}`),
  ];
}

function cut(text: string): string {
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 3)}...` : text;
}
