/**
 * A batch of events as a worker sends it when only a summary is made: generic events, most of a
 * log, as runs (consecutive ones of one minute, level and SQLSTATE, analyze-summary.ts) in typed
 * arrays moved without copying, the others as objects. A busy log's generic events come to a few
 * runs per minute, so neither the copy between threads nor the summary costs anything per event.
 *
 * Owns: the encoding and its inverse. Never: what a run means to the summary.
 */
import type { AnyLogEvent } from '../domain/index.js';
import type { LogLevel } from '../domain/log-entry.js';
import { MINUTE_MS, minuteStartMs, type GenericRun } from '../report/analyze-summary.js';

const LEVELS: readonly LogLevel[] = ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'LOG', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'FATAL', 'PANIC'];
const LEVEL_CODES = new Map(LEVELS.map((level, i) => [level, i]));

export interface ColumnBatch {
  /** Per item in order: the index in `others`, or -1 for the next run. */
  order: Int32Array;
  counts: Int32Array;
  minTsMs: Float64Array;
  maxTsMs: Float64Array;
  levels: Uint8Array;
  /** Indexes (among runs) of those with a SQLSTATE, and their SQLSTATEs: most have none. */
  sqlstateAt: Int32Array;
  sqlstates: string[];
  others: AnyLogEvent[];
}

/** Collects events as they are parsed: a generic event joins the run before it when it can, and is not kept. */
export class ColumnBatchBuilder {
  private order: number[] = [];
  private counts: number[] = [];
  private minTsMs: number[] = [];
  private maxTsMs: number[] = [];
  private levels: number[] = [];
  private sqlstateAt: number[] = [];
  private sqlstates: string[] = [];
  private others: AnyLogEvent[] = [];
  /** The run the next generic event may join: none after another event. */
  private open = -1;
  private openLevel: LogLevel = 'LOG';
  private openMinuteMs = 0;
  private openSqlstate: string | null = null;

  get size(): number {
    return this.order.length;
  }

  push(event: AnyLogEvent): void {
    if (event.kind !== 'generic') {
      this.order.push(this.others.length);
      this.others.push(event);
      this.open = -1;
      return;
    }
    const tsMs = event.tsMs;
    const run = this.open;
    // Most events join the run before them: compared as they come, no division or lookup.
    if (run >= 0 && event.level === this.openLevel && event.sqlstate === this.openSqlstate && tsMs >= this.openMinuteMs && tsMs < this.openMinuteMs + MINUTE_MS) {
      this.counts[run]!++;
      if (tsMs < this.minTsMs[run]!) this.minTsMs[run] = tsMs;
      if (tsMs > this.maxTsMs[run]!) this.maxTsMs[run] = tsMs;
      return;
    }
    this.open = this.counts.length;
    this.openLevel = event.level;
    this.openMinuteMs = minuteStartMs(tsMs);
    this.openSqlstate = event.sqlstate;
    this.order.push(-1);
    this.counts.push(1);
    this.minTsMs.push(tsMs);
    this.maxTsMs.push(tsMs);
    this.levels.push(LEVEL_CODES.get(event.level)!);
    if (event.sqlstate !== null) {
      this.sqlstateAt.push(this.open);
      this.sqlstates.push(event.sqlstate);
    }
  }

  /** The batch so far; the builder starts over empty. */
  take(): ColumnBatch {
    const batch: ColumnBatch = {
      order: Int32Array.from(this.order), counts: Int32Array.from(this.counts), minTsMs: Float64Array.from(this.minTsMs),
      maxTsMs: Float64Array.from(this.maxTsMs), levels: Uint8Array.from(this.levels), sqlstateAt: Int32Array.from(this.sqlstateAt),
      sqlstates: this.sqlstates, others: this.others,
    };
    this.order = [];
    this.counts = [];
    this.minTsMs = [];
    this.maxTsMs = [];
    this.levels = [];
    this.sqlstateAt = [];
    this.sqlstates = [];
    this.others = [];
    this.open = -1;
    return batch;
  }
}

/** The buffers a ColumnBatch can hand over to another thread instead of copying. */
export function transferablesOf(batch: ColumnBatch): ArrayBuffer[] {
  return [batch.order, batch.counts, batch.minTsMs, batch.maxTsMs, batch.levels, batch.sqlstateAt].map((array) => array.buffer as ArrayBuffer);
}

/**
 * Calls `onEvent` with every other event and `onRun` with every run, in order. A run is one
 * object refilled for each: it is valid only during the call.
 */
export function forEachDecoded(batch: ColumnBatch, onEvent: (event: AnyLogEvent) => void, onRun: (run: GenericRun) => void): void {
  const run: GenericRun = { level: 'LOG', sqlstate: null, count: 0, minTsMs: 0, maxTsMs: 0 };
  let r = 0;
  let s = 0;
  for (let i = 0; i < batch.order.length; i++) {
    const other = batch.order[i]!;
    if (other >= 0) {
      onEvent(batch.others[other]!);
      continue;
    }
    run.level = LEVELS[batch.levels[r]!]!;
    run.sqlstate = batch.sqlstateAt[s] === r ? batch.sqlstates[s++]! : null;
    run.count = batch.counts[r]!;
    run.minTsMs = batch.minTsMs[r]!;
    run.maxTsMs = batch.maxTsMs[r]!;
    r++;
    onRun(run);
  }
}
