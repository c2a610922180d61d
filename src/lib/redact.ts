/**
 * The `redact` setting: what of the SQL text in log entries and polled sessions pgvigil keeps.
 * Statement text and bind parameters can carry personal data and secrets (`WHERE password =
 * 'hunter2'`); redaction happens where events and samples enter pgvigil (before the store), so
 * nothing downstream (the store, /api, /metrics, reports, notifications) ever holds the text.
 *
 * - `off`: everything as logged.
 * - `literals`: in statement text, string literals ('...', E'...', $$...$$), numbers and
 *   comments become `?`; a `Parameters: $1 = '...'` DETAIL is dropped. The statement's shape
 *   (commands, tables, columns) stays, so the rules that read statements still work.
 * - `statements`: statement text is not kept at all (fields null, the SQL of a statement log line
 *   becomes `?`, the `query` label of polled sessions is removed); parameters are dropped too.
 *   Rules that need the statement (the DDL in a lock queue, REPACK runs from the log) lose it.
 *
 * What is statement text: the STATEMENT of an entry (`details.statement`), the crash report's
 * query, a deadlock's `Process N: query`, CONTEXT (it quotes PL/pgSQL and SQL), the SQL of
 * `statement:` / `duration: ... statement|execute|parse|bind ...:` lines, and the `query` label
 * of polled sessions. Kept as written in every mode: error messages themselves (they quote
 * identifiers, and sometimes a value: `invalid input syntax for type integer: "abc"`).
 * Never throws; linear in the text (one pass, no regex over the SQL).
 */
import type { AnyLogEvent, Sample } from '../domain/index.js';

export const REDACT_LEVELS = ['off', 'literals', 'statements'] as const;
export type RedactLevel = (typeof REDACT_LEVELS)[number];

const PLACEHOLDER = '?';

/**
 * `sql` with its literals and comments replaced by `?`; a literal cut short (a truncated query)
 * runs to the end. `quotedIdentifiers` false for text that quotes SQL in double quotes (CONTEXT:
 * `SQL statement "SELECT 'x'"`), where a double quote protects nothing.
 */
export function redactSqlLiterals(sql: string, quotedIdentifiers = true): string {
  // Kept text is copied as slices between replacements, joined once: appending a character at a
  // time makes one object per character, and reading a growing string's end flattens it each time.
  const out: string[] = [];
  let keptFrom = 0;
  const replace = (from: number, to: number): void => {
    if (from > keptFrom) out.push(sql.slice(keptFrom, from));
    out.push(PLACEHOLDER);
    keptFrom = to;
  };
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const prev = i > 0 ? sql[i - 1]! : ' ';
    if (c === '"' && quotedIdentifiers) {
      // A quoted identifier: kept whole, so its contents are never read as a literal.
      i = closing(sql, i + 1, '"', false);
    } else if (c === "'") {
      // The prefix (E, B, X, N, U&) belongs to the literal; E'...' takes backslash escapes.
      const prefix = literalPrefixLength(sql, i);
      const end = closing(sql, i + 1, "'", prefix === 1 && (prev === 'e' || prev === 'E'));
      replace(i - prefix, end);
      i = end;
    } else if (c === '$' && !isWordChar(prev)) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        const end = close === -1 ? n : close + tag[0].length;
        replace(i, end);
        i = end;
      } else {
        // $1: a bind placeholder, kept.
        i++;
        while (i < n && isDigit(sql[i]!)) i++;
      }
    } else if (isDigit(c) && !isWordChar(prev)) {
      const start = i;
      while (i < n && (isWordChar(sql[i]!) || sql[i] === '.' || ((sql[i] === '+' || sql[i] === '-') && /[eE]/.test(sql[i - 1]!)))) i++;
      replace(start, i);
    } else if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      const end = newline === -1 ? n : newline;
      replace(i, end);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const close = sql.indexOf('*/', i + 2);
      const end = close === -1 ? n : close + 2;
      replace(i, end);
      i = end;
    } else {
      i++;
    }
  }
  if (n > keptFrom) out.push(sql.slice(keptFrom));
  return out.join('');
}

