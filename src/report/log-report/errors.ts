/**
 * The report's `errors` section: every event at ERROR, FATAL or PANIC, and WARNING counted apart,
 * whatever its kind (a statement timeout and a deadlock are errors too), grouped by severity,
 * SQLSTATE and normalised message (error-message.ts), with its SQLSTATE class and condition names
 * (PostgreSQL's errcodes.txt, src/lib/errcodes-table.ts), count, first and last seen and one
 * example with its statement; and per minute, the count of each severity.
 *
 * A log whose stderr prefix has no `%e` carries no SQLSTATE: its errors group by message alone,
 * with `sqlstate: null`, and count under the class "SQLSTATE not logged".
 *
 * Owns: the fold. Never: a DETAIL (it holds row data: key values, the rows of a failing check),
 * or the raw message (its values are what normalising took out). The example's statement is kept,
 * cut to EXAMPLE_STATEMENT_CHARS.
 */
import type { AnyLogEvent, LogLevel } from '../../domain/index.js';
import { SQLSTATE_CLASS_NAMES, SQLSTATE_CONDITION_NAMES } from '../../lib/errcodes-table.js';
import { normalizeErrorMessage } from './error-message.js';
import { addCount, cappedEntry, emptyCappedMap, mergeCappedMap, mergeCounts, type CappedMap } from './figures.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportSection } from './section.js';

export const EXAMPLE_STATEMENT_CHARS = 300;

/** The severities the section counts, as per-minute counter names. */
const COUNTED_LEVELS = { ERROR: 'error', FATAL: 'fatal', PANIC: 'panic', WARNING: 'warning' } as const;
type CountedLevel = keyof typeof COUNTED_LEVELS;
const MINUTE_COUNTERS = Object.values(COUNTED_LEVELS);

/** The class shown for errors logged without a SQLSTATE. */
export const SQLSTATE_NOT_LOGGED = 'SQLSTATE not logged (log_line_prefix without %e)';
const UNKNOWN_SQLSTATE_KEY = 'unknown';

interface Example {
  ts_ms: number;
  database: string | null;
  user: string | null;
  /** The STATEMENT line (or the kind's own statement field), cut; null when none was logged. */
  statement: string | null;
}

interface MessageGroup {
  level: CountedLevel;
  sqlstate: string | null;
  message: string;
  count: number;
  first_ms: number;
  last_ms: number;
  /** The first occurrence that has a statement, else the first occurrence. */
  example: Example;
}

export interface ErrorsState {
  groups: CappedMap<MessageGroup>;
  /** Events of groups past `limits.maxKeys`, per severity. */
  other: Record<string, number>;
  /** Per severity, per SQLSTATE (`unknown` when not logged): bounded by the codes PostgreSQL has. */
  by_sqlstate: Record<string, Record<string, number>>;
  per_minute: PerMinute;
}

export interface ClassRow {
  /** First two characters of the SQLSTATE; null when the log has no SQLSTATE. */
  class: string | null;
  name: string;
  count: number;
}

export interface SqlstateRow {
  sqlstate: string | null;
  /** PL/pgSQL's condition name (`unique_violation`), null when unknown. */
  condition: string | null;
  class: string | null;
  count: number;
}

export interface MessageRow {
  level: CountedLevel;
  sqlstate: string | null;
  condition: string | null;
  class: string | null;
  class_name: string;
  message: string;
  count: number;
  first_seen: string;
  last_seen: string;
  example: { ts: string; database: string | null; user: string | null; statement: string | null };
}

export interface ErrorsResult {
  /** Events per severity. */
  counts: Record<(typeof MINUTE_COUNTERS)[number], number>;
  /** Errors (ERROR, FATAL, PANIC) logged without a SQLSTATE. */
  sqlstate_unknown: number;
  /** Errors (ERROR, FATAL, PANIC) per SQLSTATE class, most first. */
  by_class: ClassRow[];
  /** Errors per SQLSTATE, most first, at most topN. */
  by_sqlstate: SqlstateRow[];
  /** Error messages (ERROR, FATAL, PANIC), most first, at most topN. */
  messages: MessageRow[];
  /** WARNING messages, most first, at most topN. */
  warnings: MessageRow[];
  /** Events of messages past `limits.maxKeys` distinct ones, per severity counter. */
  other: Record<string, number>;
  per_minute: MinuteRow[];
}

function countedLevel(level: LogLevel): CountedLevel | null {
  return level in COUNTED_LEVELS ? (level as CountedLevel) : null;
}

/** The statement an event carries: `details.statement` of generic events and of the kinds that have one. */
function statementOf(event: AnyLogEvent): string | null {
  const statement = (event.details as { statement?: unknown }).statement;
  if (typeof statement !== 'string') return null;
  return statement.length > EXAMPLE_STATEMENT_CHARS ? `${statement.slice(0, EXAMPLE_STATEMENT_CHARS)}...` : statement;
}

function exampleOf(event: AnyLogEvent): Example {
  return { ts_ms: event.tsMs, database: event.database, user: event.user, statement: statementOf(event) };
}

function mergeGroup(into: MessageGroup, from: MessageGroup): void {
  into.count += from.count;
  into.first_ms = Math.min(into.first_ms, from.first_ms);
  into.last_ms = Math.max(into.last_ms, from.last_ms);
  if (into.example.statement === null && from.example.statement !== null) into.example = from.example;
}

