/**
 * The temp files section (log_temp_files): how many temporary files statements wrote, their total
 * and largest size, per normalised statement (its fingerprint, fingerprint.ts: every execution of
 * one statement shape together, whatever its literals), and per minute.
 *
 * A file is logged when it is removed, with the STATEMENT that used it; a file of no statement
 * (a background worker's, or a prefix without the STATEMENT line) counts under its own key.
 */
import { fingerprintOf } from './fingerprint.js';
import { cappedEntry, emptyCappedMap, mergeCappedMap, type CappedMap } from './figures.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportSection } from './section.js';

/** The by_statement key of files whose statement was not logged. */
export const STATEMENT_NOT_LOGGED = '(statement not logged)';
/** The example statement is cut here: a statement can be megabytes long. */
const MAX_EXAMPLE_CHARS = 2_000;

interface FileTotals {
  count: number;
  total_bytes: number;
  max_bytes: number | null;
}

interface StatementFiles extends FileTotals {
  /** The statement normalised (literals as $n). */
  statement: string;
  /** The statement as logged with the largest file, cut at MAX_EXAMPLE_CHARS. */
  example: string | null;
}

export interface TempFilesState {
  totals: FileTotals;
  /** By fingerprint id. */
  statements: CappedMap<StatementFiles>;
  /** Files of statements past limits.maxKeys. */
  other: FileTotals;
  per_minute: PerMinute;
}

export interface TempFilesResult {
  count: number;
  total_bytes: number;
  max_bytes: number | null;
  /** Distinct normalised statements itemised (at most limits.maxKeys). */
  statements_total: number;
  /** The limits.topN statements that wrote the most bytes. */
  by_statement: Array<{ fingerprint: string | null } & StatementFiles>;
  other: FileTotals | null;
  per_minute: MinuteRow[];
}

function emptyTotals(): FileTotals {
  return { count: 0, total_bytes: 0, max_bytes: null };
}

function addFiles(into: FileTotals, from: FileTotals): void {
  into.count += from.count;
  into.total_bytes += from.total_bytes;
  if (from.max_bytes !== null && (into.max_bytes === null || from.max_bytes > into.max_bytes)) into.max_bytes = from.max_bytes;
}

/** As addFiles, and the example follows the largest file (the earlier one on a tie). */
function addStatementFiles(into: StatementFiles, from: StatementFiles): void {
  if (from.max_bytes !== null && (into.max_bytes === null || from.max_bytes > into.max_bytes)) into.example = from.example;
  addFiles(into, from);
}

export const tempFilesSection: ReportSection<TempFilesState, TempFilesResult> = {
  key: 'temp_files',

  empty: () => ({ totals: emptyTotals(), statements: emptyCappedMap(), other: emptyTotals(), per_minute: {} }),

  add(state, event, limits) {
    if (event.kind !== 'temp_file') return;
    const { size_bytes: bytes, statement } = event.details;
    const file: FileTotals = { count: 1, total_bytes: bytes, max_bytes: bytes };
    addFiles(state.totals, file);
    countInMinute(state.per_minute, event.tsMs, 'temp_files');
    countInMinute(state.per_minute, event.tsMs, 'temp_bytes', bytes);
    const fingerprint = statement === null ? null : fingerprintOf(statement);
    const key = fingerprint?.id ?? STATEMENT_NOT_LOGGED;
    const entry = cappedEntry(state.statements, key, limits.maxKeys, () => ({ ...emptyTotals(), statement: fingerprint?.text ?? STATEMENT_NOT_LOGGED, example: null }));
    if (entry === undefined) addFiles(state.other, file);
    else addStatementFiles(entry, { ...file, statement: entry.statement, example: statement?.slice(0, MAX_EXAMPLE_CHARS) ?? null });
  },

  merge(earlier, later, limits) {
    addFiles(earlier.totals, later.totals);
    mergeCappedMap(earlier.statements, later.statements, limits.maxKeys, addStatementFiles, (overflow) => addFiles(earlier.other, overflow));
    addFiles(earlier.other, later.other);
    earlier.per_minute = mergePerMinute(earlier.per_minute, later.per_minute);
    return earlier;
  },

  result(state, limits) {
    const byStatement = Object.entries(state.statements.entries)
      .sort(([a, x], [b, y]) => y.total_bytes - x.total_bytes || y.count - x.count || (a < b ? -1 : 1))
      .slice(0, limits.topN)
      .map(([key, files]) => ({ fingerprint: key === STATEMENT_NOT_LOGGED ? null : key, ...files }));
    return {
      ...state.totals,
      statements_total: state.statements.size,
      by_statement: byStatement,
      other: state.other.count > 0 ? { ...state.other } : null,
      per_minute: perMinuteRows(state.per_minute, ['temp_files', 'temp_bytes']),
    };
  },
};
