/**
 * A real full disk under a running `pgvigil run` (built, dist/): a small tmpfs mounted for the
 * store, then written full. Mounting needs root. Used by test/integration/disk-full.test.ts (a few
 * seconds of it) and `npm run bench -- disk-full` (minutes of it).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { spawnDaemon, type DaemonExit } from './daemon-process.js';
import type { PgServer } from './pg-harness.js';
import { waitUntil } from './pg-server.js';

/** Why a tmpfs cannot be mounted here, or null when it can (tried once, then unmounted). */
export function cannotMount(): string | null {
  if (process.getuid?.() !== 0) return 'mounting a small tmpfs needs root';
  const probe = mkdtempSync(join(tmpdir(), 'pgvigil-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return null;
  } catch (err) {
    return `cannot mount a tmpfs: ${(err as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Writes the filesystem holding `file` full, through `file`; returns the bytes written. */
export function fillFilesystem(file: string): number {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  let written = 0;
  try {
    for (;;) written += writeSync(fd, chunk);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return written;
}

/** The value of an unlabelled series in an exposition; NaN when absent. */
export function exposed(metrics: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
}

export interface PollingWhileFullOptions {
  server: PgServer;
  /** A directory on the small tmpfs: the store and the filler go there. */
  dir: string;
  /** How long the disk stays full. */
  fullForMs: number;
  /** collectors.interval_ms of pg_stat_user_tables, ~30 samples a table a run. */
  pollEveryMs: number;
  /** Tables made in the server's postgres database (at most 200 are polled, the default cap). */
  tables: number;
  scrapeEveryMs: number;
  /** Called with each scrape while the disk is full (the bench prints them). */
  onScrape?: (figures: FullScrape) => void;
}

export interface FullScrape {
  /** Since the disk was full. */
  elapsedMs: number;
  heapUsedBytes: number;
  loopP99Seconds: number;
  droppedSamples: number;
  backlogRows: number;
}

export interface PollingWhileFull {
  /** The highest heap used and loop p99 over a few scrapes before the disk was full, polling. */
  heapBeforeBytes: number;
  loopP99BeforeSeconds: number;
  scrapes: FullScrape[];
  /** pgvigil's exit on SIGTERM, after space came back and it committed again. */
  exit: DaemonExit;
  output: string;
}

/**
 * `pgvigil run` polling pg_stat_user_tables of `tables` tables every `pollEveryMs` with its store
 * on the tmpfs of `dir`; the filesystem is written full for `fullForMs`, scraped as it goes, then
 * freed; pgvigil is stopped with SIGTERM at the end.
 */
export async function pollWhileDiskFull(o: PollingWhileFullOptions): Promise<PollingWhileFull> {
  await o.server.query(`DO $$ BEGIN FOR i IN 1..${o.tables} LOOP EXECUTE format('CREATE TABLE IF NOT EXISTS full_disk_%s (id int)', i); END LOOP; END $$`);
  const config = join(o.dir, 'polling.yaml');
  const filler = join(o.dir, 'polling-filler');
  writeFileSync(config, stringify({
    db: join(o.dir, 'polling.db'),
    collectors: { interval_ms: { pg_stat_user_tables: o.pollEveryMs } },
    targets: [{ name: 'primary', dsn: o.server.dsn(), log: { path: o.server.logDir, start_at: 'end' } }],
  }));
  const daemon = await spawnDaemon(['--config', config]);
  try {
    const metric = async (name: string) => exposed(await daemon.metrics(), name);
    await waitUntil(async () => (await metric('pgvigil_store_rows_written_total')) > 1_000, 30_000, 'samples committed');
    let heapBeforeBytes = 0;
    let loopP99BeforeSeconds = 0;
    // Half a second apart whatever scrapeEveryMs: the store grows ~1 MB a second at this rate,
    // and what it takes of the tmpfs now is not given back when the filler is removed.
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const metrics = await daemon.metrics();
      heapBeforeBytes = Math.max(heapBeforeBytes, exposed(metrics, 'nodejs_heap_size_used_bytes'));
      loopP99BeforeSeconds = Math.max(loopP99BeforeSeconds, exposed(metrics, 'nodejs_eventloop_lag_p99_seconds'));
    }
    fillFilesystem(filler);
    await waitUntil(async () => (await metric('pgvigil_store_write_failing')) === 1, 30_000, 'pgvigil_store_write_failing 1');
    const fullSince = performance.now();
    const scrapes: FullScrape[] = [];
    while (performance.now() - fullSince < o.fullForMs) {
      await new Promise((resolve) => setTimeout(resolve, o.scrapeEveryMs));
      const metrics = await daemon.metrics();
      const scrape: FullScrape = {
        elapsedMs: Math.round(performance.now() - fullSince),
        heapUsedBytes: exposed(metrics, 'nodejs_heap_size_used_bytes'),
        loopP99Seconds: exposed(metrics, 'nodejs_eventloop_lag_p99_seconds'),
        droppedSamples: exposed(metrics, 'pgvigil_store_samples_dropped_total'),
        backlogRows: exposed(metrics, 'pgvigil_store_backlog_rows'),
      };
      scrapes.push(scrape);
      o.onScrape?.(scrape);
    }
    unlinkSync(filler);
    const committed = await metric('pgvigil_store_rows_written_total');
    await waitUntil(async () => (await metric('pgvigil_store_write_failing')) === 0 && (await metric('pgvigil_store_rows_written_total')) > committed,
      30_000, 'samples committed again once space is back');
    daemon.child.kill('SIGTERM');
    return { heapBeforeBytes, loopP99BeforeSeconds, scrapes, exit: await daemon.exit, output: daemon.output() };
  } catch (err) {
    throw new Error(`${(err as Error).message}\npgvigil output:\n${daemon.output()}`, { cause: err });
  } finally {
    if (daemon.child.exitCode === null && daemon.child.signalCode === null) daemon.child.kill('SIGKILL');
    rmSync(filler, { force: true });
  }
}
