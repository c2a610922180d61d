/**
 * Retention: deletes events and samples past the configured age, then, while the store is over
 * its size budget, the oldest remaining ones. Alerts, transitions and the outbox are kept: they
 * are small and are the incident record. Deletes run in bounded chunks so a large clean-up never
 * holds the write lock for long.
 */
import type { Db } from './open-store.js';
import type { Clock, Component } from '../domain/index.js';

export interface RetentionPolicy {
  maxAgeMs: number;
  maxSizeBytes: number;
}

export interface RetentionResult {
  eventsDeleted: number;
  samplesDeleted: number;
}

const CHUNK_ROWS = 50_000;

export function applyRetention(db: Db, policy: RetentionPolicy, nowMs: number): RetentionResult {
  const cutoffMs = nowMs - policy.maxAgeMs;
  const result = deleteOlderThan(db, cutoffMs);
  // Over budget: move the cutoff forward a day at a time from the oldest data until it fits.
  for (let guard = 0; guard < 1000 && usedBytes(db) > policy.maxSizeBytes; guard++) {
    const oldest = oldestMs(db);
    if (oldest === null) break;
    const step = deleteOlderThan(db, Math.min(oldest + 86_400_000, nowMs));
    result.eventsDeleted += step.eventsDeleted;
    result.samplesDeleted += step.samplesDeleted;
    if (step.eventsDeleted + step.samplesDeleted === 0) break;
  }
  return result;
}

function deleteOlderThan(db: Db, cutoffMs: number): RetentionResult {
  const events = db.prepare(`DELETE FROM events WHERE id IN (SELECT id FROM events WHERE ts_ms < ? LIMIT ${CHUNK_ROWS})`);
  // samples is WITHOUT ROWID: chunk by its primary key.
  const samples = db.prepare(
    `DELETE FROM samples WHERE (series_id, ts_ms) IN (SELECT series_id, ts_ms FROM samples WHERE ts_ms < ? LIMIT ${CHUNK_ROWS})`,
  );
  return {
    eventsDeleted: deleteInChunks(() => events.run(cutoffMs).changes),
    samplesDeleted: deleteInChunks(() => samples.run(cutoffMs).changes),
  };
}

function deleteInChunks(deleteChunk: () => number): number {
  let total = 0;
  for (;;) {
    const deleted = deleteChunk();
    total += deleted;
    if (deleted < CHUNK_ROWS) return total;
  }
}

/** Bytes in use (pages not on the free list), so deletes count before a VACUUM shrinks the file. */
function usedBytes(db: Db): number {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const free = db.pragma('freelist_count', { simple: true }) as number;
  return (pages - free) * pageSize;
}

function oldestMs(db: Db): number | null {
  const row = db.prepare('SELECT min(ts) AS ts FROM (SELECT min(ts_ms) AS ts FROM events UNION ALL SELECT min(ts_ms) FROM samples)').get() as { ts: number | null };
  return row.ts;
}

export class RetentionJob implements Component {
  readonly name = 'retention';
  /** Runs that failed (a locked, full or broken store): retried at the next interval, and counted. */
  readonly stats = { failures: 0, rowsDeleted: 0 };
  private timer: { cancel(): void } | null = null;

  constructor(
    private readonly db: Db,
    private readonly policy: RetentionPolicy,
    private readonly clock: Clock,
    private readonly log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void },
    private readonly intervalMs = 600_000,
  ) {}

  async start(): Promise<void> {
    this.runOnce();
    this.timer = this.clock.setInterval(() => this.runOnce(), this.intervalMs);
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
  }

  runOnce(): void {
    try {
      const result = applyRetention(this.db, this.policy, this.clock.nowMs());
      this.stats.rowsDeleted += result.eventsDeleted + result.samplesDeleted;
      if (result.eventsDeleted + result.samplesDeleted > 0) this.log.info({ ...result }, 'retention removed old data');
    } catch (err) {
      this.stats.failures++;
      this.log.error({ err, file: this.db.name }, 'retention failed; will retry');
    }
  }
}
