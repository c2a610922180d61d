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
import { fingerprintSync, loadModule, normalizeSync } from 'libpg-query';
import { normalisedShape, shapeOf } from './sql-shape.js';

// The WASM module loads once per thread, before any statement is read.
await loadModule();

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
const cache = new Map<string, Fingerprint>();

/** The fingerprint of `text` (a statement as logged). */
export function fingerprintOf(text: string): Fingerprint {
  const shape = shapeOf(text);
  let known = cache.get(shape);
  if (known === undefined) {
    if (cache.size >= CACHE_SHAPES) cache.clear();
    known = parse(text, shape);
    cache.set(shape, known);
  }
  return known;
}

const LIST_OF_PARAMETERS = /\b(in\s*)\(\s*(\$\d+)(?:\s*,\s*\$\d+)+\s*\)/gi;

function parse(text: string, shape: string): Fingerprint {
  try {
    const id = fingerprintSync(text);
    return { id, text: normalizeSync(text).replace(LIST_OF_PARAMETERS, '$1($2)'), parsed: true };
  } catch {
    const normalised = normalisedShape(shape);
    return { id: createHash('sha1').update(normalised).digest('hex').slice(0, 16), text: normalised, parsed: false };
  }
}
