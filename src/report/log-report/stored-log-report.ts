/**
 * The log report of a window from stored minutes (report_minutes): each section's minute states
 * merged in time order, then its result, the same as `pgvigil analyze` computes from the log.
 * Whole minutes: a window takes every minute that starts in it. Pure: rows in, report out.
 */
import { mergeStates, type AnySection } from './minute-folds.js';
import type { ReportLimits } from './section.js';

export interface StoredLogReport {
  /** Section key to its result, in the registry's order. */
  sections: Record<string, unknown>;
  /** Stored minute rows merged (a minute not merged yet, or with late events, has several). */
  minuteRows: number;
  /** Rows whose text is not JSON (damaged outside pgvigil): left out, counted here. */
  unreadableRows: number;
}

export function mergeStoredMinutes(rows: Iterable<{ states: string }>, sections: readonly AnySection[], limits: ReportLimits): StoredLogReport {
  const merged = mergeStates(textsOf(rows), sections, limits);
  return {
    sections: Object.fromEntries(sections.map((s, i) => [s.key, s.result(merged.states[i], limits)])),
    minuteRows: merged.rows,
    unreadableRows: merged.unreadable,
  };
}

function* textsOf(rows: Iterable<{ states: string }>): Generator<string> {
  for (const row of rows) yield row.states;
}
