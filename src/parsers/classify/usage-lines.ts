/**
 * The continuation lines vacuum and analyze reports share: delay time, I/O timings, read/write
 * rates, buffer usage, WAL usage and system usage. Each line is read part by part, so a part
 * added by a new release leaves the known parts parsed (the line is still reported unknown).
 */
import type { UsageFields } from '../../domain/index.js';
import { applyShape, escapeRegExp, partTable, readParts, RUSAGE_PARTS, toFloat, type PartTable, type Shape } from './fields.js';

export function emptyUsage(): UsageFields {
  return {
    delay_time_ms: null,
    io_read_ms: null,
    io_write_ms: null,
    read_rate_mbs: null,
    write_rate_mbs: null,
    buffer_hits: null,
    buffer_reads: null,
    buffer_dirtied: null,
    wal_records: null,
    wal_fpi: null,
    wal_bytes: null,
    wal_fpi_bytes: null,
    wal_buffers_full: null,
    cpu_user_s: null,
    cpu_system_s: null,
    elapsed_s: null,
  };
}

/**
 * What reads a line like one just parsed, as one piece of a regex over a whole report (see
 * ReportBody): the line's regex source and how its groups fill the fields.
 */
export interface LineShape<T> {
  /** Tells shapes apart in a report's key. */
  readonly id: number;
  /** The whole line, without anchors; the line is never read past its end (no "\n" can match). */
  readonly source: string;
  /** Capture groups in `source`. */
  readonly groups: number;
  /** Fills `into` from a match whose groups for this line start at groups[first]. */
  readonly apply: (groups: RegExpExecArray, first: number, into: T) => void;
}

let nextShapeId = 0;

export function lineShape<T>(source: string, groups: number, apply: LineShape<T>['apply']): LineShape<T> {
  return { id: nextShapeId++, source, groups, apply };
}

/**
 * Parses one line into `into`, keyed by the text before the first colon. Returns false when the
 * line was not recognised whole (the parts it knew are still applied), else the line's shape, or
 * true when it has none (a line of an unusual form).
 */
export type LineParser<T> = (line: string, into: T) => LineShape<T> | boolean;

/**
 * A LineParser for a line read by one pattern, anchored at both ends; nothing is set when it does
 * not match. `apply` reads groups 1, 2, ... as exec() numbers them.
 */
export function wholeLine<T>(pattern: RegExp, apply: (groups: readonly (string | undefined)[], into: T) => void): LineParser<T> {
  const { source } = pattern;
  if (!source.startsWith('^') || !source.endsWith('$')) throw new Error(`line pattern /${source}/ must be anchored at both ends`);
  const groups = new RegExp(`${source}|`).exec('')!.length - 1;
  // In a report's match the line's groups start further on: copied to where apply expects them.
  const window: (string | undefined)[] = [];
  const shape = lineShape<T>(source.slice(1, -1), groups, (match, first, into) => {
    for (let i = 1; i <= groups; i++) window[i] = match[first + i - 1];
    apply(window, into);
  });
  return (line, into) => {
    const match = pattern.exec(line);
    if (match === null) return false;
    apply(match, into);
    return shape;
  };
}

/**
 * A LineParser reading the parts after `prefix` (not checked: the line key chose the parser) with
 * `table`; its shapes are the table's line shapes behind the prefix.
 */
export function partsAfter<T>(prefix: string, table: PartTable<T>): LineParser<T> {
  const prefixSource = escapeRegExp(prefix);
  const shapeOf = lineShapesOf<T, T>((parts) => lineShape(prefixSource + parts.source, parts.groups, (match, first, into) => applyShape(parts, match, first, into)));
  return (line, into) => readParts(line, prefix.length, table, into) && shapeOf(table.last);
}

/**
 * The line shape of a line read with a part table, by the shape of its parts (the table's
 * `last` after the read; null: true, read without a shape), each made once.
 */
export function lineShapesOf<P, T>(make: (parts: Shape<P>) => LineShape<T>): (parts: Shape<P> | null) => LineShape<T> | true {
  const shapes = new Map<Shape<P>, LineShape<T>>();
  return (parts) => {
    if (parts === null) return true;
    let shape = shapes.get(parts);
    if (shape === undefined) {
      shape = make(parts);
      shapes.set(parts, shape);
    }
    return shape;
  };
}

