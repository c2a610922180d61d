/**
 * The statement and duration messages of postgres.c (13-19 unchanged; pg-messages.md 6.2), all LOG,
 * never followed by a STATEMENT line, read the same from stderr, csvlog and jsonlog:
 *
 *   duration: %s ms                          log_duration alone: the statement was logged before (or not)
 *   duration: %s ms  statement: %s           log_min_duration_statement, simple protocol (two spaces)
 *   duration: %s ms  parse %s: %s            extended protocol: the statement name (<unnamed> if empty)
 *   duration: %s ms  bind %s%s%s: %s         name, then "/" and the portal when it has one
 *   duration: %s ms  execute %s%s%s: %s      the same; "execute fetch from" on an open portal
 *   statement: %s                            log_statement
 *   execute %s%s%s: %s                       log_statement, extended protocol
 *
 * `%s ms` is printed `%ld.%03d`: read as whole microseconds, so sums are exact in any order.
 * Owns: reading those messages. Never: pairing lines or grouping statements (queries.ts does).
 */
import { holdsAt } from './holds-at.js';

/** Which message: a simple-protocol statement, or one step of the extended protocol. */
export type StatementStep = 'statement' | 'parse' | 'bind' | 'execute';

export interface StatementLine {
  /** Whole microseconds; null for a log_statement line, which says nothing of time. */
  durationUs: number | null;
  /** null for a `duration: %s ms` line alone. */
  step: StatementStep | null;
  /** The statement as logged (parameters as `$n`); null for a duration line alone. */
  text: string | null;
}

const DURATION = 'duration: ';
const STATEMENT = 'statement: ';
const MS = ' ms';
/** Between the duration and what follows it: two spaces (postgres.c). */
const AFTER_MS = ' ms  ';
const STEPS: ReadonlyArray<readonly [string, StatementStep]> = [['parse ', 'parse'], ['bind ', 'bind'], ['execute ', 'execute']];

/** The message read, or null when it is none of the messages above (the most common case costs one character test). */
export function readStatementLine(message: string): StatementLine | null {
  switch (message.charCodeAt(0)) {
    case 100: // d
      return holdsAt(message, DURATION, 0) ? readDurationLine(message) : null;
    case 115: // s
      return holdsAt(message, STATEMENT, 0) ? { durationUs: null, step: 'statement', text: message.slice(STATEMENT.length) } : null;
    case 101: // e
      return readStep(message, 0, null);
    default:
      return null;
  }
}

function readDurationLine(message: string): StatementLine | null {
  const at = DURATION.length;
  const durationUs = readMilliseconds(message, at);
  if (durationUs === null) return null;
  const msAt = message.indexOf(MS, at);
  if (msAt + MS.length === message.length) return { durationUs, step: null, text: null };
  if (!holdsAt(message, AFTER_MS, msAt)) return null;
  const rest = msAt + AFTER_MS.length;
  if (holdsAt(message, STATEMENT, rest)) return { durationUs, step: 'statement', text: message.slice(rest + STATEMENT.length) };
  return readStep(message, rest, durationUs);
}

/** `parse|bind|execute <name>: <text>` from `at`; the name may hold anything but ": ". */
function readStep(message: string, at: number, durationUs: number | null): StatementLine | null {
  for (const [word, step] of STEPS) {
    if (!holdsAt(message, word, at)) continue;
    const colon = message.indexOf(': ', at + word.length);
    return colon < 0 ? null : { durationUs, step, text: message.slice(colon + 2) };
  }
  return null;
}

/** `%ld.%03d` at `at`, followed by " ms", as whole microseconds; null when it is not that. */
function readMilliseconds(message: string, at: number): number | null {
  let whole = 0;
  let i = at;
  for (; i < message.length; i++) {
    const digit = message.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) break;
    whole = whole * 10 + digit;
  }
  if (i === at || message.charCodeAt(i) !== 46 /* . */) return null;
  let fraction = 0;
  let places = 0;
  for (i++; i < message.length && places < 3; i++, places++) {
    const digit = message.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) break;
    fraction = fraction * 10 + digit;
  }
  if (places !== 3 || !holdsAt(message, MS, i)) return null;
  return whole * 1000 + fraction;
}
