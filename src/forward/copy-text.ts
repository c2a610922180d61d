/**
 * Rows as COPY ... FROM STDIN text (the default format). Pure: no connection. Fields are
 * tab-separated, NULL is \N, and only backslash, newline, carriage return and tab are escaped:
 * the JSON and messages forwarding sends rarely hold any, so most fields go as they are (CSV
 * would double every quote of every JSON document). A line `\.` inside a message cannot end the
 * data: its backslash is doubled. PostgreSQL text cannot hold NUL: a NUL from a log becomes
 * U+FFFD, in plain strings and in JSON text alike (jsonb refuses \u0000 too).
 */
export type CopyValue = string | number | null;

/** A NUL, raw or JSON-escaped: rare, so tested for before any rewrite. */
const ANY_NUL = /\0|\\u0000/;
const NEEDS_ESCAPE = /[\\\n\r\t]/;
const ESCAPED: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function copyLine(values: readonly CopyValue[]): string {
  // Concatenated rather than map().join(): no array per row (forwarding encodes every row).
  let line = '';
  for (let i = 0; i < values.length; i++) line += i === 0 ? copyField(values[i]!) : `\t${copyField(values[i]!)}`;
  return `${line}\n`;
}

function copyField(value: CopyValue): string {
  if (value === null) return '\\N';
  // NaN, Infinity and -Infinity are spelled as PostgreSQL reads them.
  if (typeof value === 'number') return String(value);
  const text = ANY_NUL.test(value) ? withoutNul(value) : value;
  return NEEDS_ESCAPE.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => ESCAPED[c]!) : text;
}

function withoutNul(text: string): string {
  // An escaped \u0000 in JSON text: only when its backslash is not itself escaped.
  return text.replace(/\0/g, '\uFFFD').replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd');
}

/**
 * A text[] as PostgreSQL reads an array literal: each element double-quoted, its quotes and
 * backslashes escaped with a backslash (the COPY escaping then applies to the whole literal).
 */
export function textArrayLiteral(texts: readonly string[]): string {
  return `{${texts.map((text) => `"${text.replace(/["\\]/g, '\\$&')}"`).join(',')}}`;
}

/** Lines grouped into chunks of about chunkBytes, for a COPY stream. */
export function* copyChunks<T>(rows: Iterable<T>, toValues: (row: T) => readonly CopyValue[], chunkBytes = 65_536): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += copyLine(toValues(row));
    if (chunk.length >= chunkBytes) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
