/**
 * Small conversions shared by the three framers when they fill a LogEntry.
 */
import type { PhysicalLine } from './framer.js';
import type { SourcePosition } from '../domain/log-entry.js';

/** User, database and application names: "[unknown]" (before authentication) and "" are no name. */
export function nameOrNull(value: string | undefined): string | null {
  return value === undefined || value === '' || value === '[unknown]' ? null : value;
}

/** csvlog writes an absent field as an empty column. */
export function textOrNull(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** PostgreSQL's pids are C ints: a larger, negative or fractional number is garbage, not a pid. */
const MAX_PID = 2_147_483_647;

/** A pid given as a JSON number (jsonlog); null when it cannot be one. */
export function pidOfNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value <= MAX_PID ? value : null;
}

/** A pid given as text (csvlog): plain decimal digits only, so "1e3", "0x10" or " 7" are not pids. */
export function pidOfText(text: string | undefined): number | null {
  if (text === undefined || text.length === 0 || text.length > 10) return null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  return pidOfNumber(Number(text));
}

/** The position of an entry whose first line is `line`. */
export function sourceOf(file: string, line: Pick<PhysicalLine, 'offset' | 'line'>): SourcePosition {
  return { file, offset: line.offset, line: line.line };
}

/** csvlog/jsonlog "location": "func, file:line" or "file:line", as the stderr LOCATION line. */
export function locationOf(func: string | null, file: string | null, lineNumber: string | number | null): string | null {
  if (file === null) return null;
  const at = lineNumber === null ? file : `${file}:${lineNumber}`;
  return func === null ? at : `${func}, ${at}`;
}
