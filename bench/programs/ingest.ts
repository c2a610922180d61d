/**
 * Live ingest as the daemon does it: the tailer reads FILE from its first byte, parses, classifies
 * and stores the events in a fresh SQLite store through the batched writer. Exits once the whole
 * file is read and committed; prints `{"bytes", "events", "seconds"}`.
 * BENCH_STORE=notable stores only classified events and WARNING+ (notableOrProblem).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { LogTailer, notableOrProblem } from '../../src/sources/log-tailer.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';

const file = process.argv[2]!;
const sizeBytes = statSync(file).size;
const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-ingest-'));
const started = performance.now();
try {
  const db = openStore(path.join(dir, 'store.db'));
  const log = silentLogger();
  const writer = new StoreWriter(db, systemClock, log);
  const tailer = new LogTailer({
    target: 'bench', source: file, format: (process.env.BENCH_FORMAT as 'stderr' | undefined) ?? 'auto', prefix: process.env.BENCH_PREFIX,
    startAt: 'beginning', savedOffset: null, writer, clock: systemClock, log, watch: false,
    storeEvent: process.env.BENCH_STORE === 'notable' ? notableOrProblem : undefined,
  });
  await writer.start();
  await tailer.start();
  while (tailer.stats().bytesRead < sizeBytes) await systemClock.sleep(20);
  await tailer.stop();
  await writer.stop();
  const events = db.prepare('SELECT count(*) FROM events').pluck().get() as number;
  db.close();
  process.stdout.write(`${JSON.stringify({ bytes: sizeBytes, events, seconds: (performance.now() - started) / 1000 })}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
