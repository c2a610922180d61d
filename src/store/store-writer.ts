/**
 * The store's single writer. Sources enqueue events, samples and tailer offsets; the writer
 * commits them in one transaction per batch (one fsync per batch, not per row), so an offset is
 * never committed without the events read up to it, and vice versa: this is what makes tailing
 * exactly-once across restarts and SIGKILL.
 *
 * A failed commit (disk full, I/O error) keeps the batch in memory and retries on the next
 * flush; sources see `accepting === false` once the backlog is over its cap and stop reading,
 * so nothing is lost and memory stays bounded.
 */
import type { Db } from './open-store.js';
import type { AnyLogEvent, Clock, Component, Sample } from '../domain/index.js';
import { labelsKey } from '../domain/index.js';

export interface TailerOffset {
  target: string;
  source: string;
  filePath: string;
  fileId: string;
  offset: number;
}

export interface WriteBatch {
  events?: AnyLogEvent[];
  samples?: Sample[];
  offsets?: TailerOffset[];
  /**
   * Marks `samples` as the complete output of one poll run; the key names the producer and its
   * scope (target, collector, database). Not stored: readers of the commit (/metrics) drop the
   * series the key's previous run had and this one lacks, while the samples table keeps history.
   */
  snapshot?: string;
}

/** Where a batch marked `snapshot` landed in FlushResult.samples: indices [start, end). */
export interface SnapshotRange {
  key: string;
  start: number;
  end: number;
}

export interface StoredEvent {
  id: number;
  event: AnyLogEvent;
}

export interface FlushResult {
  events: StoredEvent[];
  samples: Sample[];
  /** The committed batches marked `snapshot`, in commit order (empty ones included); always set by the writer. */
  snapshots?: SnapshotRange[];
}

export interface StoreWriterOptions {
  flushIntervalMs?: number;
  /** Rows pending before enqueue flushes at once. */
  batchRows?: number;
  /** Rows pending (after failed commits) past which `accepting` turns false. */
  maxBacklogRows?: number;
}

interface Logger {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class StoreWriter implements Component {
  readonly name = 'store-writer';
  private pending: WriteBatch[] = [];
  private pendingRows = 0;
  private timer: { cancel(): void } | null = null;
  private readonly seriesIds = new Map<string, number>();
  private readonly listeners: Array<(result: FlushResult) => void> = [];
  private readonly options: Required<StoreWriterOptions>;
  private failing = false;
  private lastWriteMs = 0;
  private committedRows = 0;

  private readonly insertEvent;
  private readonly insertSeries;
  private readonly selectSeries;
  private readonly insertSample;
  private readonly upsertOffset;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: StoreWriterOptions = {},
  ) {
    this.options = { flushIntervalMs: 250, batchRows: 10_000, maxBacklogRows: 200_000, ...options };
    this.insertEvent = db.prepare(
      `INSERT INTO events (target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertSeries = db.prepare('INSERT INTO series (target, name, labels) VALUES (?, ?, ?)');
    this.selectSeries = db.prepare('SELECT id FROM series WHERE target = ? AND name = ? AND labels = ?').pluck();
    // Two samples of one series in the same millisecond: the later wins.
    this.insertSample = db.prepare('INSERT OR REPLACE INTO samples (series_id, ts_ms, value) VALUES (?, ?, ?)');
    this.upsertOffset = db.prepare(
      `INSERT INTO tailer_offsets (target, source, file_path, file_id, offset, updated_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (target, source) DO UPDATE SET file_path = excluded.file_path, file_id = excluded.file_id,
         offset = excluded.offset, updated_ms = excluded.updated_ms`,
    );
  }

  async start(): Promise<void> {
    this.timer = this.clock.setInterval(() => this.flush(), this.options.flushIntervalMs);
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    this.flush();
  }

  /** False while commits fail and the backlog is over its cap: sources should pause. */
  get accepting(): boolean {
    return this.pendingRows < this.options.maxBacklogRows;
  }

  get backlogRows(): number {
    return this.pendingRows;
  }

  get stats(): { failing: boolean; lastWriteMs: number; committedRows: number } {
    return { failing: this.failing, lastWriteMs: this.lastWriteMs, committedRows: this.committedRows };
  }

  /** Called after each successful commit with what it committed (events carry their ids). */
  onFlush(listener: (result: FlushResult) => void): void {
    this.listeners.push(listener);
  }

  enqueue(batch: WriteBatch): void {
    this.pending.push(batch);
    this.pendingRows += (batch.events?.length ?? 0) + (batch.samples?.length ?? 0) + (batch.offsets?.length ?? 0);
    if (this.pendingRows >= this.options.batchRows && !this.failing) this.flush();
  }

  /** Commits everything pending in one transaction. Returns false when the commit failed. */
  flush(): boolean {
    if (this.pending.length === 0) return true;
    const batches = this.pending;
    const started = performance.now();
    let result: FlushResult;
    try {
      result = this.db.transaction(() => this.writeAll(batches))();
    } catch (err) {
      // Series rows inserted by the rolled-back transaction do not exist: forget their ids.
      this.seriesIds.clear();
      if (!this.failing) {
        this.log.error({ err, backlogRows: this.pendingRows, file: this.db.name }, 'store write failed; keeping the batch and retrying');
      }
      this.failing = true;
      return false;
    }
    if (this.failing) this.log.info({ file: this.db.name }, 'store writes succeed again');
    this.failing = false;
    this.pending = [];
    this.committedRows += this.pendingRows;
    this.pendingRows = 0;
    this.lastWriteMs = performance.now() - started;
    for (const listener of this.listeners) listener(result);
    return true;
  }

  private writeAll(batches: WriteBatch[]): FlushResult {
    const events: StoredEvent[] = [];
    const samples: Sample[] = [];
    const snapshots: SnapshotRange[] = [];
    for (const batch of batches) {
      for (const event of batch.events ?? []) {
        const info = this.insertEvent.run(
          event.target, event.tsMs, event.kind, event.level, event.sqlstate, event.pid, event.database,
          event.user, event.message, JSON.stringify(event.details), event.source.file, event.source.offset,
        );
        events.push({ id: Number(info.lastInsertRowid), event });
      }
      const start = samples.length;
      for (const sample of batch.samples ?? []) {
        this.insertSample.run(this.seriesId(sample), sample.tsMs, sample.value);
        samples.push(sample);
      }
      if (batch.snapshot !== undefined) snapshots.push({ key: batch.snapshot, start, end: samples.length });
      for (const o of batch.offsets ?? []) {
        this.upsertOffset.run(o.target, o.source, o.filePath, o.fileId, o.offset, this.clock.nowMs());
      }
    }
    return { events, samples, snapshots };
  }

  private seriesId(sample: Sample): number {
    const labels = labelsKey(sample.labels);
    const cacheKey = `${sample.target}\u0000${sample.name}\u0000${labels}`;
    const cached = this.seriesIds.get(cacheKey);
    if (cached !== undefined) return cached;
    const existing = this.selectSeries.get(sample.target, sample.name, labels) as number | undefined;
    const id = existing ?? Number(this.insertSeries.run(sample.target, sample.name, labels).lastInsertRowid);
    this.seriesIds.set(cacheKey, id);
    return id;
  }
}
