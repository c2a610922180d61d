/**
 * The forwarder of `pgvigil run`, when `forward.postgres` is configured; null otherwise.
 */
import type { Config } from '../config/load-config.js';
import type { Clock } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import type { Db } from '../store/open-store.js';
import { centralClientConfig } from './central-client-config.js';
import { centralWriters } from './central-writer.js';
import { ForwardQueue } from './forward-queue.js';
import { Forwarder } from './forwarder.js';

/** Samples are a poll late at most: a step is forwarded once it ended this long ago. */
const SAMPLE_GRACE_MS = 30_000;

export function buildForwarder(config: Config, db: Db, clock: Clock, log: Logger): Forwarder | null {
  const forward = config.forward.postgres;
  if (forward === null) return null;
  const queue = new ForwardQueue(db, { batchRows: forward.batchRows, stepMs: forward.stepMs, graceMs: SAMPLE_GRACE_MS });
  const central = centralWriters(forward.connections, {
    client: centralClientConfig(forward),
    storeId: queue.storeId,
    targets: config.targets.map((t) => ({ name: t.name, cluster: t.cluster })),
  });
  return new Forwarder(queue, central, clock, log, { intervalMs: forward.intervalMs, maxRowsPerSecond: forward.maxRowsPerSecond });
}
