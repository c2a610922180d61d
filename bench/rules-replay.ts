/**
 * `pgvigil analyze --rules` on a long log: what replaying the rules costs over the same analysis
 * without them, and pgBadger's time on the same file, measured in the same run (runs alternate).
 *
 * The log is the tests' seeded generator (test/helpers/generated-logs.ts) spread over
 * BENCH_REPLAY_DAYS (default 23) days: BENCH_REPLAY_ENTRIES entries (default 20,000, ~6 MB),
 * statements, autovacuum reports stuck at one cutoff, lock waits and timeouts, checkpoints, so the
 * engine evaluates slot after slot and vacuum-held-back and error-storm have work to do. Written
 * to the temp directory, deterministically (the same bytes every run). BENCH_REPLAY_RUNS runs
 * (default 1: the replay takes minutes; an alert open for the whole span makes the engine
 * evaluate every 5 s slot of the 23 days, and that, not the log's size, is its cost).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { GENERATED_STDERR_PREFIX, generatedStderrLog } from '../test/helpers/generated-logs.js';
import { envNumber, median, range, timeProcess, type ProcessRun } from './lib/measure.js';
import type { Benchmark } from './run.js';

const PGBADGER = '/usr/bin/pgbadger';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PGVIGIL_BIN = path.join(ROOT, 'bin', 'pgvigil.js');
const DAY_MS = 86_400_000;

function say(msg: string): void {
  process.stdout.write(`${msg}\n`);
}

async function runRulesReplayBench(): Promise<void> {
  const entries = envNumber('BENCH_REPLAY_ENTRIES', 20_000);
  const days = envNumber('BENCH_REPLAY_DAYS', 23);
  const runs = envNumber('BENCH_REPLAY_RUNS', 1);
  say('building dist/ (npm run build)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-rules-replay-'));
  try {
    const file = path.join(dir, `generated-${days}d.log`);
    writeFileSync(file, generatedStderrLog(entries, 1, Math.round(days * DAY_MS / entries)));
    say(`log: ${entries.toLocaleString('en')} entries over ${days} days, ${(statSync(file).size / 1e6).toFixed(0)} MB (${file})`);
    const analyze = ['analyze', '--json', '--format', 'stderr', '--prefix', GENERATED_STDERR_PREFIX, '-j', '1'];
    const programs: Array<[string, [string, string[]]]> = [
      ['analyze', [process.execPath, [PGVIGIL_BIN, ...analyze, file]]],
      ['analyze --rules', [process.execPath, [PGVIGIL_BIN, ...analyze, '--rules', file]]],
    ];
    if (existsSync(PGBADGER)) {
      programs.push(['pgbadger -j 1', [PGBADGER, ['-j', '1', '-q', '-f', 'stderr', '--prefix', GENERATED_STDERR_PREFIX, '--pid-dir', dir, '-o', path.join(dir, 'out.html'), file]]]);
    } else {
      say(`pgBadger not compared: no ${PGBADGER} (apt-get install pgbadger)`);
    }
    const samples = new Map<string, ProcessRun[]>(programs.map(([name]) => [name, []]));
    for (let i = 0; i < runs; i++) {
      for (const [name, [command, args]] of programs) {
        const run = await timeProcess(command, args);
        samples.get(name)!.push(run);
        say(`run ${i + 1}/${runs}: ${name}: ${run.seconds.toFixed(1)} s wall, ${run.cpuSeconds?.toFixed(1) ?? '-'} s CPU, peak RSS ${run.peakRssMb?.toFixed(0) ?? '-'} MB`);
      }
    }
    const alerts = (JSON.parse(samples.get('analyze --rules')![0]!.stdout) as { alerts?: Array<{ rule: string }> }).alerts ?? [];
    say(`\nalerts the replay finds: ${alerts.length} (${[...new Set(alerts.map((a) => a.rule))].join(', ') || 'none'})`);
    say('median of runs (range):');
    for (const [name] of programs) {
      const s = samples.get(name)!;
      say(`  ${name.padEnd(16)} ${median(s.map((r) => r.seconds)).toFixed(1)} s wall (${range(s.map((r) => r.seconds))}), ` +
        `${s[0]!.cpuSeconds === null ? '-' : median(s.map((r) => r.cpuSeconds!)).toFixed(1)} s CPU, peak RSS ${Math.max(...s.map((r) => r.peakRssMb ?? 0)).toFixed(0)} MB`);
    }
    // Per-run ratios (the runs of a round share the machine's load), then their median.
    const ratio = (a: string, b: string): string => {
      const pairs = (pick: (r: ProcessRun) => number | null) => samples.get(a)!.map((r, i) => (pick(r) ?? NaN) / (pick(samples.get(b)![i]!) ?? NaN));
      const show = (values: number[]) => values.some(Number.isNaN) ? '-' : `${median(values).toFixed(2)}x (${Math.min(...values).toFixed(2)}-${Math.max(...values).toFixed(2)})`;
      return `${show(pairs((r) => r.seconds))} wall, ${show(pairs((r) => r.cpuSeconds))} CPU`;
    };
    say('\nratios of time (median of per-run ratios):');
    say(`  analyze --rules / analyze:   ${ratio('analyze --rules', 'analyze')} [before this bench, by hand: 5.1x]`);
    if (samples.has('pgbadger -j 1')) {
      say(`  analyze / pgbadger:          ${ratio('analyze', 'pgbadger -j 1')}`);
      say(`  analyze --rules / pgbadger:  ${ratio('analyze --rules', 'pgbadger -j 1')}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: 'analyze --rules vs analyze vs pgBadger on a generated 23-day log',
  run: () => runRulesReplayBench(),
};
