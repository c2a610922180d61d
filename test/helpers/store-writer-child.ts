/**
 * Child process for the crash test: writes batches of BATCH_ROWS events as fast as it can and
 * prints "committed <total>" after each commit, until it is killed.
 */
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';

const [file, batchRowsArg] = process.argv.slice(2);
const batchRows = Number(batchRowsArg);
const db = openStore(file!);
const writer = new StoreWriter(db, systemClock, silentLogger(), { batchRows: Number.MAX_SAFE_INTEGER });
let total = 0;
for (let batch = 0; ; batch++) {
  for (let i = 0; i < batchRows; i++) {
    writer.enqueue({
      events: [{
        kind: 'generic', target: 'crash', tsMs: Date.now(), pid: process.pid, database: null, user: null, level: 'LOG',
        sqlstate: null, message: `batch ${batch} row ${i} ${'x'.repeat(300)}`, details: { classified: false },
        source: { file: 'crash.log', offset: total + i, line: null },
      }],
    });
  }
  writer.enqueue({ offsets: [{ target: 'crash', source: 'crash.log', filePath: 'crash.log', fileId: '0:0', offset: total + batchRows }] });
  writer.flush();
  total += batchRows;
  process.stdout.write(`committed ${total}\n`);
}
