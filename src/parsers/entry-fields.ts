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
