/**
 * The store's single writer. Sources enqueue events, samples and tailer offsets; the writer
 * commits them in one transaction per batch (one fsync per batch, not per row), so an offset is
 * never committed without the events read up to it, and vice versa: this is what makes tailing
 * exactly-once across restarts and SIGKILL.
 *
 * A failed commit (disk full, I/O error, another process holding the write lock) keeps the
 * batches in memory (pending-batches.ts) and retries with a growing delay, each attempt a chunk of
 * at most `batchRows` rows; the first that succeeds commits the rest. The tailer sees
 * `accepting === false` once the log rows held are over their cap and stops reading, so no log
 * line is lost; pollers cannot wait, so the samples held are bounded and the oldest are dropped
 * (counted, said once per failing streak). Memory stays bounded either way.
 *
 * Series rows: identity labels only, descriptive ones in `info` (series-identity.ts), and the
 * coarse time of the newest sample in `seen_ms`; both are updated only when they change, from
 * what the writer caches per series (forgotten whenever retention deletes series rows).
 */
import type { Db } from './open-store.js';
import type { AnyLogEvent, Clock, Component, Sample } from '../domain/index.js';
import { labelsKey } from '../domain/index.js';
import { PendingBatches, rowsOf } from './pending-batches.js';
import { ReportMinutesTable, type ReportMinuteRow } from './report-minutes.js';
import { SEEN_STEP_MS, splitLabels } from './series-identity.js';

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
   * The log report's states of the events this batch was read with, one row per target and
   * minute (src/report/log-report/minute-folds.ts): committed with the offset, so each line read
   * is in the report once, statement lines included though `events` leaves them out.
   */
  reportMinutes?: ReportMinuteRow[];
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
  /** Log rows (events, offsets, report minutes) pending past which `accepting` turns false. */
  maxBacklogRows?: number;
  /** Samples held past which the oldest sample batches are dropped (pending-batches.ts). */
  maxHeldSamples?: number;
  /** Longest wait between two commit attempts while commits fail; the first waits flushIntervalMs. */
  maxRetryDelayMs?: number;
}

/**
 * 100,000 samples: about 18 MB of heap at the 183 bytes a held sample with three labels
 * measured (Node 20), the same order as the 200,000 log rows the tailer may hold. At default
 * intervals about 4 minutes of one database with 200 tables (pg_stat_user_tables alone sends
 * ~400 samples a second for it); a longer outage keeps the newest. Not configurable: a memory
 * budget, not a tuning knob.
 */
const MAX_HELD_SAMPLES = 100_000;

/** What the writer knows a series row holds. */
interface CachedSeries {
  id: number;
  /** series.seen_ms as stored (coarse). */
  seenMs: number | null;
  /** The newest sample time written through this cache entry (at least seenMs). */
  newestMs: number;
  info: string | null;
}

const MAX_CACHED_SERIES = 500_000;

interface Logger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export class StoreWriter implements Component {
  readonly name = 'store-writer';
  private readonly pending: PendingBatches;
  private timer: { cancel(): void } | null = null;
  private readonly seriesRows = new Map<string, CachedSeries>();
  /** series_retirement.generation when seriesRows was filled; null: not read yet. */
  private retirementGeneration: number | null = null;
  private readonly listeners: Array<(result: FlushResult) => void> = [];
  private readonly options: Required<StoreWriterOptions>;
  private failing = false;
  /** Failed attempts since the last commit; sets the delay before the next. */
  private failedAttempts = 0;
  /** Monotonic time before which the timer makes no attempt while failing. */
  private retryAtMs = 0;
  /** Samples dropped since the last commit; a drop is said once per streak. */
  private droppedInStreak = 0;
  private droppedSamples = 0;
  private lastWriteMs = 0;
  private committedRows = 0;

