/**
 * pgBadger, the log analyzer people compare pgvigil with, run on a log with `-x json`, and the
 * numbers its report shows taken from that JSON. The JSON is pgBadger's internal state dumped as is
 * (`dump_as_json` in /usr/bin/pgbadger): without `-E`, every statistic sits under the key
 * `postgres` (its `$DBALL`), whatever the databases; durations are milliseconds.
 *
 * Never: correct pgBadger. What it gets wrong is asserted as it is, beside the log lines that
 * prove it, in the tests that use this (test/integration/pgbadger-side-by-side.test.ts).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { LogFormat } from '../../src/parsers/framer.js';
import { toolPath } from './tools.js';

/** Statistics of all databases together when pgBadger is not run per database (its `$DBALL`). */
const ALL = 'postgres';

/** One normalised statement of pgBadger's "Queries" pages. */
export interface BadgerQuery {
  /** pgBadger's normalised text: lower case, literals as `?`, `IN` lists as `(...)`. */
  normalized: string;
  count: number;
  /** Execute and statement durations; parse and bind steps are not in it. */
  totalMs: number;
}

/** One row of pgBadger's "Most frequent errors/events". */
export interface BadgerError {
  normalized: string;
  /** The level of its first example, as pgBadger keeps it: ERROR, FATAL, PANIC, WARNING or LOG. */
  level: string;
  /** pgBadger reads a SQLSTATE from jsonlog only. */
  sqlstate: string | null;
  count: number;
}

export interface BadgerReport {
  queries: {
    count: number;
    /** What pgBadger's overview shows as the queries' total duration: execute + parse + bind. */
    totalMs: number;
    /** Parse and bind steps of the extended protocol. */
    parseBindMs: number;
    normalized: BadgerQuery[];
  };
  errors: BadgerError[];
  /** Its overview's event count: every row of `errors`, whatever the level. */
  errorsNumber: number;
  connections: { count: number; byUser: Record<string, number>; byDatabase: Record<string, number> };
  sessions: { count: number; totalMs: number };
  checkpoints: { started: number; buffersWritten: number; writeS: number; syncS: number; totalS: number };
  tempFiles: { count: number; totalBytes: number; maxBytes: number };
  lockWaits: { count: number; totalMs: number };
}

/**
 * Runs Debian's pgBadger on `file` (one job, quiet, its pid file in `workDir`) and reads its JSON.
 * `prefix` is the server's log_line_prefix, which a stderr log needs.
 */
export function runPgBadger(file: string, format: LogFormat, prefix: string, workDir: string): BadgerReport {
  const out = path.join(workDir, `${path.basename(file)}.pgbadger.json`);
  const formatArgs = format === 'stderr' ? ['-f', 'stderr', '--prefix', prefix] : ['-f', format === 'csvlog' ? 'csv' : 'jsonlog'];
  // Its own pid directory: pgBadger exits 3 while another pgBadger's pid file is in /tmp.
  execFileSync(toolPath('pgbadger'), ['-q', '-j', '1', ...formatArgs, '--pid-dir', workDir, '-x', 'json', '-o', out, file], { stdio: ['ignore', 'ignore', 'pipe'] });
  return readBadgerJson(JSON.parse(fs.readFileSync(out, 'utf8')) as BadgerJson, file);
}

// The parts of pgBadger's dump read here; pgBadger leaves out a statistic it never saw.
interface BadgerJson {
  overall_stat: { queries_number?: number; errors_number?: number; postgres?: { queries_duration?: Partial<Record<'execute' | 'prepare' | 'bind', number>> } };
  normalyzed_info: Record<string, Record<string, { count: number; duration: number }>>;
  error_info: Record<string, Record<string, { count: number; error: string[]; sqlstate: (string | null)[] }>>;
  connection_info: Record<string, { count?: number; user?: Record<string, number>; database?: Record<string, number> }>;
  session_info: Record<string, { count?: number; duration?: number }>;
  checkpoint_info: { starting?: Record<string, number>; wbuffer?: number; write?: number; sync?: number; total?: number };
  tempfile_info: Record<string, { count?: number; size?: number; maxsize?: number }>;
  lock_info: Record<string, Record<string, { count?: number; duration?: number }>>;
}

function readBadgerJson(json: BadgerJson, file: string): BadgerReport {
  const durations = json.overall_stat[ALL]?.queries_duration ?? {};
  const parseBindMs = (durations.prepare ?? 0) + (durations.bind ?? 0);
  const connections = json.connection_info[ALL] ?? {};
  const started = Object.values(json.checkpoint_info.starting ?? {}).reduce((sum, n) => sum + n, 0);
  const locks = Object.values(json.lock_info[ALL] ?? {});
  return {
    queries: {
      count: json.overall_stat.queries_number ?? 0,
      totalMs: round3((durations.execute ?? 0) + parseBindMs),
      parseBindMs: round3(parseBindMs),
      normalized: Object.entries(json.normalyzed_info[ALL] ?? {}).map(([normalized, q]) => ({ normalized, count: q.count, totalMs: round3(q.duration) })),
    },
    errors: Object.entries(json.error_info[ALL] ?? {}).map(([normalized, e]) => ({
      normalized,
      level: levelOf(e.error[0], file),
      sqlstate: e.sqlstate[0] ?? null,
      count: e.count,
    })),
    errorsNumber: json.overall_stat.errors_number ?? 0,
    connections: { count: connections.count ?? 0, byUser: connections.user ?? {}, byDatabase: connections.database ?? {} },
    sessions: { count: json.session_info[ALL]?.count ?? 0, totalMs: json.session_info[ALL]?.duration ?? 0 },
    checkpoints: {
      started,
      buffersWritten: json.checkpoint_info.wbuffer ?? 0,
      writeS: round3(json.checkpoint_info.write ?? 0),
      syncS: round3(json.checkpoint_info.sync ?? 0),
      totalS: round3(json.checkpoint_info.total ?? 0),
    },
    tempFiles: { count: json.tempfile_info[ALL]?.count ?? 0, totalBytes: json.tempfile_info[ALL]?.size ?? 0, maxBytes: json.tempfile_info[ALL]?.maxsize ?? 0 },
    lockWaits: { count: locks.reduce((sum, l) => sum + (l.count ?? 0), 0), totalMs: round3(locks.reduce((sum, l) => sum + (l.duration ?? 0), 0)) },
  };
}

function levelOf(example: string | undefined, file: string): string {
  const level = /^([A-Z]+):/.exec(example ?? '')?.[1];
  if (!level) throw new Error(`pgBadger's JSON for ${file}: an error example without its level: ${JSON.stringify(example)}`);
  return level;
}

/** Milliseconds to the microsecond: pgBadger adds floats, the log prints three decimals. */
export function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/**
 * A statement shape as both tools can be matched on: pgBadger's normalised text and pgvigil's
 * fingerprint text (literals and parameters as `$n`) without literals, parameters, `IN` list
 * contents, case, white space and the final semicolon. pgBadger writes `?` for a literal and drops
 * a `$n` it could not replace by its value; pgvigil writes `$n`: both are removed.
 */
export function shapeKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/'(?:[^']|'')*'/g, '')
    .replace(/\$\d+|\?|\.\.\.|\b\d+(?:\.\d+)?\b/g, '')
    .replace(/\s+/g, '')
    .replace(/\([,]*\)/g, '()')
    .replace(/;$/, '');
}
