/**
 * Rows as COPY ... (FORMAT csv) text. Pure: no connection. NULL is an unquoted empty field and
 * every string is quoted, so an empty string stays an empty string and a line `\.` inside a
 * message cannot end the data. PostgreSQL text cannot hold NUL: a NUL from a log becomes U+FFFD,
 * in plain strings and in JSON text alike (jsonb refuses \u0000 too).
 */
export type CsvValue = string | number | null;

export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\n`;
}

function csvField(value: CsvValue): string {
  if (value === null) return '';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return `"${Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity'}"`;
    return String(value);
  }
  return `"${withoutNul(value).replace(/"/g, '""')}"`;
}

function withoutNul(text: string): string {
  // An escaped \u0000 in JSON text: only when its backslash is not itself escaped.
  return text.replace(/\0/g, '\uFFFD').replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd');
}

/** Lines grouped into chunks of about chunkBytes, for a COPY stream. */
export function* csvChunks<T>(rows: Iterable<T>, toValues: (row: T) => readonly CsvValue[], chunkBytes = 65_536): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += csvLine(toValues(row));
    if (chunk.length >= chunkBytes) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
