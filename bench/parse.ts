/**
 * Log parsing and ingest speed, as ratios measured in the same run:
 * - `pgvigil analyze --json` on the mixed corpus, -j 1 and -j 2, vs pgBadger -j 1 and vs a bare
 *   Node loop, with peak RSS; beside them pgvigil's line reader and prefix regex alone, and two
 *   `-j 1` runs at once on the two halves (what a second thread can give on this machine);
 * - the same on an autovacuum/autoanalyze-only corpus vs pgBadger;
 * - stderr, csvlog and jsonlog of the same events (a slice of the mixed corpus, converted);
 * - live ingest (tail + parse + classify + store in SQLite) with its peak RSS.
 *
 * Sizes: BENCH_MB (mixed corpus, default 1024), BENCH_AV_MB (autovacuum corpus, default 1/4 of
 * it), BENCH_PGBADGER_MB (pgBadger reads ~2 MB/s, so it runs on the first N MB, default 64, and
 * its rate is compared as MB/s), BENCH_RUNS (default 3), BENCH_LOAD_S (seconds of load behind the
 * corpus, default 100).
 *
 * Translated logs (issue #16): the recorded German and Japanese PG 15 logs of six scenarios
 * (test/fixtures/logs-lang) vs the English PG 15 logs of the same scenarios (test/fixtures/logs),
 * each amplified to BENCH_LANG_MB (default 64), as events/s of `analyze --json` (goal: translated
 * >= 0.5x English); and English read with the default language detection vs `--lang en`, to see
 * what detection costs a log that needs none. BENCH_PARSE_ONLY=translated runs this section alone
 * (no live corpus). BENCH_PARSE_ONLY=autovacuum runs the autovacuum corpus vs pgBadger alone;
 * BENCH_PARSE_ONLY=pgbadger the mixed corpus vs pgBadger alone, with analyze's peak RSS (issue #26:
 * >= 50x pgBadger -j 1 and < 250 MB on 1 GiB, every log report section computed).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync, writeSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { amplify, buildCorpus, CORPUS_PREFIX } from './lib/corpus.js';
import { programCommand } from './lib/compile.js';
import { writeOtherFormats } from './lib/formats.js';
import { envNumber, median, range, timeProcess, type ProcessRun } from './lib/measure.js';
import type { Benchmark } from './run.js';

const PGBADGER = '/usr/bin/pgbadger';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PGVIGIL_BIN = path.join(ROOT, 'bin', 'pgvigil.js');
const MB = 1024 * 1024;

interface Program {
  name: string;
  file: string;
  /** Bytes the program reads (for MB/s). */
  bytes: number;
  command: [string, string[]];
  env?: NodeJS.ProcessEnv;
}

interface Sample {
  run: ProcessRun;
  /** Events the analysis reported (analyze only). */
  events: number | null;
  mbPerS: number;
  /** MB per CPU second (user + system): less disturbed by other load on a shared machine. */
  mbPerCpuS: number | null;
  lines: number | null;
}

function nodeProgram(name: string, program: string, file: string, env?: NodeJS.ProcessEnv): Program {
  const [node, ...args] = programCommand(program, say);
  return { name, file, bytes: statSync(file).size, command: [node!, [...args, file]], env };
}

/** `pgvigil analyze --json FILE` as a user runs it: the shipped launcher and dist/ (built by run()). */
function analyzeProgram(name: string, file: string, extraArgs: string[] = []): Program {
  return { name, file, bytes: statSync(file).size, command: [process.execPath, [PGVIGIL_BIN, 'analyze', '--json', ...extraArgs, file]] };
}

/** Two halves of `file` (the second starting at a line that is no continuation), in `dir`. */
function halves(file: string, dir: string): [string, string] {
  const first = slice(file, Math.floor(statSync(file).size / 2), path.join(dir, 'half-1.log'));
  const second = path.join(dir, 'half-2.log');
  const [input, output] = [openSync(file, 'r'), openSync(second, 'w')];
  try {
    const buffer = Buffer.allocUnsafe(4 * MB);
    for (let position = statSync(first).size, n; (n = readSync(input, buffer, 0, buffer.length, position)) > 0; position += n) writeSync(output, buffer, 0, n);
  } finally {
    closeSync(input);
    closeSync(output);
  }
  return [first, second];
}

