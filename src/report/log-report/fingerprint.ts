/**
 * A statement's fingerprint, as pg_stat_statements-style grouping means it: PostgreSQL's own
 * parser (libpg-query, the server's grammar compiled to WASM) ignores literal values, parameter
 * numbers and the length of `IN (...)` lists. The parser costs ~40 µs a call, too slow for every
 * line of a busy log, so calls are cached by the statement's shape (sql-shape.ts: its text with
 * literals blanked), which every execution of one statement shares.
 *
 * A text the parser rejects (a statement cut short in the log, a syntax error) is grouped by its
 * shape instead, with `parsed: false`.
 *
 * Owns: the parser calls and their cache (one per thread). Never: statistics.
 */
import { createHash } from 'node:crypto';
import v8 from 'node:v8';
import { fingerprintSync, loadModule, normalizeSync } from 'libpg-query';
import { hasShape, LITERAL, normalisedShape, shapeOf, shapeParts, type ShapeParts } from './sql-shape.js';

// The WASM module (PostgreSQL's parser, 1.7 MB) loads once per thread, before any statement is
// read. V8's optimising tier would compile all of it: ~1 s of CPU and ~90 MB of peak RSS per
// thread, for a parser that runs once per statement shape. The baseline compiler alone takes
// 0.2 s and 15 MB; the flag is V8's, process-wide, so it is put back once the module is compiled.
v8.setFlagsFromString('--liftoff-only');
try {
  await loadModule();
} finally {
  v8.setFlagsFromString('--no-liftoff-only');
}

export interface Fingerprint {
  /** 16 hex digits: the parser's fingerprint, or a hash of the normalised shape when it rejected the text. */
  id: string;
  /** The statement normalised: literals as `$n`, `IN (...)` lists of them folded to one. */
  text: string;
  /** False when the parser rejected the text (cut short?): grouped by shape instead. */
  parsed: boolean;
}

/** Shapes kept; the cache starts over when full (a log with more shapes than this is not a cache's case). */
const CACHE_SHAPES = 20_000;
/** Shape (sql-shape.ts) to fingerprint. */
const byShape = new Map<string, Fingerprint>();
/**
 * Characters of a statement's start that key its shapes (all of a shorter one: `BEGIN;`). A
 * statement whose first literal comes later (most: `SELECT ... WHERE id = 1`) is recognised by
 * comparing its text with the shapes of its start, no scan; the others (a literal in the first
 * characters) are scanned.
 */
const START_CHARS = 16;
/** startKey() to shapes. */
const byStart = new Map<number, Array<{ parts: ShapeParts; fingerprint: Fingerprint }>>();
/** Shapes compared per start at most: more with one start are scanned. */
const SHAPES_PER_START = 8;

/**
 * What stands for a statement in the log report at `redact: statements`: a fixed marker and the
 * statement's fingerprint (a hash of its parse tree without literals), so executions still group
 * and rank while no statement text is kept (src/lib/redact.ts).
 */
export const STATEMENT_TEXT_REDACTED = '(statement text redacted)';
const REDACTED_MARKER = /^\(statement text redacted\) #([0-9a-f]{16})$/;

/** The marker of `sql` (a statement as logged): what the report keeps of it at `redact: statements`. */
export function redactedStatementMarker(sql: string): string {
  return `${STATEMENT_TEXT_REDACTED} #${fingerprintOf(sql).id}`;
}

/** The fingerprint of `text` (a statement as logged, or the marker that stands for one). */
export function fingerprintOf(text: string): Fingerprint {
  // One character test on the hot path: a statement rarely starts with `(`.
  const redacted = text.charCodeAt(0) === 40 ? REDACTED_MARKER.exec(text) : null;
  if (redacted !== null) return { id: redacted[1]!, text, parsed: true };
  const start = startKey(text);
  const candidates = byStart.get(start);
  if (candidates !== undefined) {
    for (const known of candidates) if (hasShape(text, known.parts)) return known.fingerprint;
  }
  const parts = shapeParts(text);
  const shape = parts.segments.join(LITERAL);
  let fingerprint = byShape.get(shape);
  if (fingerprint === undefined) {
    if (byShape.size >= CACHE_SHAPES) {
      byShape.clear();
      byStart.clear();
    }
    fingerprint = parse(text, shape);
    byShape.set(shape, fingerprint);
  }
  if (parts.segments[0]!.length >= Math.min(text.length, START_CHARS)) {
    const known = candidates ?? [];
    if (known.length < SHAPES_PER_START) known.push({ parts, fingerprint });
    if (candidates === undefined) byStart.set(start, known);
  }
  return fingerprint;
}

/**
 * A number for the first START_CHARS characters of `text` (all of a shorter one): a Map finds a
 * number without hashing a new string for every statement, which was the most expensive line of
 * fingerprintOf. Starts that get the same number share a list; hasShape tells their shapes apart.
 */
function startKey(text: string): number {
  const end = Math.min(text.length, START_CHARS);
  let key = end;
  for (let i = 0; i < end; i++) key = (Math.imul(key, 31) + text.charCodeAt(i)) | 0;
  return key;
}

const LIST_OF_PARAMETERS = /\b(in\s*)\(\s*(\$\d+)(?:\s*,\s*\$\d+)+\s*\)/gi;
const PARAMETER = /\$(\d+)/g;
const FINGERPRINT = /^[0-9a-f]{16}$/;
const REDACTED_LITERAL = /\?/g;

/**
 * The parser's fingerprint; for a text it rejects that holds `?`, of that text with each `?` a
 * parameter: the daemon's default `redact: literals` leaves `?` where each literal was
 * (src/lib/redact.ts), and the parser takes a parameter as it takes a literal, so a redacted
 * statement groups with its unredacted executions. Else the shape's.
 */
function parse(text: string, shape: string): Fingerprint {
  return parsed(text) ?? (text.includes('?') ? parsed(asParameters(text)) : null) ?? shapeFingerprint(shape);
}

function asParameters(redacted: string): string {
  let n = 0;
  return redacted.replace(REDACTED_LITERAL, () => `$${++n}`);
}

function parsed(text: string): Fingerprint | null {
  let id: string;
  let normalised: string;
  try {
    id = fingerprintSync(text);
    normalised = normalizeSync(text);
  } catch {
    return null;
  }
  // Some rejections (an unterminated string) come back as the error's text instead of a throw.
  if (!FINGERPRINT.test(id)) return null;
  // The normaliser leaves some literals (a utility statement's: ALTER SYSTEM SET x = '...'): the
  // shape's scan blanks them too, so the text holds none and is the same for every text of the shape.
  return { id, text: renumbered(normalisedShape(shapeOf(normalised)).replace(LIST_OF_PARAMETERS, '$1($2)')), parsed: true };
}

function shapeFingerprint(shape: string): Fingerprint {
  const normalised = normalisedShape(shape);
  return { id: createHash('sha1').update(normalised).digest('hex').slice(0, 16), text: normalised, parsed: false };
}

/**
 * Parameters numbered by first appearance: the normaliser numbers literals after the text's own
 * parameters and counts those of a folded list, so one fingerprint would read differently with
 * each IN-list length or mix of literals and parameters.
 */
function renumbered(text: string): string {
  const numbers = new Map<string, number>();
  return text.replace(PARAMETER, (_, n: string) => {
    let next = numbers.get(n);
    if (next === undefined) numbers.set(n, (next = numbers.size + 1));
    return `$${next}`;
  });
}
