/**
 * `pgvigil central forward`: forwards what one store holds and was not forwarded yet, batch by
 * batch, until nothing is left. The same queue, cursors and central writer as the daemon's
 * forwarder, so running it again (or after a SIGKILL) sends only what is missing. A central
 * database that goes away mid-run is retried with backoff, up to maxFailures in a row.
 */
import type pg from 'pg';
import type { Clock } from '../domain/index.js';
import { retryDelayMs } from '../notify/backoff.js';
import { openStore } from '../store/open-store.js';
import { centralWriters } from './central-writer.js';
import { ForwardQueue } from './forward-queue.js';
import { Forwarder } from './forwarder.js';

export interface DrainOptions {
  batchRows: number;
  clock: Clock;
  /** Failed batches in a row before giving up. */
  maxFailures: number;
  /** Downsampling step of samples; default 1 minute. */
  stepMs?: number;
  onRetry?: (err: unknown, failures: number) => void;
}

const DRAIN_BACKOFF = { baseMs: 500, maxMs: 10_000 };
const DRAIN_CONNECTIONS = 2;

/** Returns the rows sent. */
export async function drainStore(file: string, client: pg.ClientConfig, options: DrainOptions): Promise<number> {
  const db = openStore(file);
  try {
    // No grace: a store nobody writes to any more has every step complete.
    const queue = new ForwardQueue(db, { batchRows: options.batchRows, stepMs: options.stepMs ?? 60_000, graceMs: 0 });
    const targets = db.prepare('SELECT DISTINCT target FROM events UNION SELECT DISTINCT target FROM alerts').pluck().all() as string[];
    // Two connections: the central database writes one batch while it receives the next.
    const central = centralWriters(DRAIN_CONNECTIONS, { client, storeId: queue.storeId, targets: targets.map((name) => ({ name, cluster: null })) });
    const forwarder = new Forwarder(queue, central, options.clock, { info() {}, warn() {} }, { intervalMs: 0, maxRowsPerSecond: Infinity });
    queue.init(options.clock.nowMs());
    let sent = 0;
    let failures = 0;
    try {
      for (;;) {
        try {
          const rows = await forwarder.forwardOnce();
          if (rows === 0) return sent;
          sent += rows;
          failures = 0;
        } catch (err) {
          if (++failures >= options.maxFailures) throw err;
          options.onRetry?.(err, failures);
          await options.clock.sleep(retryDelayMs(failures, DRAIN_BACKOFF, Math.random));
        }
      }
    } finally {
      await Promise.all(central.map((writer) => writer.close()));
    }
  } finally {
    db.close();
  }
}