/** `analyze -j 1` on both halves at the same time, as two processes (bench/programs/halves-at-once.ts). */
function halvesProgram(file: string, dir: string): Program {
  const [node, ...script] = programCommand('halves-at-once', say);
  return { name: 'two analyze -j 1 at once, one a half', file, bytes: statSync(file).size, command: [node!, [...script, PGVIGIL_BIN, ...halves(file, dir)]] };
}

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

function pgbadgerProgram(name: string, file: string, outDir: string): Program {
  return {
    name, file, bytes: statSync(file).size,
    // Its own pid directory: pgBadger exits 3 while another pgBadger's pid file is in /tmp.
    command: [PGBADGER, ['-j', '1', '-q', '-f', 'stderr', '--prefix', CORPUS_PREFIX, '--pid-dir', outDir, '-o', path.join(outDir, `${name}.html`), file]],
  };
}

/** The first `bytes` of `file`, cut before a line that starts a new entry (not a tab continuation). */
function slice(file: string, bytes: number, out: string): string {
  const size = statSync(file).size;
  if (size <= bytes) return file;
  const fd = openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes + MB);
    const n = readSync(fd, buffer, 0, buffer.length, 0);
    let cut = buffer.subarray(0, n).indexOf(0x0a, bytes);
    while (cut !== -1 && buffer[cut + 1] === 0x09) cut = buffer.indexOf(0x0a, cut + 1);
    writeFileSync(out, buffer.subarray(0, cut === -1 ? n : cut + 1));
    return out;
  } finally {
    closeSync(fd);
  }
}

async function measure(program: Program): Promise<Sample> {
  const run = await timeProcess(program.command[0], program.command[1], { ...process.env, ...program.env });
  let lines: number | null = null;
  let events: number | null = null;
  try {
    const parsed = JSON.parse(run.stdout) as { lines?: number; events_by_kind?: Record<string, number> };
    lines = typeof parsed.lines === 'number' ? parsed.lines : null;
    events = parsed.events_by_kind ? Object.values(parsed.events_by_kind).reduce((a, b) => a + b, 0) : null;
  } catch {
    // pgBadger and the ingest program print no line count.
  }
  const mbPerCpuS = run.cpuSeconds ? program.bytes / MB / run.cpuSeconds : null;
  return { run, mbPerS: program.bytes / MB / run.seconds, mbPerCpuS, lines, events };
}

function report(program: Program, samples: Sample[]): string {
  const rates = samples.map((s) => s.mbPerS);
  const lines = samples[0]?.lines;
  const seconds = median(samples.map((s) => s.run.seconds));
  const rss = samples.map((s) => s.run.peakRssMb).filter((r): r is number => r !== null);
  const cpuRates = samples.map((s) => s.mbPerCpuS).filter((r): r is number => r !== null);
  return [
    `${program.name.padEnd(36)} ${(program.bytes / MB).toFixed(0).padStart(5)} MB`,
    `${median(rates).toFixed(1).padStart(7)} MB/s wall (${range(rates)})`,
    cpuRates.length ? `${median(cpuRates).toFixed(1).padStart(7)} MB/s CPU` : '',
    lines ? `${(lines / seconds / 1e6).toFixed(2)} M lines/s` : '',
    rss.length ? `peak RSS ${Math.max(...rss).toFixed(0)} MB` : '',
  ].filter(Boolean).join('  ');
}

/**
 * Median over runs of the per-run ratio a/b (runs alternate, so each pair shares conditions), by
 * wall time and by CPU time.
 */
function ratio(a: Sample[], b: Sample[]): string {
  const show = (ratios: number[]): string => `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`;
  const wall = a.map((s, i) => s.mbPerS / b[i]!.mbPerS);
  const cpu = a.map((s, i) => (s.mbPerCpuS ?? NaN) / (b[i]!.mbPerCpuS ?? NaN));
  return `${show(wall)} wall, ${cpu.some(Number.isNaN) ? '-' : show(cpu)} CPU`;
}

