/**
 * A batch of events as a worker sends it when only a summary is made: generic events, most of a
 * log, as columns (time, level, SQLSTATE) in typed arrays moved without copying, the others as
 * objects. Copying millions of small objects between threads cost the main thread more than
 * parsing cost the workers; this way it reads three numbers and a string per generic event.
 *
 * Owns: the encoding and its inverse. The summary reads of a generic event only kind, level,
 * sqlstate and tsMs (analyze-summary.ts), which is all a decoded one has.
 */
import type { AnyLogEvent } from '../domain/index.js';
import type { LogLevel } from '../domain/log-entry.js';

const LEVELS: readonly LogLevel[] = ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'LOG', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'FATAL', 'PANIC'];
const LEVEL_CODES = new Map(LEVELS.map((level, i) => [level, i]));

export interface ColumnBatch {
  /** Per event in order: the index in `others`, or -1 for the next generic event. */
  order: Int32Array;
  tsMs: Float64Array;
  levels: Uint8Array;
  /** SQLSTATE of each generic event (most are null). */
  sqlstates: Array<string | null>;
  others: AnyLogEvent[];
}

export function encodeColumns(events: readonly AnyLogEvent[]): ColumnBatch {
  const order = new Int32Array(events.length);
  let generic = 0;
  for (const event of events) if (event.kind === 'generic') generic++;
  const tsMs = new Float64Array(generic);
  const levels = new Uint8Array(generic);
  const sqlstates: Array<string | null> = new Array<string | null>(generic);
  const others: AnyLogEvent[] = [];
  let g = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.kind !== 'generic') {
      order[i] = others.length;
      others.push(event);
      continue;
    }
    order[i] = -1;
    tsMs[g] = event.tsMs;
    levels[g] = LEVEL_CODES.get(event.level)!;
    sqlstates[g++] = event.sqlstate;
  }
  return { order, tsMs, levels, sqlstates, others };
}

/** The buffers a ColumnBatch can hand over to another thread instead of copying. */
export function transferablesOf(batch: ColumnBatch): ArrayBuffer[] {
  return [batch.order.buffer as ArrayBuffer, batch.tsMs.buffer as ArrayBuffer, batch.levels.buffer as ArrayBuffer];
}

/**
 * Calls `each` with every event in order. A generic event is one object refilled for each: it is
 * valid only during the call.
 */
export function forEachDecoded(batch: ColumnBatch, each: (event: AnyLogEvent) => void): void {
  const generic = { kind: 'generic', level: 'LOG', sqlstate: null, tsMs: 0 } as { kind: 'generic'; level: LogLevel; sqlstate: string | null; tsMs: number };
  let g = 0;
  for (let i = 0; i < batch.order.length; i++) {
    const other = batch.order[i]!;
    if (other >= 0) {
      each(batch.others[other]!);
      continue;
    }
    generic.tsMs = batch.tsMs[g]!;
    generic.level = LEVELS[batch.levels[g]!]!;
    generic.sqlstate = batch.sqlstates[g++]!;
    each(generic as unknown as AnyLogEvent);
  }
}