const IO_TIMINGS = partTable<UsageFields>([
  ['read: {dec} ms', (v, u) => (u.io_read_ms = v[0] ?? null)],
  ['write: {dec} ms', (v, u) => (u.io_write_ms = v[0] ?? null)],
]);

const RATES = partTable<UsageFields>([
  ['avg read rate: {dec} MB/s', (v, u) => (u.read_rate_mbs = v[0] ?? null)],
  ['avg write rate: {dec} MB/s', (v, u) => (u.write_rate_mbs = v[0] ?? null)],
]);

const BUFFERS = partTable<UsageFields>([
  ['{int} hits', (v, u) => (u.buffer_hits = v[0] ?? null)],
  // PG 18+: "misses" became "reads"; both count blocks read.
  ['{int} misses', (v, u) => (u.buffer_reads = v[0] ?? null)],
  ['{int} reads', (v, u) => (u.buffer_reads = v[0] ?? null)],
  ['{int} dirtied', (v, u) => (u.buffer_dirtied = v[0] ?? null)],
]);

const WAL = partTable<UsageFields>([
  ['{int} records', (v, u) => (u.wal_records = v[0] ?? null)],
  ['{int} full page images', (v, u) => (u.wal_fpi = v[0] ?? null)],
  ['{int} bytes', (v, u) => (u.wal_bytes = v[0] ?? null)],
  // PG 19+.
  ['{int} full page image bytes', (v, u) => (u.wal_fpi_bytes = v[0] ?? null)],
  // PG 18+.
  ['{int} buffers full', (v, u) => (u.wal_buffers_full = v[0] ?? null)],
]);

export const USAGE_LINES: ReadonlyMap<string, LineParser<UsageFields>> = new Map<string, LineParser<UsageFields>>([
  // PG 18+, with track_cost_delay_timing.
  ['delay time', wholeLine(/^delay time: ([\d.]+) ms$/, (g, u) => (u.delay_time_ms = toFloat(g[1])))],
  ['I/O timings', partsAfter('I/O timings: ', IO_TIMINGS)],
  ['avg read rate', partsAfter('', RATES)],
  ['buffer usage', partsAfter('buffer usage: ', BUFFERS)],
  ['WAL usage', partsAfter('WAL usage: ', WAL)],
  ['system usage', partsAfter('system usage: ', RUSAGE_PARTS)],
]);

/** The first line of a report: the header (the whole message when it has one line). */
export function firstLine(message: string): string {
  const end = message.indexOf('\n');
  return end === -1 ? message : message.slice(0, end);
}

/**
 * Each line of a report after the header, trimmed, blank ones skipped: split('\n') without the
 * array and the runtime call (a busy server writes thousands of reports of a dozen lines).
 */
export function forEachLaterLine(message: string, each: (line: string) => void): void {
  let end = message.indexOf('\n');
  while (end !== -1) {
    const start = end + 1;
    end = message.indexOf('\n', start);
    const line = (end === -1 ? message.slice(start) : message.slice(start, end)).trim();
    if (line !== '') each(line);
  }
}

/**
 * Line parsers by line key, the text before a line's first colon (the whole line without one).
 * The key is matched in place rather than cut out for a Map lookup: a fresh string is hashed for
 * every lookup, which showed as 5% of a profile of autovacuum reports.
 */
export class LineTable<T> {
  /** Entries by key length; a bucket holds the few keys of one length, with their first character. */
  private readonly byLength: Array<Array<{ key: string; first: number; parser: LineParser<T> }> | undefined> = [];

  constructor(parsers: ReadonlyMap<string, LineParser<T>>) {
    for (const [key, parser] of parsers) (this.byLength[key.length] ??= []).push({ key, first: key.length === 0 ? -1 : key.charCodeAt(0), parser });
  }

  /** The parser whose key is the line's key, if any. */
  get(line: string): LineParser<T> | undefined {
    const colon = line.indexOf(':');
    const bucket = this.byLength[colon < 0 ? line.length : colon];
    if (bucket === undefined) return undefined;
    const first = line.charCodeAt(0);
    for (let i = 0; i < bucket.length; i++) {
      const entry = bucket[i]!;
      // The first character rules out most keys of the same length before a startsWith call.
      if ((entry.first === first || entry.first === -1) && line.startsWith(entry.key)) return entry.parser;
    }
    return undefined;
  }
}
