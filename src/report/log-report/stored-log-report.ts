/**
 * The log report of a window from stored minutes (report_minutes): each section's minute states
 * merged in time order, then its result, the same as `pgvigil analyze` computes from the log.
 * Whole minutes: a window takes every minute that starts in it. Pure: rows in, report out.
 */
import type { ReportLimits, ReportSection } from './section.js';

export interface StoredLogReport {
  /** Section key to its result, in the registry's order. */
  sections: Record<string, unknown>;
  /** Stored minute rows merged (a minute with late events has several). */
  minuteRows: number;
  /** Rows whose text is not JSON (damaged outside pgvigil): left out, counted here. */
  unreadableRows: number;
}

export function mergeStoredMinutes(
  rows: Iterable<{ states: string }>,
  // The registry's sections each have their own State; this only passes states through.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  sections: ReadonlyArray<ReportSection<any, unknown>>,
  limits: ReportLimits,
): StoredLogReport {
  let states = sections.map((s) => s.empty() as unknown);
  let minuteRows = 0;
  let unreadableRows = 0;
  for (const row of rows) {
    minuteRows++;
    const stored = parseStates(row.states);
    if (stored === null) {
      unreadableRows++;
      continue;
    }
    // A section added after a minute was written has no state in it: nothing to merge.
    states = states.map((state, i) => (Object.hasOwn(stored, sections[i]!.key) ? sections[i]!.merge(state, stored[sections[i]!.key], limits) : state));
  }
  return { sections: Object.fromEntries(sections.map((s, i) => [s.key, s.result(states[i], limits)])), minuteRows, unreadableRows };
}

function parseStates(text: string): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
