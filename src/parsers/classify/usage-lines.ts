/**
 * The continuation lines vacuum and analyze reports share: delay time, I/O timings, read/write
 * rates, buffer usage, WAL usage and system usage. Each line is read part by part, so a part
 * added by a new release leaves the known parts parsed (the line is still reported unknown).
 */
import type { UsageFields } from '../../domain/index.js';
import { parseRusage, partTable, readParts, toFloat, type PartTable } from './fields.js';

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

/** Parses one line into `into`; true when the whole line was recognised. Keyed by the text before the first colon. */
export type LineParser<T> = (line: string, into: T) => boolean;

/** A LineParser for a line read by one pattern; nothing is set when it does not match. */
export function wholeLine<T>(pattern: RegExp, apply: (groups: RegExpExecArray, into: T) => void): LineParser<T> {
  return (line, into) => {
    const groups = pattern.exec(line);
    if (groups) apply(groups, into);
    return groups !== null;
  };
}

/** A LineParser reading the parts after `prefix` (not checked: the line key chose the parser) with `table`. */
export function partsAfter<T>(prefix: string, table: PartTable<T>): LineParser<T> {
  return (line, into) => readParts(line, prefix.length, table, into);
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
  ['system usage', (line, u) => parseRusage(line, u, 'system usage: '.length)],
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
