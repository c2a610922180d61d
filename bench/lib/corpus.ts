/**
 * The benchmark corpus, built from a real server's log: PostgreSQL 18 (test harness) with every
 * statement, autovacuum run, lock wait, checkpoint and temp file logged, under pgbench plus an
 * incident loop; then the log is repeated up to the wanted size with timestamps shifted forward
 * and backend pids renumbered per copy, so every copy reads like new traffic.
 *
 * The built files are cached in the temp directory (BENCH_REBUILD=1 builds them again).
 */
import { createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { destroyAllServers, startPrimary } from '../../test/helpers/pg-harness.js';
import { driveLoad } from './load.js';

export const CORPUS_PREFIX = '%m [%p] %q%u@%d ';

export interface Corpus {
  dir: string;
  base: string;
  mixed: string;
  autovacuum: string;
}

export interface CorpusOptions {
  mixedMb: number;
  autovacuumMb: number;
  loadSeconds: number;
  say: (msg: string) => void;
}

const LINE_HEAD = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(\.\d{3} [A-Z]+ \[)(\d+)\]/;
const AUTOVACUUM_HEAD = /^\S+ \S+ \S+ \[\d+\] (?:\S+ )?LOG:  automatic (?:aggressive )?(?:vacuum|analyze)/;
const MAX_PID = 4_194_304;

export async function buildCorpus(options: CorpusOptions): Promise<Corpus> {
  const dir = path.join(os.tmpdir(), 'pgvigil-bench-corpus');
  mkdirSync(dir, { recursive: true });
  const corpus: Corpus = {
    dir,
    base: path.join(dir, 'base-pg18.log'),
    mixed: path.join(dir, `mixed-${options.mixedMb}mb.log`),
    autovacuum: path.join(dir, `autovacuum-${options.autovacuumMb}mb.log`),
  };
  const rebuild = process.env.BENCH_REBUILD === '1';
  if (rebuild || !existsSync(corpus.base)) await recordBaseLog(corpus.base, options);
  const baseLines = readFileSync(corpus.base, 'utf8').split('\n');
  if (baseLines.at(-1) === '') baseLines.pop();
  if (rebuild || !existsSync(corpus.mixed)) {
    options.say(`corpus: writing ${corpus.mixed}`);
    await amplify(baseLines, options.mixedMb * 1024 * 1024, corpus.mixed);
  }
  if (rebuild || !existsSync(corpus.autovacuum)) {
    options.say(`corpus: writing ${corpus.autovacuum}`);
    await amplify(autovacuumEntries(baseLines), options.autovacuumMb * 1024 * 1024, corpus.autovacuum);
  }
  return corpus;
}

async function recordBaseLog(file: string, options: CorpusOptions): Promise<void> {
  options.say(`corpus: starting PostgreSQL 18 and driving ${options.loadSeconds} s of load`);
  const server = await startPrimary({
    version: 18,
    name: 'bench',
    settings: {
      log_min_duration_statement: 0,
      log_autovacuum_min_duration: 0,
      log_lock_waits: true,
      log_checkpoints: true,
      log_temp_files: 0,
      deadlock_timeout: '100ms',
      autovacuum_naptime: '1s',
      checkpoint_timeout: '30s',
      track_io_timing: true,
    },
  });
  try {
    await driveLoad({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' }, options.loadSeconds, options.say);
    await server.stop('fast');
    const text = server.logFiles().filter((f) => f.endsWith('.log')).map((f) => readFileSync(f, 'utf8')).join('');
    writeFileSync(file, text);
    options.say(`corpus: base log ${(statSync(file).size / 1024 / 1024).toFixed(1)} MB, ${text.split('\n').length - 1} lines`);
  } finally {
    await destroyAllServers();
  }
}

/** The autovacuum and autoanalyze reports of the base log, header and tab-led lines. */
export function autovacuumEntries(lines: string[]): string[] {
  const out: string[] = [];
  let inReport = false;
  for (const line of lines) {
    if (line.startsWith('\t')) {
      if (inReport) out.push(line);
      continue;
    }
    inReport = AUTOVACUUM_HEAD.test(line);
    if (inReport) out.push(line);
  }
  if (out.length === 0) throw new Error('the base log has no autovacuum report: was log_autovacuum_min_duration = 0 set?');
  return out;
}

/** Writes copies of `lines` until `targetBytes`, each copy shifted past the previous one in time. */
export async function amplify(lines: string[], targetBytes: number, file: string): Promise<void> {
  const firstTs = lines.map((l) => LINE_HEAD.exec(l)?.[1]).find(Boolean);
  const lastTs = [...lines].reverse().map((l) => LINE_HEAD.exec(l)?.[1]).find(Boolean);
  if (!firstTs || !lastTs) throw new Error('no timestamped line to shift');
  const spanMs = Date.parse(`${lastTs}Z`) - Date.parse(`${firstTs}Z`);
  // Whole minutes, so every copy's minutes are new minutes.
  const shiftMs = Math.ceil((spanMs + 1000) / 60_000) * 60_000;
  const out = createWriteStream(file);
  let written = 0;
  for (let copy = 0; written < targetBytes; copy++) {
    const shifted = new Map<string, string>();
    const parts: string[] = [];
    let partChars = 0;
    for (const line of lines) {
      const next = copy === 0 ? line : shiftLine(line, copy, shiftMs, shifted);
      parts.push(next);
      partChars += next.length + 1;
      if (partChars >= 1 << 20) {
        written += await write(out, parts);
        parts.length = 0;
        partChars = 0;
        if (written >= targetBytes) break;
      }
    }
    if (parts.length > 0) written += await write(out, parts);
  }
  out.end();
  await once(out, 'finish');
}

function shiftLine(line: string, copy: number, shiftMs: number, cache: Map<string, string>): string {
  const match = LINE_HEAD.exec(line);
  if (!match) return line;
  const [head, second, middle, pid] = match as unknown as [string, string, string, string];
  let moved = cache.get(second);
  if (moved === undefined) {
    moved = new Date(Date.parse(`${second}Z`) + copy * shiftMs).toISOString().slice(0, 19).replace('T', ' ');
    cache.set(second, moved);
  }
  const newPid = ((Number(pid) + copy * 7919) % MAX_PID) + 1;
  return `${moved}${middle}${newPid}]${line.slice(head.length)}`;
}

async function write(out: NodeJS.WritableStream, parts: string[]): Promise<number> {
  const text = `${parts.join('\n')}\n`;
  if (!out.write(text)) await once(out, 'drain');
  return Buffer.byteLength(text);
}