/** Length of a literal prefix (E, B, X, N: 1; U&: 2) right before the quote at `quoteAt`, 0 for none. */
function literalPrefixLength(sql: string, quoteAt: number): number {
  const standsAlone = (at: number): boolean => at < 0 || !isWordChar(sql[at]!);
  if (quoteAt >= 2 && /[uU]/.test(sql[quoteAt - 2]!) && sql[quoteAt - 1] === '&' && standsAlone(quoteAt - 3)) return 2;
  if (quoteAt >= 1 && /[eEbBxXnN]/.test(sql[quoteAt - 1]!) && standsAlone(quoteAt - 2)) return 1;
  return 0;
}

/** Index just past the quote that closes one opened before `from` (doubled quotes, and backslashes if `escaped`, stay inside). */
function closing(sql: string, from: number, quote: string, escaped: boolean): number {
  for (let i = from; i < sql.length; i++) {
    const c = sql[i];
    if (escaped && c === '\\') i++;
    else if (c === quote) {
      if (sql[i + 1] === quote) i++;
      else return i + 1;
    }
  }
  return sql.length;
}

function isDigit(c: string): boolean {
  return c >= '0' && c <= '9';
}

function isWordChar(c: string): boolean {
  return /[A-Za-z0-9_$\u0080-\uffff]/.test(c);
}

/** `statement: SQL`, `duration: 1.2 ms  execute S_1: SQL` and their kin: the part before the SQL. */
const STATEMENT_LINE = /^((?:duration: [\d.]+ ms {1,2})?(?:statement|(?:execute|parse|bind) [^:\n]{0,200}): )/;
const PARAMETERS_DETAIL = /^\s*parameters: /i;

function redactText(text: string | null, level: RedactLevel, quotedIdentifiers = true): string | null {
  if (text === null) return null;
  return level === 'statements' ? null : redactSqlLiterals(text, quotedIdentifiers);
}

function redactMessage(message: string, level: RedactLevel): string {
  const head = STATEMENT_LINE.exec(message);
  if (!head) return message;
  const sql = message.slice(head[1]!.length);
  return head[1]! + (level === 'statements' ? PLACEHOLDER : redactSqlLiterals(sql));
}

const STATEMENT_FIELDS = ['statement', 'context', 'query'] as const;

/** The event with its statement text redacted at `level` (the same object for `off`). */
export function redactEvent(event: AnyLogEvent, level: RedactLevel): AnyLogEvent {
  if (level === 'off') return event;
  const details: Record<string, unknown> = { ...event.details };
  for (const field of STATEMENT_FIELDS) {
    const value = details[field];
    if (typeof value === 'string') details[field] = redactText(value, level, field !== 'context');
  }
  if (typeof details.detail === 'string' && PARAMETERS_DETAIL.test(details.detail)) details.detail = null;
  if (Array.isArray(details.processes)) {
    details.processes = (details.processes as Array<Record<string, unknown>>).map((p) => (typeof p.query === 'string' ? { ...p, query: redactText(p.query, level) } : p));
  }
  // Same kind, same fields: only string values were replaced (or nulled where the type allows null).
  return { ...event, message: redactMessage(event.message, level), details } as unknown as AnyLogEvent;
}

/** A raw log line (one not understood, kept as an example): its literals at `literals`, nothing at `statements`. */
export function redactLine(line: string, level: RedactLevel): string {
  if (level === 'off') return line;
  return level === 'statements' ? PLACEHOLDER : redactSqlLiterals(line, false);
}

/** The sample with its `query` label (a polled session's SQL) redacted at `level`. */
export function redactSample(sample: Sample, level: RedactLevel): Sample {
  const query = sample.labels.query;
  if (level === 'off' || query === undefined) return sample;
  const labels: Record<string, string> = { ...sample.labels };
  if (level === 'statements') delete labels.query;
  else labels.query = redactSqlLiterals(query);
  return { ...sample, labels };
}