  private readonly insertEvent;
  private readonly insertSeries;
  private readonly selectSeries;
  private readonly insertSample;
  private readonly updateSeen;
  private readonly updateInfo;
  private readonly selectGeneration;
  private readonly upsertOffset;
  private readonly reportMinutes: ReportMinutesTable;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: Logger,
    options: StoreWriterOptions = {},
  ) {
    this.options = { flushIntervalMs: 250, batchRows: 10_000, maxBacklogRows: 200_000, maxHeldSamples: MAX_HELD_SAMPLES, maxRetryDelayMs: 4_000, ...options };
    this.pending = new PendingBatches(this.options.maxHeldSamples);
    this.insertEvent = db.prepare(
      `INSERT INTO events (target, ts_ms, kind, level, sqlstate, pid, database, user_name, message, details, source_file, source_offset, language)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertSeries = db.prepare('INSERT INTO series (target, name, labels, seen_ms, info) VALUES (?, ?, ?, ?, ?)');
    this.selectSeries = db.prepare('SELECT id, seen_ms AS seenMs, info FROM series WHERE target = ? AND name = ? AND labels = ?');
    this.updateSeen = db.prepare('UPDATE series SET seen_ms = ? WHERE id = ?');
    this.updateInfo = db.prepare('UPDATE series SET info = ? WHERE id = ?');
    this.selectGeneration = db.prepare('SELECT generation FROM series_retirement').pluck();
    // Two samples of one series in the same millisecond: the later wins.
    this.insertSample = db.prepare('INSERT OR REPLACE INTO samples (series_id, ts_ms, value) VALUES (?, ?, ?)');
    this.reportMinutes = new ReportMinutesTable(db);
    this.upsertOffset = db.prepare(
      `INSERT INTO tailer_offsets (target, source, file_path, file_id, offset, updated_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (target, source) DO UPDATE SET file_path = excluded.file_path, file_id = excluded.file_id,
         offset = excluded.offset, updated_ms = excluded.updated_ms`,
    );
  }

  async start(): Promise<void> {
    this.timer = this.clock.setInterval(() => this.flushWhenDue(), this.options.flushIntervalMs);
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    this.flush();
  }

  /** False while commits fail and the log rows held are over their cap: the tailer should pause. */
  get accepting(): boolean {
    return this.pending.logRows < this.options.maxBacklogRows;
  }

  get backlogRows(): number {
    return this.pending.rows;
  }

  get stats(): { failing: boolean; lastWriteMs: number; committedRows: number; droppedSamples: number } {
    return { failing: this.failing, lastWriteMs: this.lastWriteMs, committedRows: this.committedRows, droppedSamples: this.droppedSamples };
  }

  /** Called after each successful commit with what it committed (events carry their ids). */
  onFlush(listener: (result: FlushResult) => void): void {
    this.listeners.push(listener);
  }

  enqueue(batch: WriteBatch): void {
    const dropped = this.pending.push(batch);
    if (dropped.batches > 0) this.dropped(dropped.samples);
    if (this.pending.rows >= this.options.batchRows && !this.failing) this.flush();
  }

  /**
   * Commits everything pending, in transactions of at most `batchRows` rows. Returns false when a
   * commit failed: what it held stays pending. While commits fail, the first chunk is the probe:
   * a failing store costs one chunk's work per attempt, not the whole backlog's.
   */
  flush(): boolean {
    while (this.pending.size > 0) {
      if (!this.commitOldest()) return false;
    }
    return true;
  }

  /** The timer's flush: while commits fail, attempts wait flushIntervalMs, then twice that, up to maxRetryDelayMs. */
  private flushWhenDue(): void {
    if (this.failing && this.clock.monotonicMs() < this.retryAtMs) return;
    this.flush();
  }

  private commitOldest(): boolean {
    const batches = this.pending.oldest(this.options.batchRows);
    const started = performance.now();
    let result: FlushResult;
    try {
      result = this.db.transaction(() => this.writeAll(batches))();
    } catch (err) {
      // Series rows inserted (or updated) by the rolled-back transaction do not exist: forget them.
      this.seriesRows.clear();
      this.failed(err);
      return false;
    }
    if (this.failing) this.log.info({ file: this.db.name, droppedSamples: this.droppedInStreak }, 'store writes succeed again');
    this.failing = false;
    this.failedAttempts = 0;
    this.droppedInStreak = 0;
    this.pending.removeOldest(batches.length);
    this.committedRows += batches.reduce((rows, batch) => rows + rowsOf(batch), 0);
    this.lastWriteMs = performance.now() - started;
    for (const listener of this.listeners) listener(result);
    return true;
  }

  private failed(err: unknown): void {
    if (!this.failing) {
      this.log.error({ err, backlogRows: this.pending.rows, file: this.db.name }, 'store write failed; keeping the batch and retrying');
    }
    this.failing = true;
    this.failedAttempts++;
    const delayMs = Math.min(this.options.maxRetryDelayMs, this.options.flushIntervalMs * 2 ** Math.min(this.failedAttempts - 1, 20));
    this.retryAtMs = this.clock.monotonicMs() + delayMs;
  }

  private dropped(samples: number): void {
    if (this.droppedInStreak === 0) {
      this.log.warn({ file: this.db.name, heldSamplesMax: this.options.maxHeldSamples, failing: this.failing },
        'store cannot keep up; dropping the oldest samples held (log events are kept: the tailer waits)');
    }
    this.droppedInStreak += samples;
    this.droppedSamples += samples;
  }

  private writeAll(batches: WriteBatch[]): FlushResult {
    const events: StoredEvent[] = [];
    const samples: Sample[] = [];
    const snapshots: SnapshotRange[] = [];
    // A read first, in a deferred transaction: when another process holds the write lock
    // (`pgvigil silence`, a store drain), SQLite then fails the first write with SQLITE_BUSY at
    // once instead of sleeping the connection's busy_timeout (5 s) on the event loop; the writer
    // retries on its own schedule. A transaction that began with a write would wait (measured: 5.06 s).
    const generation = this.selectGeneration.get() as number;
    if (generation !== this.retirementGeneration) {
      this.seriesRows.clear();
      this.retirementGeneration = generation;
    }
    for (const batch of batches) {
      for (const event of batch.events ?? []) {
        const info = this.insertEvent.run(
          event.target, event.tsMs, event.kind, event.level, event.sqlstate, event.pid, event.database,
          event.user, event.message, JSON.stringify(event.details), event.source.file, event.source.offset, event.language ?? null,
        );
        events.push({ id: Number(info.lastInsertRowid), event });
      }
      const start = samples.length;
      for (const sample of batch.samples ?? []) {
        this.insertSample.run(this.seriesId(sample), sample.tsMs, sample.value);
        samples.push(sample);
      }
      if (batch.snapshot !== undefined) snapshots.push({ key: batch.snapshot, start, end: samples.length });
      for (const row of batch.reportMinutes ?? []) this.reportMinutes.insert(row);
      for (const o of batch.offsets ?? []) {
        this.upsertOffset.run(o.target, o.source, o.filePath, o.fileId, o.offset, this.clock.nowMs());
      }
    }
    return { events, samples, snapshots };
  }

  /** The sample's series row, created or brought up to date (seen_ms, info). */
  private seriesId(sample: Sample): number {
    const { identity, info } = splitLabels(sample.name, sample.labels);
    const labels = labelsKey(identity);
    const infoKey = info === null ? null : labelsKey(info);
    const cacheKey = `${sample.target}\u0000${sample.name}\u0000${labels}`;
    let row = this.seriesRows.get(cacheKey) ?? this.storedSeries(sample.target, sample.name, labels);
    if (row === undefined) {
      const id = Number(this.insertSeries.run(sample.target, sample.name, labels, sample.tsMs, infoKey).lastInsertRowid);
      row = { id, seenMs: sample.tsMs, newestMs: sample.tsMs, info: infoKey };
    } else {
      if (row.seenMs === null || sample.tsMs >= row.seenMs + SEEN_STEP_MS) {
        this.updateSeen.run(sample.tsMs, row.id);
        row.seenMs = sample.tsMs;
      }
      // The newest sample's description wins; a late sample of an earlier time does not undo it.
      if (sample.tsMs >= row.newestMs) {
        row.newestMs = sample.tsMs;
        if (infoKey !== row.info) {
          this.updateInfo.run(infoKey, row.id);
          row.info = infoKey;
        }
      }
    }
    // Bounded even between retention runs: a miss costs one indexed lookup.
    if (this.seriesRows.size >= MAX_CACHED_SERIES) this.seriesRows.clear();
    this.seriesRows.set(cacheKey, row);
    return row.id;
  }

  private storedSeries(target: string, name: string, labels: string): CachedSeries | undefined {
    const row = this.selectSeries.get(target, name, labels) as { id: number; seenMs: number | null; info: string | null } | undefined;
    return row && { ...row, newestMs: row.seenMs ?? -Infinity };
  }
}