/** `sample` as if it had read `reference`'s bytes in its time: rates then compare time per event. */
function sameBytes(sample: Sample, reference: Sample): Sample {
  const factor = reference.mbPerS * reference.run.seconds / (sample.mbPerS * sample.run.seconds);
  return { ...sample, mbPerS: sample.mbPerS * factor, mbPerCpuS: sample.mbPerCpuS === null ? null : sample.mbPerCpuS * factor };
}

/** Scenarios recorded in English and in every language measured (test/fixtures/logs-lang). */
const LANG_SCENARIOS = ['autovacuum-held-back-by-snapshot', 'lock-waits-and-lock-timeout', 'deadlock', 'checkpoint-requested', 'standby-recovery-conflicts', 'backend-killed-crash-restart'];
const LANG_FIXTURES = path.join(ROOT, 'test', 'fixtures');

/** The stderr logs of LANG_SCENARIOS in `language` (en: the English golden fixtures), one after the other, amplified. */
async function scenarioCorpus(language: string, bytes: number, out: string): Promise<string> {
  const lines = LANG_SCENARIOS.flatMap((scenario) => {
    const file = language === 'en'
      ? path.join(LANG_FIXTURES, 'logs', `pg15-stderr-${scenario}`, `${scenario}.log`)
      : path.join(LANG_FIXTURES, 'logs-lang', `pg15-${language}-${scenario}`, `${scenario}.log`);
    return readFileSync(file, 'utf8').split('\n').filter((line) => line !== '');
  });
  await amplify(lines, bytes, out);
  return out;
}

/** Events per second (wall, and CPU: steadier on a shared machine) of each run of `a` over `b`'s, median (runs alternate). */
function eventRatio(a: Sample[], b: Sample[]): string {
  const show = (seconds: (s: Sample) => number | null): string => {
    const rate = (s: Sample): number => (s.events ?? NaN) / (seconds(s) ?? NaN);
    const ratios = a.map((s, i) => rate(s) / rate(b[i]!));
    return ratios.some(Number.isNaN) ? '-' : `${median(ratios).toFixed(2)}x (${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)})`;
  };
  return `${show((s) => s.run.seconds)} wall, ${show((s) => s.run.cpuSeconds)} CPU`;
}

async function measureRounds(programs: Record<string, Program>, runs: number): Promise<Map<string, Sample[]>> {
  const samples = new Map<string, Sample[]>(Object.keys(programs).map((key) => [key, []]));
  for (let i = 0; i < runs; i++) {
    for (const [key, program] of Object.entries(programs)) {
      const sample = await measure(program);
      samples.get(key)!.push(sample);
      process.stdout.write(`run ${i + 1}/${runs}: ${program.name}: ${sample.run.seconds.toFixed(1)} s, ${sample.mbPerS.toFixed(1)} MB/s wall, ` +
        `${sample.mbPerCpuS?.toFixed(1) ?? '-'} MB/s CPU, ${sample.events === null ? '-' : (sample.events / sample.run.seconds / 1e3).toFixed(0)} k events/s, ` +
        `peak RSS ${sample.run.peakRssMb?.toFixed(0) ?? '-'} MB\n`);
    }
  }
  return samples;
}

