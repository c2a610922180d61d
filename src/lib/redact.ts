/**
 * The `redact` setting: what of the SQL text in log entries and polled sessions pgvigil keeps.
 * Statement text and bind parameters can carry personal data and secrets (`WHERE password =
 * 'hunter2'`); redaction happens where events and samples enter pgvigil (before the store), so
 * nothing downstream (the store, /api, /metrics, reports, notifications) ever holds the text.
 *
 * - `off`: everything as logged.
 * - `literals` (the default): in statement text, string literals ('...', E'...', U&'...',
 *   B'...', X'...', $tag$...$tag$), numbers and comments (nested ones too) become `?`; a
 *   `Parameters: $1 = '...'` DETAIL is dropped; the data a DETAIL, HINT or CONTEXT quotes is
 *   replaced (redact-error-fields.ts: row data, a data exception's input, what PL/pgSQL's RAISE
 *   composes, COPY and JSON input). The statement's shape (commands, tables, columns) stays, so
 *   the rules that read statements still work.
 * - `statements`: statement text is not kept at all (fields null, the SQL of a statement log line
 *   becomes `?`, the `query` label of polled sessions is removed); parameters are dropped too.
 *   Rules that need the statement (the DDL in a lock queue, REPACK runs from the log) lose it.
 *   DETAIL and HINT are redacted as at `literals`. The log report keeps a fingerprint per
 *   statement instead (src/report/log-report/reportable-event.ts).
 *
 * What is statement text: the STATEMENT of an entry (`details.statement`), the crash report's
 * query, a deadlock's `Process N: query`, CONTEXT (it quotes PL/pgSQL and SQL), the SQL of
 * `statement:` / `duration: ... statement|execute|parse|bind ...:` lines, and the `query` label
 * of polled sessions. An error message keeps its sentence and the identifiers it quotes; the
 * input it quotes (`invalid input syntax for type integer: "?"`) is replaced at both levels.
 * Never throws; linear in the text (two passes at most, no regex over the SQL).
 */
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { redactDetailOrHint, redactMessageInput, redactQuotedInput, redactRowData } from './redact-error-fields.js';

export const REDACT_LEVELS = ['off', 'literals', 'statements'] as const;
export type RedactLevel = (typeof REDACT_LEVELS)[number];

const PLACEHOLDER = '?';

/** A span [from, to) of text that is replaced by one `?`. */
type Span = readonly [from: number, to: number];

/**
 * `sql` with its literals and comments replaced by `?`; a literal cut short (a truncated query)
 * runs to the end. `quotedIdentifiers` false for text that quotes SQL in double quotes (CONTEXT:
 * `SQL statement "SELECT 'x'"`), where a double quote protects nothing.
 *
 * Whether a backslash escapes in a plain '...' string depends on the server's
 * standard_conforming_strings, which pgvigil does not know: the text is read both ways and only
 * what both readings keep is kept (`'it\'s hunter2'` is one literal one way, `'it\'` and a stray
 * quote the other; either way no literal of the true reading survives).
 */
export function redactSqlLiterals(sql: string, quotedIdentifiers = true): string {
  const standard = literalSpans(sql, quotedIdentifiers, false);
  return replaceSpans(sql, sql.includes('\\') ? unionOfSpans(standard, literalSpans(sql, quotedIdentifiers, true)) : standard);
}

/** The literals and comments of `sql`, in order; `backslashEscapes`: standard_conforming_strings off. */
function literalSpans(sql: string, quotedIdentifiers: boolean, backslashEscapes: boolean): Span[] {
  const spans: Span[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const prev = i > 0 ? sql[i - 1]! : ' ';
    if (c === '"' && quotedIdentifiers) {
      // A quoted identifier: kept whole, so its contents are never read as a literal.
      i = closing(sql, i + 1, '"', false);
    } else if (c === "'") {
      // The prefix (E, B, X, N, U&) belongs to the literal; E'...' always takes backslash escapes.
      const prefix = literalPrefixLength(sql, i);
      const end = closing(sql, i + 1, "'", backslashEscapes || (prefix === 1 && (prev === 'e' || prev === 'E')));
      spans.push([i - prefix, end]);
      i = end;
    } else if (c === '$' && !isWordChar(prev)) {
      const tagEnd = dollarTagEnd(sql, i);
      if (tagEnd !== -1) {
        const tag = sql.slice(i, tagEnd);
        const close = sql.indexOf(tag, tagEnd);
        const end = close === -1 ? n : close + tag.length;
        spans.push([i, end]);
        i = end;
      } else {
        // $1: a bind placeholder, kept.
        i++;
        while (i < n && isDigit(sql[i]!)) i++;
      }
    } else if (isDigit(c) && !isWordChar(prev)) {
      const start = i;
      while (i < n && (isWordChar(sql[i]!) || sql[i] === '.' || ((sql[i] === '+' || sql[i] === '-') && /[eE]/.test(sql[i - 1]!)))) i++;
      spans.push([start, i]);
    } else if (c === '-' && sql[i + 1] === '-') {
      const newline = sql.indexOf('\n', i);
      const end = newline === -1 ? n : newline;
      spans.push([i, end]);
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = commentEnd(sql, i + 2);
      spans.push([i, end]);
      i = end;
    } else {
      i++;
    }
  }
  return spans;
}

