/**
 * A tailer wired to a real store in a temp directory, for the tailer integration tests: log lines
 * with a sequence number in the message, and helpers to read back what was stored.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../src/lib/logger.js';
import { LogTailer, readSavedOffset, type LogTailerOptions, type TailerWriter } from '../../src/sources/log-tailer.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { ManualClock } from '../helpers/manual-clock.js';

export const PREFIX = '%m [%p] %q%u@%d ';
const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);

/** One stderr log line whose message carries `seq`, so a stored event names the line it came from. */
export function logLine(seq: number, pid = 4242): string {
  const ts = new Date(T0 + seq * 10).toISOString().replace('T', ' ').replace('Z', ' UTC');
  return `${ts} [${pid}] app@shop LOG:  statement: SELECT ${seq}\n`;
}

export function logLines(from: number, to: number, pid?: number): string {
  let text = '';
  for (let seq = from; seq < to; seq++) text += logLine(seq, pid);
  return text;
}

export function tempDir(name: string): string {
  return mkdtempSync(path.join(os.tmpdir(), `pgvigil-${name}-`));
}

export const LOG_FILENAME = 'postgresql-%Y-%m-%d_%H%M%S.log';

/** A log_directory whose first file (minute 0) holds entries 0..9, with an old mtime. */
export function logDirectory(name: string): { dir: string; logDir: string; file: (minute: number) => string } {
  const dir = tempDir(name);
  const logDir = path.join(dir, 'log');
  mkdirSync(logDir);
  const file = (minute: number): string => path.join(logDir, `postgresql-2026-10-14_03${String(minute).padStart(2, '0')}00.log`);
  writeFileSync(file(0), logLines(0, 10));
  utimesSync(file(0), 1000, 1000);
  return { dir, logDir, file };
}

/** Sequence numbers stored, in the order they were stored. */
export function storedSeqs(db: Db): number[] {
  const rows = db.prepare(`SELECT message FROM events ORDER BY id`).pluck().all() as string[];
  return rows.map((m) => Number(/SELECT (\d+)/.exec(m)?.[1] ?? NaN));
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i);
}

/** Polls `condition` (running `step` between polls) until it holds; fails after the deadline. */
export async function waitFor(condition: () => boolean, what: string, step?: () => Promise<void>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await step?.();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export interface Rig {
  dir: string;
  db: Db;
  clock: ManualClock;
  writer: StoreWriter;
  tailer: LogTailer;
  append(file: string, text: string): void;
  /** Commits what the writer holds and returns the stored sequence numbers. */
  seqs(): number[];
  /**
   * Lets time run (the manual clock steps past the idle flush between polls) until the store
   * holds as many events as `expected`, then checks they are exactly `expected`.
   */
  expectSeqs(expected: number[], what?: string): Promise<void>;
  /** Steps the clock past the idle-flush delay (and the poll interval). */
  idle(): Promise<void>;
  /** Stops the tailer, runs `whileDown` (what happens while pgvigil is not running), starts a new one from the saved position. */
  restart(overrides?: Partial<LogTailerOptions>, whileDown?: () => void): Promise<void>;
  close(): Promise<void>;
}

export interface RigOptions extends Partial<LogTailerOptions> {
  source: string;
  /** Puts something between the tailer and the real writer (a gate for back-pressure tests). */
  wrapWriter?: (writer: StoreWriter) => TailerWriter;
}

export async function startRig(dir: string, rigOptions: RigOptions): Promise<Rig> {
  const { wrapWriter, ...options } = rigOptions;
  const db = openStore(path.join(dir, 'store.db'));
  const clock = new ManualClock(T0 + 3_600_000);
  const log = silentLogger();
  const writer = new StoreWriter(db, clock, log);
  await writer.start();
  const make = (overrides: Partial<LogTailerOptions> = {}): LogTailer => new LogTailer({
    target: 'db1', format: 'stderr', prefix: PREFIX, timezone: 'UTC', startAt: 'beginning', watch: false,
    writer: wrapWriter ? wrapWriter(writer) : writer, clock, log, savedOffset: readSavedOffset(db, 'db1', options.source), ...options, ...overrides,
  });
  const rig: Rig = {
    dir, db, clock, writer, tailer: make(),
    append: (file, text) => appendFileSync(file, text),
    seqs: () => {
      writer.flush();
      return storedSeqs(db);
    },
    async expectSeqs(expected, what = `stored ${expected.length} events`) {
      let last: number[] = [];
      try {
        await waitFor(() => {
          last = rig.seqs();
          return last.length >= expected.length;
        }, what, () => rig.idle());
      } catch (err) {
        throw new Error(`${(err as Error).message}; stored: ${JSON.stringify(last.slice(-20))} (${last.length})`);
      }
      const stored = rig.seqs();
      if (JSON.stringify(stored) !== JSON.stringify(expected)) {
        throw new Error(`${what}: expected ${JSON.stringify(expected)}, stored ${JSON.stringify(stored)}`);
      }
    },
    async idle() {
      await clock.advance(1_100);
      rig.tailer.wake();
    },
    async restart(overrides, whileDown) {
      await rig.tailer.stop();
      writer.flush();
      whileDown?.();
      rig.tailer = make({ savedOffset: readSavedOffset(db, 'db1', options.source), ...overrides });
      await rig.tailer.start();
    },
    async close() {
      await rig.tailer.stop();
      await writer.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await rig.tailer.start();
  return rig;
}
