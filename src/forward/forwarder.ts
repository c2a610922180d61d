/**
 * The forwarder (issue #13): sends what the sidecar stored to the central PostgreSQL database,
 * oldest first, one batch at a time, and moves its durable cursors only after the central commit.
 *
 * Pipelined: while the central database writes and commits batch N, batch N+1 is read from the
 * store (from where N ends), and, given a second central connection, written there at the same
 * time. The cursors still move batch by batch, in order, each only after that batch's central
 * commit. If N fails, every batch after it is dropped (waited for, never committed locally) and
 * the next try reads again from the cursors, which still stand before N; a batch after N that
 * did commit centrally is then sent again, which the central keys make a no-op.
 *
 * It must never slow the sidecar's own work: it only reads the store (plus one small cursor
 * write per committed batch), its central I/O is asynchronous with timeouts, and a central
 * database that is down, slow or full only grows the backlog, which drains (within
 * max_rows_per_second) when it returns. Failures back off exponentially with jitter.
 */
import { setImmediate as eventLoopTurn } from 'node:timers/promises';
import type { Clock, Component } from '../domain/index.js';
import { DEFAULT_BACKOFF, retryDelayMs, type BackoffOptions } from '../notify/backoff.js';
import type { CentralWriter } from './central-writer.js';
import { batchMovesCursors, batchRows, type ForwardBatch, type ForwardQueue, type ForwardStream } from './forward-queue.js';

interface Logger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface ForwarderOptions {
  /** How often to look for new rows once caught up. */
  intervalMs: number;
  /** Drain rate ceiling while catching up. */
  maxRowsPerSecond: number;
  backoff?: BackoffOptions;
  random?: () => number;
}

export interface ForwardStats {
  /** Rows waiting per stream, as of the last batch. */
  pendingRows: Readonly<Record<ForwardStream, number>> | null;
  /** Seconds since the forwarder last had nothing to send; 0 when caught up; null before the first look. */
  lagSeconds: number | null;
  forwardedRows: Readonly<Record<ForwardStream, number>>;
  /** Failed batches (central down, refused, timed out, or the store unreadable). */
  failures: number;
}

const STREAM_NAMES: readonly ForwardStream[] = ['events', 'alert_transitions', 'alerts', 'samples', 'report_minutes'];

type CentralSink = Pick<CentralWriter, 'write' | 'close'>;

interface InFlight {
  batch: ForwardBatch;
  writer: CentralSink;
  writing: Promise<void>;
}

export class Forwarder implements Component {
  readonly name = 'forwarder';
  private loop: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  private caughtUpMs: number | null = null;
  private pendingRows: Record<ForwardStream, number> | null = null;
  private readonly forwardedRows = Object.fromEntries(STREAM_NAMES.map((s) => [s, 0])) as Record<ForwardStream, number>;
  private failures = 0;
  private consecutiveFailures = 0;
  /** Batches being written centrally, oldest first; at most one per connection. */
  private readonly inFlight: InFlight[] = [];
  /** The batch after the last one in flight, read while every connection was busy; sent next. */
  private readAhead: ForwardBatch | null = null;

  /** `central`: one writer per central connection; each writes one batch at a time. */
  constructor(
    private readonly queue: ForwardQueue,
    private readonly central: readonly CentralSink[],
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: ForwarderOptions,
  ) {}

  async start(): Promise<void> {
    this.queue.init(this.clock.nowMs());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    // Ends in-flight central statements at once: their batches are simply sent again next time.
    await Promise.all(this.central.map((writer) => writer.close()));
    await this.loop;
    this.loop = null;
  }

  get stats(): ForwardStats {
    const nowMs = this.clock.nowMs();
    return {
      pendingRows: this.pendingRows,
      lagSeconds: this.caughtUpMs === null ? null : this.isCaughtUp() ? 0 : (nowMs - this.caughtUpMs) / 1000,
      forwardedRows: { ...this.forwardedRows },
      failures: this.failures,
    };
  }

