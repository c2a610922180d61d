/**
 * Incident: pgvigil is SIGKILLed (OOM killer, node drained) in the middle of a write batch.
 * Nothing committed may be lost, the store must open cleanly, and the tailer offset must match
 * the events exactly (or a restart would skip or repeat log lines).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { testTempDir } from '../helpers/temp-dir.js';
import { openStore } from '../../src/store/open-store.js';

const BATCH_ROWS = 2000;

it('SIGKILL in the middle of write batches loses no committed batch and leaves a store that opens cleanly', async () => {
  const file = join(testTempDir('crash'), 'store.db');
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/store-writer-child.ts', file, String(BATCH_ROWS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let lastCommitted = 0;
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`child committed only ${lastCommitted} rows in 60 s`));
    }, 60_000);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      const matches = [...text.matchAll(/committed (\d+)/g)];
      if (matches.length > 0) lastCommitted = Number(matches.at(-1)![1]);
      // Kill while it is busy writing: after several batches, at an arbitrary point mid-batch.
      if (lastCommitted >= 10 * BATCH_ROWS) {
        clearTimeout(deadline);
        setTimeout(() => { child.kill('SIGKILL'); resolve(); }, 7);
      }
    });
    child.on('exit', () => { clearTimeout(deadline); resolve(); });
  });
  await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.on('exit', resolve)));
  expect(child.signalCode).toBe('SIGKILL');

  const db = openStore(file);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  const events = (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  const offset = db.prepare('SELECT offset FROM tailer_offsets').pluck().get() as number;
  expect(events).toBeGreaterThanOrEqual(lastCommitted);
  expect(events % BATCH_ROWS).toBe(0); // whole batches only
  expect(offset).toBe(events); // the offset was committed with exactly the events read up to it
  db.close();
});
