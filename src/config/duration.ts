/**
 * Durations as an operator writes them: `30s`, `15m`, `6h`, `2d`, `250ms`, or a bare number of
 * milliseconds (what every `*_ms` key took before). Config keys keep their `_ms` names, so a
 * number means what it always meant.
 */
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|min|h|d)$/;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** Written for messages: what a duration may look like. */
export const DURATION_FORMS = 'a number of milliseconds or a duration such as "30s", "15m", "6h", "2d"';

/** The milliseconds of a duration text; anything else is returned as it is, for the schema to refuse. */
export function durationTextToMs(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const match = DURATION.exec(value.trim());
  if (!match) return value;
  return Math.round(Number(match[1]) * UNIT_MS[match[2]!]!);
}