export const errorsSection: ReportSection<ErrorsState, ErrorsResult> = {
  key: 'errors',

  empty: () => ({ groups: emptyCappedMap(), other: {}, by_sqlstate: {}, per_minute: {} }),

  add(state, event, limits) {
    const level = countedLevel(event.level);
    if (level === null) return;
    const counter = COUNTED_LEVELS[level];
    countInMinute(state.per_minute, event.tsMs, counter);
    addCount((state.by_sqlstate[level] ??= {}), event.sqlstate ?? UNKNOWN_SQLSTATE_KEY);
    const message = normalizeErrorMessage(event.message);
    const key = `${level} ${event.sqlstate ?? '-'} ${message}`;
    const example = exampleOf(event);
    const group = cappedEntry(state.groups, key, limits.maxKeys, () => ({
      level, sqlstate: event.sqlstate, message, count: 0, first_ms: event.tsMs, last_ms: event.tsMs, example,
    }));
    if (group === undefined) {
      addCount(state.other, counter);
      return;
    }
    mergeGroup(group, { level, sqlstate: event.sqlstate, message, count: 1, first_ms: event.tsMs, last_ms: event.tsMs, example });
  },

  merge(earlier, later, limits) {
    mergeCappedMap(earlier.groups, later.groups, limits.maxKeys, mergeGroup, (group) => addCount(earlier.other, COUNTED_LEVELS[group.level], group.count));
    mergeCounts(earlier.other, later.other);
    for (const [level, counts] of Object.entries(later.by_sqlstate)) mergeCounts((earlier.by_sqlstate[level] ??= {}), counts);
    mergePerMinute(earlier.per_minute, later.per_minute);
    return earlier;
  },

  result(state, limits) {
    const counts = { error: 0, fatal: 0, panic: 0, warning: 0 };
    const errorsBySqlstate: Record<string, number> = {};
    for (const [level, bySqlstate] of Object.entries(state.by_sqlstate)) {
      const counter = COUNTED_LEVELS[level as CountedLevel];
      for (const [sqlstate, count] of Object.entries(bySqlstate)) {
        counts[counter] += count;
        if (counter !== 'warning') addCount(errorsBySqlstate, sqlstate, count);
      }
    }
    const groups = Object.values(state.groups.entries);
    return {
      counts,
      sqlstate_unknown: errorsBySqlstate[UNKNOWN_SQLSTATE_KEY] ?? 0,
      by_class: classRows(errorsBySqlstate),
      by_sqlstate: sqlstateRows(errorsBySqlstate).slice(0, limits.topN),
      messages: messageRows(groups.filter((group) => group.level !== 'WARNING')).slice(0, limits.topN),
      warnings: messageRows(groups.filter((group) => group.level === 'WARNING')).slice(0, limits.topN),
      other: state.other,
      per_minute: perMinuteRows(state.per_minute, MINUTE_COUNTERS),
    };
  },
};

function sqlstateOf(key: string): string | null {
  return key === UNKNOWN_SQLSTATE_KEY ? null : key;
}

function classOf(sqlstate: string | null): string | null {
  return sqlstate === null ? null : sqlstate.slice(0, 2);
}

function className(code: string | null): string {
  if (code === null) return SQLSTATE_NOT_LOGGED;
  return SQLSTATE_CLASS_NAMES[code] ?? `class ${code} (not in PostgreSQL's errcodes.txt)`;
}

function byCountThenKey<T extends { count: number }>(rows: T[], keyOf: (row: T) => string): T[] {
  return rows.sort((a, b) => b.count - a.count || (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}

function classRows(bySqlstate: Record<string, number>): ClassRow[] {
  const byClass: Record<string, number> = {};
  for (const [key, count] of Object.entries(bySqlstate)) addCount(byClass, classOf(sqlstateOf(key)) ?? UNKNOWN_SQLSTATE_KEY, count);
  const rows = Object.entries(byClass).map(([key, count]) => {
    const code = sqlstateOf(key);
    return { class: code, name: className(code), count };
  });
  return byCountThenKey(rows, (row) => row.class ?? '');
}

function sqlstateRows(bySqlstate: Record<string, number>): SqlstateRow[] {
  const rows = Object.entries(bySqlstate).map(([key, count]) => {
    const sqlstate = sqlstateOf(key);
    return { sqlstate, condition: sqlstate === null ? null : (SQLSTATE_CONDITION_NAMES[sqlstate] ?? null), class: classOf(sqlstate), count };
  });
  return byCountThenKey(rows, (row) => row.sqlstate ?? '');
}

function messageRows(groups: MessageGroup[]): MessageRow[] {
  const rows = groups.map((group): MessageRow => ({
    level: group.level,
    sqlstate: group.sqlstate,
    condition: group.sqlstate === null ? null : (SQLSTATE_CONDITION_NAMES[group.sqlstate] ?? null),
    class: classOf(group.sqlstate),
    class_name: className(classOf(group.sqlstate)),
    message: group.message,
    count: group.count,
    first_seen: new Date(group.first_ms).toISOString(),
    last_seen: new Date(group.last_ms).toISOString(),
    example: {
      ts: new Date(group.example.ts_ms).toISOString(),
      database: group.example.database,
      user: group.example.user,
      statement: group.example.statement,
    },
  }));
  return byCountThenKey(rows, (row) => `${row.level} ${row.sqlstate ?? ''} ${row.message}`);
}
