/**
 * A pgvigil-like process for the crash test: tails SOURCE into the store at STORE, resuming from
 * the saved offset, until SIGTERM (clean stop) or SIGKILL (the test's crash).
 * Usage: node --import tsx tailer-crash-child.ts STORE SOURCE
 */
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { LogTailer, readSavedOffset } from '../../src/sources/log-tailer.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { PREFIX } from './tailer-rig.js';

const [storeFile, source] = process.argv.slice(2) as [string, string];
const db = openStore(storeFile);
const log = silentLogger();
// Small, frequent batches: a SIGKILL then lands between commits, with work in flight.
const writer = new StoreWriter(db, systemClock, log, { flushIntervalMs: 10, batchRows: 50 });
const tailer = new LogTailer({
  target: 'db1', source, format: 'stderr', prefix: PREFIX, timezone: 'UTC', startAt: 'beginning',
  savedOffset: readSavedOffset(db, 'db1', source), writer, clock: systemClock, log,
  pollIntervalMs: 20, idleFlushMs: 200, chunkBytes: 4096,
});
await writer.start();
await tailer.start();
process.stdout.write('started\n');
process.once('SIGTERM', () => {
  void (async () => {
    await tailer.stop();
    await writer.stop();
    db.close();
    process.exit(0);
  })();
});
