/**
 * `npm run bench -- disk-full`: `pgvigil run` polling pg_stat_user_tables of 200 tables every
 * DISK_FULL_POLL_MS (default 250: ~24,000 samples a second) on a real PostgreSQL 18, its store on
 * a 64 MiB tmpfs written full for DISK_FULL_MINUTES (default 10). Prints, every
 * DISK_FULL_SCRAPE_SECONDS (default 15), the heap, the event-loop p99 of the last second, the
 * samples dropped and the backlog; then the heap and p99 before and at most while full. The
 * samples held must stay within the writer's bound (100,000) and the heap with them.
 * Needs root (mount) and `npm run build` first. test/integration/disk-full.test.ts runs the same
 * for seconds and asserts it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cannotMount, pollWhileDiskFull } from '../test/helpers/full-disk.js';
import { destroyAllServers, startPrimary } from '../test/helpers/pg-harness.js';
import { envNumber } from './lib/measure.js';
import type { Benchmark } from './run.js';

// Room for what the store writes before the filler and for its backlog's commit after.
const FILESYSTEM_MB = 64;

async function runDiskFullBench(): Promise<void> {
  const say = (msg: string) => process.stdout.write(`${msg}\n`);
  const missing = cannotMount();
  if (missing !== null) {
    say(`not run: ${missing}`);
    return;
  }
  const minutes = envNumber('DISK_FULL_MINUTES', 10);
  const mountPoint = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-disk-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${FILESYSTEM_MB}m`, 'tmpfs', mountPoint]);
  const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
  const ms = (seconds: number) => Math.round(seconds * 1000);
  try {
    const server = await startPrimary({ version: 18, name: 'bench-disk-full' });
    const dir = path.join(mountPoint, 'polling');
    mkdirSync(dir);
    const run = await pollWhileDiskFull({
      server, dir, tables: 200,
      fullForMs: minutes * 60_000,
      pollEveryMs: envNumber('DISK_FULL_POLL_MS', 250),
      scrapeEveryMs: envNumber('DISK_FULL_SCRAPE_SECONDS', 15) * 1000,
      onScrape: (s) => say(`${(s.elapsedMs / 1000).toFixed(0).padStart(5)} s full: heap ${mb(s.heapUsedBytes)} MB, loop p99 ${ms(s.loopP99Seconds)} ms,` +
        ` ${s.droppedSamples} samples dropped, backlog ${s.backlogRows} rows`),
    });
    // The first scrapes' p99 still covers commits made before the disk was full.
    const settled = run.scrapes.slice(1);
    const p99s = settled.map((s) => s.loopP99Seconds).sort((a, b) => a - b);
    say(`disk full ${minutes} min: heap ${mb(run.heapBeforeBytes)} MB before, at most ${mb(Math.max(...run.scrapes.map((s) => s.heapUsedBytes)))} MB;` +
      ` loop p99 ${ms(run.loopP99BeforeSeconds)} ms before, per scrape while full median ${ms(p99s[Math.floor(p99s.length / 2)] ?? NaN)} ms, at most ${ms(p99s.at(-1) ?? NaN)} ms;` +
      ` backlog at most ${Math.max(...run.scrapes.map((s) => s.backlogRows))} rows; ${run.scrapes.at(-1)?.droppedSamples ?? 0} samples dropped`);
    say(`pgvigil exit on SIGTERM: ${JSON.stringify(run.exit)}`);
  } finally {
    await destroyAllServers();
    execFileSync('umount', ['--lazy', mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  }
}

export const benchmark: Benchmark = {
  description: `pgvigil run polling fast with its store on a full ${FILESYSTEM_MB} MiB tmpfs for DISK_FULL_MINUTES (default 10): heap, event-loop p99 and samples dropped`,
  run: () => runDiskFullBench(),
};