/**
 * Index just past the `$tag$` opening at `at`, or -1 when `$` opens none (a `$1` placeholder).
 * A tag is an identifier without `$`: letters of any alphabet (`$données$`), digits after the first.
 */
function dollarTagEnd(sql: string, at: number): number {
  let i = at + 1;
  if (i < sql.length && sql[i] !== '$') {
    if (isDigit(sql[i]!) || !isWordChar(sql[i]!)) return -1;
    while (i < sql.length && sql[i] !== '$' && isWordChar(sql[i]!)) i++;
  }
  return sql[i] === '$' ? i + 1 : -1;
}

/** Index just past the `*\/` that closes a comment opened before `from`: comments nest in PostgreSQL. */
function commentEnd(sql: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      i += 2;
      if (--depth === 0) return i;
    } else i++;
  }
  return sql.length;
}

/** Spans covering every position either list covers; overlapping spans merge. Both lists in order. */
function unionOfSpans(a: readonly Span[], b: readonly Span[]): Span[] {
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i]![0] <= b[j]![0]) ? a[i++]! : b[j++]!;
    const last = out.at(-1);
    if (last !== undefined && next[0] < last[1]) last[1] = Math.max(last[1], next[1]);
    else out.push([next[0], next[1]]);
  }
  return out;
}

/** `text` with each span replaced by `?`. */
function replaceSpans(text: string, spans: readonly Span[]): string {
  // Kept text is copied as slices between replacements, joined once: appending a character at a
  // time makes one object per character, and reading a growing string's end flattens it each time.
  const out: string[] = [];
  let keptFrom = 0;
  for (const [from, to] of spans) {
    if (from > keptFrom) out.push(text.slice(keptFrom, from));
    out.push(PLACEHOLDER);
    keptFrom = to;
  }
  if (text.length > keptFrom) out.push(text.slice(keptFrom));
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

/**
 * What a statement's text becomes at `statements`: null in a field, `?` in a message, unless the
 * caller names a stand-in (the log report's fingerprint marker: src/report/log-report/fingerprint.ts).
 */
export type StatementStandIn = (sql: string) => string;

function redactText(text: string | null, level: RedactLevel, quotedIdentifiers = true, standIn?: StatementStandIn): string | null {
  if (text === null) return null;
  if (level !== 'statements') return redactSqlLiterals(text, quotedIdentifiers);
  return standIn ? standIn(text) : null;
}

function redactMessage(event: AnyLogEvent, level: RedactLevel, standIn?: StatementStandIn): string {
  const { message } = event;
  const head = STATEMENT_LINE.exec(message);
  if (!head) return redactMessageInput(message, event);
  const sql = message.slice(head[1]!.length);
  return head[1]! + (level !== 'statements' ? redactSqlLiterals(sql) : standIn ? standIn(sql) : PLACEHOLDER);
}

const STATEMENT_FIELDS = ['statement', 'context', 'query'] as const;

/**
 * The event with its statement text redacted at `level` (the same object for `off`); at
 * `statements`, `standIn` (when given) replaces each statement instead of null or `?`.
 */
export function redactEvent(event: AnyLogEvent, level: RedactLevel, standIn?: StatementStandIn): AnyLogEvent {
  if (level === 'off') return event;
  const details: Record<string, unknown> = { ...event.details };
  for (const field of STATEMENT_FIELDS) {
    const value = details[field];
    if (typeof value === 'string') details[field] = field === 'context' ? redactText(redactQuotedInput(value), level, false) : redactText(value, level, true, standIn);
  }
  // Read with the CONTEXT as logged: it says whether code raised the entry.
  if (typeof details.detail === 'string') details.detail = PARAMETERS_DETAIL.test(details.detail) ? null : redactDetailOrHint(details.detail, event);
  if (typeof details.hint === 'string') details.hint = redactDetailOrHint(details.hint, event);
  if (Array.isArray(details.processes)) {
    details.processes = (details.processes as Array<Record<string, unknown>>).map((p) => (typeof p.query === 'string' ? { ...p, query: redactText(p.query, level, true, standIn) } : p));
  }
  // Same kind, same fields: only string values were replaced (or nulled where the type allows null).
  return { ...event, message: redactMessage(event, level, standIn), details } as unknown as AnyLogEvent;
}

const UNKNOWN_LINE = { kind: 'generic', level: 'ERROR', sqlstate: null } as const;

/** A raw log line (one not understood, kept as an example): its literals at `literals`, nothing at `statements`. */
export function redactLine(line: string, level: RedactLevel): string {
  if (level === 'off') return line;
  // Whose line it is is unknown: read as an error's DETAIL (any row data it may quote goes too).
  return level === 'statements' ? PLACEHOLDER : redactSqlLiterals(redactRowData(line, UNKNOWN_LINE), false);
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
