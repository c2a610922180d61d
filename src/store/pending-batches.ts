/**
 * What the store writer holds until a commit takes it: write batches in arrival order, counted.
 *
 * Samples are the only rows it may drop. A poller has no backpressure (it polls on its schedule
 * whatever the store does) and its newest values matter most, so while commits fail the held
 * samples are bounded: past `maxHeldSamples`, the oldest sample-only batches go first. A batch
 * with events, tailer offsets or report minutes is never dropped: an offset must stay with the
 * events read up to it, and the tailer stops reading on `logRows` instead, so no log line is lost.
 * Pure bookkeeping: no I/O, no clock.
 */
import type { WriteBatch } from './store-writer.js';

export function rowsOf(batch: WriteBatch): number {
  return (batch.events?.length ?? 0) + (batch.samples?.length ?? 0) + (batch.offsets?.length ?? 0) + (batch.reportMinutes?.length ?? 0);
}

/** A batch of samples only: a poll run's output, droppable. */
function isSampleOnly(batch: WriteBatch): boolean {
  return (batch.events?.length ?? 0) === 0 && (batch.offsets?.length ?? 0) === 0 && (batch.reportMinutes?.length ?? 0) === 0;
}

/**
 * What a sample-only batch weighs against the bound: its samples, and at least one, as a run
 * that found nothing still sends an (empty) snapshot batch and a fast poll sends many.
 */
function heldWeight(batch: WriteBatch): number {
  return Math.max(1, batch.samples?.length ?? 0);
}

export interface Dropped {
  batches: number;
  samples: number;
}

export class PendingBatches {
  private batches: WriteBatch[] = [];
  /** Every row held (the backlog). */
  private allRows = 0;
  /** Rows of batches that are never dropped: events, offsets, report minutes (and samples sent with them). */
  private keptRows = 0;
  /** Sum of heldWeight over the sample-only batches held. */
  private heldSamples = 0;

  constructor(private readonly maxHeldSamples: number) {}

  get size(): number {
    return this.batches.length;
  }

  get rows(): number {
    return this.allRows;
  }

  /** Rows the tailer's backpressure is about: everything but droppable samples. */
  get logRows(): number {
    return this.keptRows;
  }

  /**
   * Holds the batch, then drops the oldest sample-only batches while the samples held are over the
   * bound. The batch just pushed is never dropped, so a single run larger than the bound is still
   * stored when the store writes again.
   */
  push(batch: WriteBatch): Dropped {
    this.batches.push(batch);
    this.count(batch, 1);
    return this.heldSamples > this.maxHeldSamples ? this.dropOldestSamples() : { batches: 0, samples: 0 };
  }

  /** The oldest batches holding at most `maxRows` rows together, and at least one batch. */
  oldest(maxRows: number): WriteBatch[] {
    let rows = 0;
    let end = 0;
    while (end < this.batches.length) {
      rows += rowsOf(this.batches[end]!);
      if (rows > maxRows && end > 0) break;
      end++;
    }
    return this.batches.slice(0, end);
  }

  /** Forgets the `count` oldest batches (committed). */
  removeOldest(count: number): void {
    for (const batch of this.batches.splice(0, count)) this.count(batch, -1);
  }

  private dropOldestSamples(): Dropped {
    const dropped: Dropped = { batches: 0, samples: 0 };
    const newest = this.batches.length - 1;
    this.batches = this.batches.filter((batch, i) => {
      if (this.heldSamples <= this.maxHeldSamples || i === newest || !isSampleOnly(batch)) return true;
      this.count(batch, -1);
      dropped.batches++;
      dropped.samples += batch.samples?.length ?? 0;
      return false;
    });
    return dropped;
  }

  private count(batch: WriteBatch, sign: 1 | -1): void {
    const rows = rowsOf(batch);
    this.allRows += sign * rows;
    if (isSampleOnly(batch)) this.heldSamples += sign * heldWeight(batch);
    else this.keptRows += sign * rows;
  }
}