async function translatedSection(tmp: string, runs: number): Promise<void> {
  const bytes = envNumber('BENCH_LANG_MB', 64) * MB;
  say(`translated logs: building ${bytes / MB} MB corpora of the recorded PG 15 scenarios (en, de, ja)`);
  const en = await scenarioCorpus('en', bytes, path.join(tmp, 'lang-en.log'));
  const programs = {
    en: analyzeProgram('analyze, English (detection on)', en),
    enFixed: analyzeProgram('analyze --lang en, English', en, ['--lang', 'en']),
    de: analyzeProgram('analyze, German (detected)', await scenarioCorpus('de', bytes, path.join(tmp, 'lang-de.log'))),
    ja: analyzeProgram('analyze, Japanese (detected)', await scenarioCorpus('ja', bytes, path.join(tmp, 'lang-ja.log'))),
  };
  for (const program of Object.values(programs)) execFileSync('cat', [program.file], { stdio: ['ignore', 'ignore', 'inherit'] });
  const samples = await measureRounds(programs, runs);
  const s = (key: keyof typeof programs): Sample[] => samples.get(key)!;
  const events = (key: keyof typeof programs): string => `${s(key)[0]?.events ?? '-'} events`;
  process.stdout.write('\ntranslated logs, events/s ratios (median of per-run ratios; targets in brackets):\n');
  process.stdout.write(`  German / English:              ${eventRatio(s('de'), s('en'))} [>= 0.5x] (${events('de')} vs ${events('en')})\n`);
  process.stdout.write(`  Japanese / English:            ${eventRatio(s('ja'), s('en'))} [>= 0.5x] (${events('ja')})\n`);
  process.stdout.write(`  English, detection / --lang en: ${eventRatio(s('en'), s('enFixed'))} [~1.0x: detection must not cost English logs]\n`);
}

function badgerAvProgram(file: string, badgerMb: number, tmp: string): Program | null {
  return existsSync(PGBADGER) ? pgbadgerProgram('pgbadger -j 1 (autovacuum slice)', slice(file, badgerMb * MB, path.join(tmp, 'av-slice.log')), tmp) : null;
}

function autovacuumRatio(analyze: Sample[], badger: Sample[], badgerMb: number): string {
  return `  analyze -j 1 / pgbadger -j 1, autovac: ${ratio(analyze, badger)} [>= 10x] (pgBadger on the first ${badgerMb} MB)\n`;
}

/**
 * One `analyze -j 1` against pgBadger -j 1 on the first `badgerMb` of the same corpus, alone:
 * BENCH_PARSE_ONLY=autovacuum (issue #12) and BENCH_PARSE_ONLY=pgbadger (issue #26: the mixed
 * corpus with the log report computed, and its peak RSS), without the other rows.
 */
async function versusPgBadger(only: string, file: string, badgerMb: number, tmp: string, runs: number): Promise<void> {
  const kind = only === 'autovacuum' ? 'autovacuum' : 'mixed';
  if (!existsSync(PGBADGER)) throw new Error(`BENCH_PARSE_ONLY=${only} compares with pgBadger, not found at ${PGBADGER}`);
  const programs = {
    analyze: analyzeProgram(`pgvigil analyze -j 1 (${kind})`, file, ['-j', '1']),
    badger: pgbadgerProgram(`pgbadger -j 1 (${kind} slice)`, slice(file, badgerMb * MB, path.join(tmp, `${kind}-slice.log`)), tmp),
  };
  execFileSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] });
  const samples = await measureRounds(programs, runs);
  const s = (key: keyof typeof programs): Sample[] => samples.get(key)!;
  process.stdout.write('\nmedian of runs (range):\n');
  for (const [key, program] of Object.entries(programs)) process.stdout.write(`  ${report(program, samples.get(key)!)}\n`);
  process.stdout.write('\nratios (median of per-run ratios; targets in brackets):\n');
  if (kind === 'autovacuum') return void process.stdout.write(autovacuumRatio(s('analyze'), s('badger'), badgerMb));
  process.stdout.write(`  analyze -j 1 / pgbadger -j 1, mixed:   ${ratio(s('analyze'), s('badger'))} [>= 50x] (pgBadger on the first ${badgerMb} MB)\n`);
  process.stdout.write(peakRssLine(s('analyze'), programs.analyze));
}

/** Issue #26's memory target: `analyze -j 1` with every report section, on 1 GiB. */
function peakRssLine(samples: Sample[], program: Program): string {
  const peak = Math.max(...samples.map((x) => x.run.peakRssMb ?? 0));
  return `  peak RSS analyze -j 1, mixed:          ${peak.toFixed(0)} MB on ${(program.bytes / MB).toFixed(0)} MB [< 250 MB on 1024 MB]\n`;
}

