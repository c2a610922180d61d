/**
 * A primary that keeps writing (a row into `wal_ticks` every `everyMs`) while a scenario makes
 * replay wait, so received WAL piles up behind the waiting record. The caller creates the table.
 */
import { openSession } from '../integration/collectors-rig.js';
import type { PgServer } from './pg-harness.js';

export interface WalTicker {
  /** Stops writing, waits for the last write, closes the session. */
  stop(): Promise<void>;
}

export async function startWalTicker(primary: PgServer, everyMs: number): Promise<WalTicker> {
  const ticker = await openSession(primary);
  let writing = true;
  const ticks = (async () => {
    while (writing) {
      await ticker.client.query('INSERT INTO wal_ticks VALUES (now())');
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      writing = false;
      try {
        await ticks;
      } finally {
        await ticker.client.end().catch(() => undefined);
      }
    },
  };
}
