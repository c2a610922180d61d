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
  /** Indexes (among generic events) of those with a SQLSTATE, and their SQLSTATEs: most have none. */
  sqlstateAt: Int32Array;
  sqlstates: string[];
  others: AnyLogEvent[];
}

export function encodeColumns(events: readonly AnyLogEvent[]): ColumnBatch {
  const order = new Int32Array(events.length);
  let generic = 0;
  for (const event of events) if (event.kind === 'generic') generic++;
  const tsMs = new Float64Array(generic);
  const levels = new Uint8Array(generic);
  const sqlstateAt: number[] = [];
  const sqlstates: string[] = [];
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
    if (event.sqlstate !== null) {
      sqlstateAt.push(g);
      sqlstates.push(event.sqlstate);
    }
    g++;
  }
  return { order, tsMs, levels, sqlstateAt: Int32Array.from(sqlstateAt), sqlstates, others };
}

/** The buffers a ColumnBatch can hand over to another thread instead of copying. */
export function transferablesOf(batch: ColumnBatch): ArrayBuffer[] {
  return [batch.order, batch.tsMs, batch.levels, batch.sqlstateAt].map((array) => array.buffer as ArrayBuffer);
}

/**
 * Calls `each` with every event in order. A generic event is one object refilled for each: it is
 * valid only during the call.
 */
export function forEachDecoded(batch: ColumnBatch, each: (event: AnyLogEvent) => void): void {
  const generic = { kind: 'generic', level: 'LOG', sqlstate: null, tsMs: 0 } as { kind: 'generic'; level: LogLevel; sqlstate: string | null; tsMs: number };
  let g = 0;
  let s = 0;
  for (let i = 0; i < batch.order.length; i++) {
    const other = batch.order[i]!;
    if (other >= 0) {
      each(batch.others[other]!);
      continue;
    }
    generic.tsMs = batch.tsMs[g]!;
    generic.level = LEVELS[batch.levels[g]!]!;
    generic.sqlstate = batch.sqlstateAt[s] === g ? batch.sqlstates[s++]! : null;
    g++;
    each(generic as unknown as AnyLogEvent);
  }
}
