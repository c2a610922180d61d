/**
 * The log report per minute, as the store keeps it: a batch of events folded into one state per
 * section for each target and minute it touches, and a minute's stored states merged back into
 * one. Pure: events or JSON text in, JSON text out; the store is someone else's.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import type { ReportMinuteRow } from '../../store/report-minutes.js';
import type { ReportLimits, ReportSection } from './section.js';

export const MINUTE_MS = 60_000;

// The registry's sections each have their own State; these only pass states through.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnySection = ReportSection<any, unknown>;

/** One row per target and minute of `events` (in log order), in the order their first events came. */
export function foldByMinute(events: readonly AnyLogEvent[], sections: readonly AnySection[], limits: ReportLimits): ReportMinuteRow[] {
  const open = new Map<string, { target: string; minuteMs: number; states: unknown[] }>();
  for (const event of events) {
    const minuteMs = Math.floor(event.tsMs / MINUTE_MS) * MINUTE_MS;
    const key = `${event.target}\u0000${minuteMs}`;
    let minute = open.get(key);
    if (minute === undefined) open.set(key, (minute = { target: event.target, minuteMs, states: sections.map((s) => s.empty()) }));
    for (let i = 0; i < sections.length; i++) sections[i]!.add(minute.states[i], event, limits);
  }
  return [...open.values()].map((m) => ({ target: m.target, minuteMs: m.minuteMs, states: JSON.stringify(statesByKey(sections, m.states)) }));
}

/**
 * Stored states (section key to state, JSON) merged in the order given, one state per section.
 * A section missing from a row (added after it was written) merges nothing from it; text that is
 * not a JSON object (damaged outside pgvigil) is counted and left out.
 */
export function mergeStates(texts: Iterable<string>, sections: readonly AnySection[], limits: ReportLimits): { states: unknown[]; rows: number; unreadable: number } {
  let states = sections.map((s) => s.empty() as unknown);
  let rows = 0;
  let unreadable = 0;
  for (const text of texts) {
    rows++;
    const stored = parseStates(text);
    if (stored === null) {
      unreadable++;
      continue;
    }
    states = states.map((state, i) => (Object.hasOwn(stored, sections[i]!.key) ? sections[i]!.merge(state, stored[sections[i]!.key], limits) : state));
  }
  return { states, rows, unreadable };
}

export function statesByKey(sections: readonly AnySection[], states: readonly unknown[]): Record<string, unknown> {
  return Object.fromEntries(sections.map((s, i) => [s.key, states[i]]));
}

function parseStates(text: string): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