  /**
   * One batch: the oldest in flight (or else the next one read and sent), waited for and its
   * cursors committed, while the batches after it are read and sent on the free connections.
   * Resolves with the rows committed (0: caught up).
   */
  async forwardOnce(): Promise<number> {
    const nowMs = this.clock.nowMs();
    try {
      if (this.inFlight.length === 0) {
        const batch = this.readAhead ?? this.queue.next(nowMs);
        this.readAhead = null;
        if (batchRows(batch) === 0) {
          // Only empty sample windows: nothing to send, and every earlier batch is committed.
          if (batchMovesCursors(batch)) this.queue.commit(batch, this.clock.nowMs());
          return 0;
        }
        this.launch(batch, nowMs);
      }
      return await this.commitOldest(nowMs);
    } catch (err) {
      this.failures++;
      throw err;
    } finally {
      // Also after a failure: the backlog grows while the central database is away.
      this.pendingRows = this.queue.pending(this.clock.nowMs());
      if (this.isCaughtUp() || this.caughtUpMs === null) this.caughtUpMs = this.clock.nowMs();
    }
  }

  private async commitOldest(nowMs: number): Promise<number> {
    const oldest = this.inFlight[0]!;
    const filling = this.fill(nowMs);
    try {
      await oldest.writing;
      this.queue.commit(oldest.batch, this.clock.nowMs());
    } catch (err) {
      await filling;
      await this.dropAll();
      throw err;
    }
    this.inFlight.shift();
    this.count(oldest.batch);
    await filling;
    return batchRows(oldest.batch);
  }

  /** Reads the batches after the last one in flight, sending each while a connection is free. */
  private async fill(nowMs: number): Promise<void> {
    for (;;) {
      if (this.readAhead !== null) {
        if (this.inFlight.length >= this.central.length) return;
        this.launch(this.readAhead, nowMs);
        this.readAhead = null;
      }
      const next = await this.readAfter(this.inFlight.at(-1)!.batch, nowMs);
      if (next === null || batchRows(next) === 0) return;
      this.readAhead = next;
    }
  }

  private launch(batch: ForwardBatch, nowMs: number): void {
    const writer = this.central.find((w) => !this.inFlight.some((f) => f.writer === w))!;
    const writing = writer.write(batch, nowMs);
    // Awaited in order by commitOldest(); until then a failure must not count as unhandled.
    writing.catch(() => undefined);
    this.inFlight.push({ batch, writer, writing });
  }

  /**
   * After a failure: every batch in flight or read ahead is dropped, once its write ended (a
   * connection writes one batch at a time). Those after the failed one may have committed
   * centrally; sent again from the cursors, the central keys make them no-ops.
   */
  private async dropAll(): Promise<void> {
    const dropped = this.inFlight.splice(0);
    this.readAhead = null;
    await Promise.allSettled(dropped.map((f) => f.writing));
  }

  /**
   * The next batch, read between turns of the event loop so the COPY in flight keeps flowing.
   * Null when the read failed: the next forwardOnce() reads it again from the cursors, and
   * that error is the one it reports and counts.
   */
  private async readAfter(batch: ForwardBatch, nowMs: number): Promise<ForwardBatch | null> {
    try {
      return await this.queue.nextAfter(batch, nowMs, eventLoopTurn);
    } catch {
      return null;
    }
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      let rows = 0;
      try {
        rows = await this.forwardOnce();
        if (this.consecutiveFailures > 0) this.log.info({ failedBatches: this.consecutiveFailures }, 'forwarding to the central database works again');
        this.consecutiveFailures = 0;
      } catch (err) {
        if (signal.aborted) break;
        this.consecutiveFailures++;
        // Once per outage, and again as the backoff grows: not once per retry.
        if (Number.isInteger(Math.log2(this.consecutiveFailures))) {
          this.log.warn({ err, failedBatches: this.consecutiveFailures }, 'forwarding to the central database failed; the store keeps everything and it is retried');
        }
        await this.clock.sleep(retryDelayMs(this.consecutiveFailures, this.options.backoff ?? DEFAULT_BACKOFF, this.options.random ?? Math.random), signal);
        continue;
      }
      const restMs = rows === 0 ? this.options.intervalMs : (rows / this.options.maxRowsPerSecond) * 1000;
      await this.clock.sleep(restMs, signal);
    }
  }

  private isCaughtUp(): boolean {
    return this.pendingRows !== null && STREAM_NAMES.every((s) => this.pendingRows![s] === 0);
  }

  private count(batch: ForwardBatch): void {
    this.forwardedRows.events += batch.events.length;
    this.forwardedRows.alert_transitions += batch.transitions.length;
    this.forwardedRows.alerts += batch.alerts.length;
    this.forwardedRows.samples += batch.samples.length;
    this.forwardedRows.report_minutes += batch.reportMinutes.length;
  }
}
