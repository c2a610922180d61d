/**
 * Reading node-postgres rows at the database boundary: the one place where `unknown` becomes a
 * number, string or boolean. NULL stays null (never 0). A value of the wrong type, or a column
 * the query should have returned but did not, throws RowError (code `bad_row`): the scheduler
 * counts it per collector and the other collectors go on.
 *
 * node-postgres returns numeric as strings, float8/int4 as numbers, bool as booleans; int8 as a
 * string too, except from the poll scheduler, which parses it to a number when that is exact.
 * Collectors cast timestamps to epoch seconds and LSNs to byte offsets in SQL, so no Date or
 * pg_lsn parsing happens here.
 */
import type { Row } from './collector.js';

export class RowError extends Error {
  readonly code = 'bad_row';
  constructor(message: string) {
    super(message);
    this.name = 'RowError';
  }
}

function cell(row: Row, column: string): unknown {
  if (!(column in row)) throw new RowError(`column ${column} missing from the row (columns: ${Object.keys(row).join(', ')})`);
  return row[column];
}

/** A numeric column: int2/4/8, float, numeric (also as its decimal string). */
export function num(row: Row, column: string): number | null {
  const value = cell(row, column);
  if (value === null) return null;
  if (typeof value === 'number') {
    if (Number.isNaN(value)) throw new RowError(`column ${column} is NaN`);
    return value;
  }
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value);
    if (!Number.isNaN(parsed)) return parsed;
  }
  throw new RowError(`column ${column}: expected a number, got ${JSON.stringify(value)}`);
}

/** A numeric column that must not be NULL (a key such as a pid or an oid). */
export function requiredNum(row: Row, column: string): number {
  const value = num(row, column);
  if (value === null) throw new RowError(`column ${column} is NULL`);
  return value;
}

export function text(row: Row, column: string): string | null {
  const value = cell(row, column);
  if (value === null) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  throw new RowError(`column ${column}: expected text, got ${JSON.stringify(value)}`);
}

export function bool(row: Row, column: string): boolean | null {
  const value = cell(row, column);
  if (value === null) return null;
  if (typeof value === 'boolean') return value;
  throw new RowError(`column ${column}: expected a boolean, got ${JSON.stringify(value)}`);
}

/** A boolean as a sample value: 1 / 0, NULL stays null. */
export function flag(row: Row, column: string): number | null {
  const value = bool(row, column);
  return value === null ? null : value ? 1 : 0;
}

/** A text column as a label value: NULL becomes '' (labels cannot be null). */
export function label(row: Row, column: string): string {
  return text(row, column) ?? '';
}

/** A millisecond column (pg_stat_* `*_time`) as seconds. */
export function msToSeconds(row: Row, column: string): number | null {
  const value = num(row, column);
  return value === null ? null : value / 1000;
}

/** The labels naming a table: datname, schemaname, relname columns of the row. */
export function relationLabels(row: Row): { datname: string; schemaname: string; relname: string } {
  return { datname: label(row, 'datname'), schemaname: label(row, 'schemaname'), relname: label(row, 'relname') };
}
