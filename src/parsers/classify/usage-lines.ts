/**
 * The continuation lines vacuum and analyze reports share: delay time, I/O timings, read/write
 * rates, buffer usage, WAL usage and system usage. Each line is read part by part, so a part
 * added by a new release leaves the known parts parsed (the line is still reported unknown).
 */
import type { UsageFields } from '../../domain/index.js';
import { matchPieces, parseRusage, toFloat, toInt, type PieceSpec } from './fields.js';

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

/** A LineParser reading the parts after `prefix` with `specs`. */
export function piecesAfter<T>(prefix: string, specs: readonly PieceSpec<T>[]): LineParser<T> {
  return (line, into) => matchPieces(line.slice(prefix.length), ', ', specs, into);
}

const IO_TIMINGS: readonly PieceSpec<UsageFields>[] = [
  [/^read: ([\d.]+) ms$/, (g, u) => (u.io_read_ms = toFloat(g[1]))],
  [/^write: ([\d.]+) ms$/, (g, u) => (u.io_write_ms = toFloat(g[1]))],
];

const RATES: readonly PieceSpec<UsageFields>[] = [
  [/^avg read rate: ([\d.]+) MB\/s$/, (g, u) => (u.read_rate_mbs = toFloat(g[1]))],
  [/^avg write rate: ([\d.]+) MB\/s$/, (g, u) => (u.write_rate_mbs = toFloat(g[1]))],
];

const BUFFERS: readonly PieceSpec<UsageFields>[] = [
  [/^(\d+) hits$/, (g, u) => (u.buffer_hits = toInt(g[1]))],
  // PG 18+: "misses" became "reads"; both count blocks read.
  [/^(\d+) (?:misses|reads)$/, (g, u) => (u.buffer_reads = toInt(g[1]))],
  [/^(\d+) dirtied$/, (g, u) => (u.buffer_dirtied = toInt(g[1]))],
];

const WAL: readonly PieceSpec<UsageFields>[] = [
  [/^(\d+) records$/, (g, u) => (u.wal_records = toInt(g[1]))],
  [/^(\d+) full page images$/, (g, u) => (u.wal_fpi = toInt(g[1]))],
  [/^(\d+) bytes$/, (g, u) => (u.wal_bytes = toInt(g[1]))],
  // PG 19+.
  [/^(\d+) full page image bytes$/, (g, u) => (u.wal_fpi_bytes = toInt(g[1]))],
  // PG 18+.
  [/^(\d+) buffers full$/, (g, u) => (u.wal_buffers_full = toInt(g[1]))],
];

export const USAGE_LINES: ReadonlyMap<string, LineParser<UsageFields>> = new Map<string, LineParser<UsageFields>>([
  // PG 18+, with track_cost_delay_timing.
  ['delay time', wholeLine(/^delay time: ([\d.]+) ms$/, (g, u) => (u.delay_time_ms = toFloat(g[1])))],
  ['I/O timings', piecesAfter('I/O timings: ', IO_TIMINGS)],
  ['avg read rate', piecesAfter('', RATES)],
  ['buffer usage', piecesAfter('buffer usage: ', BUFFERS)],
  ['WAL usage', piecesAfter('WAL usage: ', WAL)],
  ['system usage', (line, u) => parseRusage(line.slice('system usage: '.length), u)],
]);

/** The key a continuation line is dispatched on: the text before its first colon. */
export function lineKey(line: string): string {
  const colon = line.indexOf(':');
  return colon < 0 ? line : line.slice(0, colon);
}
