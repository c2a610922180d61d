/**
 * Counting what the framers could not read: one counter per reason and the first few examples,
 * bounded in number and length so garbage input cannot grow memory.
 */
import type { FramingStats, PhysicalLine, UnparsedReason } from './framer.js';

export const EXAMPLES_PER_REASON = 5;
export const EXAMPLE_MAX_CHARS = 300;

/** Longest text kept in one entry field (a line, or lines folded into one field). */
export const DEFAULT_MAX_FIELD_CHARS = 1024 * 1024;

export function newFramingStats(): FramingStats {
  return { lines: 0, entries: 0, unparsed_lines: 0, unparsed_by_reason: {}, examples: [], truncated_fields: 0 };
}

/** Counts `lineCount` lines as unparsed for `reason`, keeping `line` as an example. */
export function recordUnparsed(
  stats: FramingStats,
  reason: UnparsedReason,
  line: Pick<PhysicalLine, 'offset' | 'line'>,
  text: string,
  lineCount = 1,
): void {
  stats.unparsed_lines += lineCount;
  const seen = stats.unparsed_by_reason[reason] ?? 0;
  stats.unparsed_by_reason[reason] = seen + lineCount;
  // Examples, not lines, are counted: a record of many lines is one example, and the examples of
  // consecutive ranges of a file (analyze -j N) add up to those of the whole file.
  if (seen < EXAMPLES_PER_REASON || examplesOf(stats, reason) < EXAMPLES_PER_REASON) {
    stats.examples.push({ reason, offset: line.offset, line: line.line, text: text.slice(0, EXAMPLE_MAX_CHARS) });
  }
}

function examplesOf(stats: FramingStats, reason: UnparsedReason): number {
  let count = 0;
  for (const example of stats.examples) if (example.reason === reason) count++;
  return count;
}

/** `text` cut to `maxChars`, counting the cut in `stats.truncated_fields`. */
export function capped(stats: FramingStats, text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  stats.truncated_fields++;
  return text.slice(0, maxChars);
}