async function run(): Promise<void> {
  if (process.env.BENCH_PARSE_ONLY === 'translated') {
    say('building dist/ (npm run build)');
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-lang-'));
    try {
      await translatedSection(tmp, envNumber('BENCH_RUNS', 3));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
    return;
  }
  const mixedMb = envNumber('BENCH_MB', 1024);
  const corpus = await buildCorpus({
    mixedMb, autovacuumMb: envNumber('BENCH_AV_MB', Math.max(16, Math.round(mixedMb / 4))), loadSeconds: envNumber('BENCH_LOAD_S', 100),
    say,
  });
  const runs = envNumber('BENCH_RUNS', 3);
  // dist/ must be the code under test, not what the last install built.
  say('building dist/ (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const badgerMb = envNumber('BENCH_PGBADGER_MB', 64);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-parse-'));
  try {
    const only = process.env.BENCH_PARSE_ONLY;
    if (only === 'autovacuum' || only === 'pgbadger') {
      await versusPgBadger(only, only === 'autovacuum' ? corpus.autovacuum : corpus.mixed, badgerMb, tmp, runs);
      return;
    }
    const formatsMb = envNumber('BENCH_FORMATS_MB', badgerMb);
    const stderrSlice = slice(corpus.mixed, formatsMb * MB, path.join(corpus.dir, `formats-${formatsMb}mb.log`));
    const [csvFile, jsonFile] = [path.join(corpus.dir, `formats-${formatsMb}mb.csv`), path.join(corpus.dir, `formats-${formatsMb}mb.json`)];
    say('writing the csvlog and jsonlog of the same events');
    await writeOtherFormats(stderrSlice, CORPUS_PREFIX, csvFile, jsonFile);
    const programs = {
      analyze: analyzeProgram('pgvigil analyze -j 1 (mixed)', corpus.mixed, ['-j', '1']),
      analyze2: analyzeProgram('pgvigil analyze -j 2 (mixed)', corpus.mixed, ['-j', '2']),
      bare: nodeProgram('bare Node loop (mixed)', 'bare-loop', corpus.mixed),
      floor: nodeProgram('line reader + prefix regex (mixed)', 'prefix-floor', corpus.mixed, { BENCH_PREFIX: CORPUS_PREFIX }),
      halves: halvesProgram(corpus.mixed, tmp),
      ingest: nodeProgram('live ingest, every event stored', 'ingest', corpus.mixed),
      ingestNotable: nodeProgram('live ingest, notable events stored', 'ingest', corpus.mixed, { BENCH_STORE: 'notable' }),
      analyzeAv: analyzeProgram('pgvigil analyze -j 1 (autovacuum)', corpus.autovacuum, ['-j', '1']),
      formatStderr: analyzeProgram('analyze -j 1 stderr (same events)', stderrSlice, ['-j', '1', '--format', 'stderr', '--prefix', CORPUS_PREFIX]),
      formatCsv: analyzeProgram('analyze -j 1 csvlog (same events)', csvFile, ['-j', '1', '--format', 'csvlog']),
      formatJson: analyzeProgram('analyze -j 1 jsonlog (same events)', jsonFile, ['-j', '1', '--format', 'jsonlog']),
      badger: existsSync(PGBADGER) ? pgbadgerProgram('pgbadger -j 1 (mixed slice)', slice(corpus.mixed, badgerMb * MB, path.join(tmp, 'mixed-slice.log')), tmp) : null,
      badgerAv: badgerAvProgram(corpus.autovacuum, badgerMb, tmp),
    };
    // Warm the page cache: the point is parsing speed, not the disk.
    for (const file of [corpus.mixed, corpus.autovacuum]) execFileSync('cat', [file], { stdio: ['ignore', 'ignore', 'inherit'] });
    const order = Object.entries(programs).filter((e): e is [string, Program] => e[1] !== null);
    const samples = await measureRounds(Object.fromEntries(order), runs);
    process.stdout.write('\nmedian of runs (range):\n');
    for (const [key, program] of order) process.stdout.write(`  ${report(program, samples.get(key)!)}\n`);
    const s = (key: string): Sample[] => samples.get(key)!;
    process.stdout.write('\nratios (median of per-run ratios; targets in brackets):\n');
    process.stdout.write(`  analyze -j 1 / bare loop, mixed:       ${ratio(s('analyze'), s('bare'))} [>= 0.25x]\n`);
    process.stdout.write(`  analyze -j 2 / bare loop, mixed:       ${ratio(s('analyze2'), s('bare'))} [>= 1.0x]\n`);
    process.stdout.write(`  analyze -j 2 / analyze -j 1, mixed:    ${ratio(s('analyze2'), s('analyze'))}\n`);
    // Where the -j 2 goal stands: what reading alone costs, and what a second thread can give here.
    process.stdout.write(`  analyze -j 1 / line reader + prefix:   ${ratio(s('analyze'), s('floor'))} (what framing, classifying and summing cost)\n`);
    process.stdout.write(`  line reader + prefix / bare loop:      ${ratio(s('floor'), s('bare'))} (what offsets and captured fields cost)\n`);
    process.stdout.write(`  two -j 1 at once / analyze -j 1:       ${ratio(s('halves'), s('analyze'))} (the most a second thread gives on this machine)\n`);
    process.stdout.write(`  analyze -j 2 / two -j 1 at once:       ${ratio(s('analyze2'), s('halves'))} (what the workers and the merge cost)\n`);
    if (programs.badger) {
      process.stdout.write(`  analyze -j 1 / pgbadger -j 1, mixed:   ${ratio(s('analyze'), s('badger'))} [>= 50x] (pgBadger on the first ${badgerMb} MB)\n`);
      process.stdout.write(`  analyze -j 2 / pgbadger -j 1, mixed:   ${ratio(s('analyze2'), s('badger'))} [>= 150x] (pgBadger on the first ${badgerMb} MB)\n`);
    }
    if (programs.badgerAv) process.stdout.write(autovacuumRatio(s('analyzeAv'), s('badgerAv'), badgerMb));
    // The same events in three formats: compared by time (MB/s would favour the wordier format).
    const perEvents = (a: Sample[], b: Sample[]): string => ratio(a.map((x, i) => sameBytes(x, b[i]!)), b);
    process.stdout.write(`  csvlog / stderr, same events:          ${perEvents(s('formatCsv'), s('formatStderr'))} [>= 0.5x]\n`);
    process.stdout.write(`  jsonlog / stderr, same events:         ${perEvents(s('formatJson'), s('formatStderr'))} [>= 0.5x]\n`);
    process.stdout.write(peakRssLine(s('analyze'), programs.analyze));
    process.stdout.write(`  peak RSS analyze -j 2, mixed: ${Math.max(...s('analyze2').map((x) => x.run.peakRssMb ?? 0)).toFixed(0)} MB [< 200 MB]\n`);
    process.stdout.write(`  absolute (noisy): analyze mixed ${median(s('analyze').map((x) => x.mbPerS)).toFixed(0)} MB/s [>= 100], ` +
      `autovacuum ${median(s('analyzeAv').map((x) => x.mbPerS)).toFixed(0)} MB/s [>= 60], ingest ${median(s('ingest').map((x) => x.mbPerS)).toFixed(0)} MB/s ` +
      `(notable only: ${median(s('ingestNotable').map((x) => x.mbPerS)).toFixed(0)} MB/s) [>= 50, RSS < 200 MB]\n`);
    const analyzeLines = s('analyze')[0]?.lines;
    const bareLines = s('bare')[0]?.lines;
    if (analyzeLines !== bareLines) process.stdout.write(`  WARNING: analyze counted ${analyzeLines} lines, the bare loop ${bareLines}\n`);
    await translatedSection(tmp, runs);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'log parsing (pgvigil analyze vs pgBadger and a bare Node loop) and live ingest to SQLite',
  run,
};
