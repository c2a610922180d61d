/**
 * The fields of a log entry beside its statement, as `redact: literals` and `statements` keep
 * them (src/lib/redact.ts). DETAIL, HINT and CONTEXT are sentences the server composes, mostly of
 * names; some quote the data that failed, and that is what is replaced here:
 * - the row data of an integrity violation (DETAIL: `Key (email)=(?) already exists.`,
 *   `Failing row contains (?).`): redactRowData;
 * - the input a data exception (SQLSTATE class 22) quotes (DETAIL `Token "?" is invalid.`);
 * - what PL/pgSQL code composes (`RAISE ... USING DETAIL = ..., HINT = ...`): replaced whole;
 * - the input line a COPY, or the JSON text a JSON parse, quotes in CONTEXT;
 * - the input an error message quotes at its end (`invalid input syntax for type integer: "?"`).
 * QUERY (the internal query of a PL/pgSQL error) never reaches an event (classify/index.ts).
 * Never throws; linear in the text.
 */
import type { AnyLogEvent, LogLevel } from '../domain/index.js';

const PLACEHOLDER = '?';

/** What of an event tells what its DETAIL quotes. */
type ErrorClassOf = Pick<AnyLogEvent, 'kind' | 'level' | 'sqlstate'>;
/** ... and whose text a DETAIL or HINT is (the CONTEXT in its details). */
export type FieldOwner = ErrorClassOf & { details: unknown };

/**
 * `(email)=(alice@example.com)`, `(a, b) = (1, 2)`: the key and its values as PostgreSQL prints
 * them into unique, exclusion, foreign-key and partition DETAILs (BuildIndexValueDescription,
 * ri_ReportViolation, ExecBuildSlotPartitionKeyDescription). The shape is built outside the
 * translated text, so it reads alike in every language.
 */
const KEY_VALUES = /\)\s?=\s?\(/;
/** Integrity constraint violations: their DETAIL quotes the failing row (`Failing row contains (...)`). */
const INTEGRITY_CLASS = '23';
/** Data exceptions: their DETAIL quotes the input that failed (`Token "..." is invalid.`, jsonfuncs.c). */
const DATA_EXCEPTION_CLASS = '22';
const ERROR_LEVELS: ReadonlySet<LogLevel> = new Set(['ERROR', 'FATAL', 'PANIC']);
/**
 * The CONTEXT line of a PL/pgSQL RAISE: `PL/pgSQL function f(text) line 3 at RAISE` (pl_exec.c).
 * The statement's name is not translated (pl_funcs.c plpgsql_stmt_typename), so it ends the line
 * in every language.
 */
const RAISED = /RAISE$/m;
/** Double-quoted text on one line: where a data exception's DETAIL quotes its input. */
const QUOTED = /"[^"\n]*"/g;

/**
 * Whether an event is of SQLSTATE class `sqlClass`; when the log does not carry SQLSTATEs (stderr
 * without %e), every error no classifier understood may be: more is redacted rather than less.
 */
function mayBeOfClass(event: ErrorClassOf, sqlClass: string): boolean {
  return event.sqlstate === null ? event.kind === 'generic' && ERROR_LEVELS.has(event.level) : event.sqlstate.startsWith(sqlClass);
}

/**
 * A DETAIL with the row data it quotes replaced: the values of a `(key)=(values)` (the key's
 * columns stay), and the row of an integrity violation (`Failing row contains (?).`). Values are
 * printed unquoted and may hold parentheses, so a value runs to the last `)` of the text: more is
 * redacted rather than less. The failing row's sentence is translated, so it is found by its
 * SQLSTATE (class 23).
 */
export function redactRowData(detail: string, event: ErrorClassOf): string {
  const key = KEY_VALUES.exec(detail);
  const from = key !== null ? key.index + key[0].length : mayBeOfClass(event, INTEGRITY_CLASS) ? detail.indexOf('(') + 1 : 0;
  if (from === 0) return detail;
  const to = detail.lastIndexOf(')');
  return detail.slice(0, from) + PLACEHOLDER + (to >= from ? detail.slice(to) : '');
}

/** Whether the entry was raised by PL/pgSQL code, which composed its DETAIL and HINT (from the CONTEXT). */
function raisedByCode(event: FieldOwner): boolean {
  const context = (event.details as { context?: unknown } | null)?.context;
  return typeof context === 'string' && RAISED.test(context);
}

/** A DETAIL or HINT of `event` with the data it quotes replaced (see the top of this file). */
export function redactDetailOrHint(text: string, event: FieldOwner): string {
  if (raisedByCode(event)) return PLACEHOLDER;
  const withoutRows = redactRowData(text, event);
  return mayBeOfClass(event, DATA_EXCEPTION_CLASS) ? withoutRows.replace(QUOTED, `"${PLACEHOLDER}"`) : withoutRows;
}

/**
 * `...: "value"` closing a message: where an input function's error quotes what it was given
 * (`invalid input syntax for type integer: "abc"`, `invalid input value for enum mood: "x"`,
 * `date/time field value out of range: "..."`). Names are quoted inside a sentence (`relation
 * "orders" does not exist`), not after its closing colon. Translations quote with their own
 * marks (`»abc«`, `« abc »`, `“abc”`, `「abc」`).
 */
const QUOTED_AT_END = /(:\s*)("[^"\n]*"|»[^«\n]*«|«[^»\n]*»|“[^”\n]*”|「[^」\n]*」)\s*$/;

/**
 * An error message with the input it quotes replaced: at its end (above), and every quoted part
 * of a data exception's (class 22, when the log carries SQLSTATEs: its quotes are input). The
 * rest of a message is the server's sentence and the names it needs, kept for the reader.
 */
export function redactMessageInput(message: string, event: ErrorClassOf): string {
  if (event.sqlstate?.startsWith(DATA_EXCEPTION_CLASS)) return message.replace(QUOTED, `"${PLACEHOLDER}"`).replace(QUOTED_AT_END, `$1"${PLACEHOLDER}"`);
  return message.replace(QUOTED_AT_END, `$1"${PLACEHOLDER}"`);
}

/**
 * The CONTEXT with the input it quotes replaced. A COPY's names the line, or column value, it
 * failed on (`COPY users, line 2, column email: "alice@example.com"`); a JSON parse's, the text up
 * to the error (`JSON data, line 1: {"card": 4111...`, jsonfuncs.c). In every language the line
 * names COPY or JSON and the input follows its first colon (`Zeile 2: »...«`, `ligne 2 : « ... »`,
 * `%sのCOPY、行 2: "..."`), so the rest of that line is replaced. In double quotes, the literal
 * stripper would keep it.
 */
export function redactQuotedInput(context: string): string {
  if (!context.includes('COPY') && !context.includes('JSON')) return context;
  return context.split('\n').map((line) => {
    const named = Math.max(line.indexOf('COPY'), line.indexOf('JSON'));
    const colon = named === -1 ? -1 : line.indexOf(':', named);
    return colon !== -1 ? `${line.slice(0, colon + 1)} ${PLACEHOLDER}` : line;
  }).join('\n');
}
