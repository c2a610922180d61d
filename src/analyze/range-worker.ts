/**
 * Worker thread of `pgvigil analyze -j N`: reads a range of a log file (a whole file when it is
 * gzip), parses it with range-parser.ts, and posts its events in batches (range-bytes.ts). At
 * most `creditBatches` (given by the pool, range-bytes.ts) wait unread in the main thread: a worker
 * ahead of the merge waits, so memory stays bounded whatever the file. The main thread runs the
 * same runTask when it parses ranges itself.
 *
 * Owns: reading the range and the message protocol's parser side. Never: ordering or merging
 * ranges (parallel-parse.ts does).
 */
import { promises as fsp } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type { AnyLogEvent } from '../domain/index.js';
import { createLogPipeline, type LogPipelineOptions } from '../parsers/log-pipeline.js';
import { readShippedCatalogs } from '../parsers/lang/catalog.js';
import { Translator } from '../parsers/lang/translator.js';
import type { RedactLevel } from '../lib/redact.js';
import { LogReportFold, type LogReportStates } from '../report/log-report/log-report-fold.js';
import { reportableEvent } from '../report/log-report/reportable-event.js';
import { LineSplitter } from '../sources/line-reader.js';
import type { LogTranslation } from '../sources/source-parser.js';
import { CHUNK_BYTES, READ_BYTES, readChunks } from '../sources/offline-reader.js';
import { batchBytesFor } from './range-bytes.js';
import { ColumnBatchBuilder, transferablesOf, type ColumnBatch } from './generic-columns.js';
import { RangeParser, type RangeResult } from './range-parser.js';

/** What the pool tells a worker when it starts it. */
export interface WorkerSetup {
  /** Marks a thread started as a range worker: this module may be loaded in other threads too. */
  role: typeof RANGE_WORKER_ROLE;
  creditBatches: number;
}

export const RANGE_WORKER_ROLE = 'pgvigil-range-worker';

export interface RangeTask {
  type: 'task';
  id: number;
  /** Pipeline options (the format resolved); `file` is what events name and what is read. */
  pipeline: Omit<LogPipelineOptions, 'clock' | 'translator'>;
  /** The log's language (file-head.ts): the worker reads it with the same shipped catalogs. */
  translation: LogTranslation | null;
  /** Read the whole (decompressed) file from its start; `start` and `ends` are then 0 and [Infinity]. */
  whole: boolean;
  start: number;
  ends: number[];
  /** Only a summary is made: batches go as columns (generic-columns.ts). */
  summaryOnly: boolean;
  /** What the log report keeps of statements (src/lib/redact.ts); the events posted stay whole, the main thread redacts them. */
  redact: RedactLevel;
}

export type ToWorker = RangeTask | { type: 'ack' };

/** A batch says how many bytes of the range were read when it was posted (progress). */
export type FromWorker =
  | { type: 'events'; id: number; bytesRead: number; events: AnyLogEvent[] }
  | { type: 'columns'; id: number; bytesRead: number; columns: ColumnBatch }
  | { type: 'done'; id: number; result: RangeResult; bytes: number; error: string | null; report: LogReportStates };

/**
 * A range shorter than a chunk is read in chunks of its size, at least this: a whole chunk (and a
 * whole read) per range made tests' ranges of a few hundred bytes cost a read of 1 MB each.
 */
const MIN_CHUNK_BYTES = 4096;

/** Plain file bytes from `start` on, in chunks (valid until the next is asked for) of CHUNK_BYTES, or of a short first range's size. */
async function* plainChunksFrom(path: string, start: number, firstEnd: number): AsyncGenerator<Buffer> {
  const chunkBytes = Math.min(CHUNK_BYTES, Math.max(MIN_CHUNK_BYTES, firstEnd - start));
  const readBytes = Math.min(READ_BYTES, chunkBytes * 16);
  const handle = await fsp.open(path, 'r');
  try {
    const block = Buffer.allocUnsafe(readBytes);
    for (let position = start; ;) {
      const { bytesRead } = await handle.read(block, 0, readBytes, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      for (let at = 0; at < bytesRead; at += chunkBytes) yield block.subarray(at, Math.min(at + chunkBytes, bytesRead));
    }
  } finally {
    await handle.close();
  }
}

const translators = new Map<string, Translator>();

/** The translator the main thread chose, from the same shipped catalogs: built once per worker. */
function shippedTranslator({ language, majors }: LogTranslation): Translator {
  const key = `${language}/${majors.join(',')}`;
  let translator = translators.get(key);
  if (translator === undefined) {
    const catalogs = readShippedCatalogs(language).filter((c) => majors.includes(c.major));
    if (catalogs.length === 0) throw new Error(`no shipped message catalog for language ${language}, PostgreSQL ${majors.join(', ')}`);
    translator = new Translator(catalogs);
    translators.set(key, translator);
  }
  return translator;
}

/** Batches a range's parser may still post before the merge has read one. */
export class Credits {
  private waiter: (() => void) | null = null;

  constructor(private available: number) {}

  take(): Promise<void> | void {
    if (this.available > 0) {
      this.available--;
      return;
    }
    return new Promise<void>((resolve) => {
      this.waiter = () => {
        this.available--;
        resolve();
      };
    });
  }

  give(): void {
    this.available++;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** Events of a batch: whole, or folded into columns when only a summary is made. */
interface BatchOf {
  push(event: AnyLogEvent): void;
  readonly size: number;
  /** The message that posts the batch, with what it may move instead of copy; the batch starts over. */
  take(id: number, bytesRead: number): [FromWorker, ArrayBuffer[]];
}

function eventsBatch(): BatchOf {
  let events: AnyLogEvent[] = [];
  return {
    push: (event) => events.push(event),
    get size() { return events.length; },
    take: (id, bytesRead) => {
      const message: FromWorker = { type: 'events', id, bytesRead, events };
      events = [];
      return [message, []];
    },
  };
}

function columnsBatch(): BatchOf {
  const builder = new ColumnBatchBuilder();
  return {
    push: (event) => builder.push(event),
    get size() { return builder.size; },
    take: (id, bytesRead) => {
      const columns = builder.take();
      return [{ type: 'columns', id, bytesRead, columns }, transferablesOf(columns)];
    },
  };
}

/** Parses one range, posting its batches and then its result; in a worker, or in the main thread (parallel-parse.ts). */
export async function runTask(task: RangeTask, credits: Credits, post: (message: FromWorker, transfer?: ArrayBuffer[]) => void): Promise<void> {
  const options = { ...task.pipeline, translator: task.translation && shippedTranslator(task.translation) };
  const parser = new RangeParser(() => createLogPipeline(options), task.ends);
  const splitter = new LineSplitter({ startOffset: task.start, startLine: 1 });
  const batch = task.summaryOnly ? columnsBatch() : eventsBatch();
  // Folded here, from whole events, before a summary's batch reduces them to columns.
  const report = new LogReportFold();
  const posted = (event: AnyLogEvent): void => {
    report.add(task.redact === 'off' ? event : reportableEvent(event, task.redact));
    batch.push(event);
  };
  let overLongSeen = 0;
  const onLine = (line: Parameters<RangeParser['push']>[0]): void => {
    if (parser.result) return;
    const before = overLongSeen;
    overLongSeen = splitter.stats.overLongLines; // counts this line already
    const events = parser.push(line, before);
    for (let i = 0; i < events.length; i++) posted(events[i]!);
  };
  const batchBytes = batchBytesFor(task.summaryOnly);
  let bytes = 0;
  let unsent = 0;
  const send = async (): Promise<void> => {
    if (batch.size === 0) return;
    await credits.take();
    post(...batch.take(task.id, bytes));
  };
  let error: string | null = null;
  try {
    const chunks = task.whole ? readChunks(task.pipeline.file) : plainChunksFrom(task.pipeline.file, task.start, task.ends[0]!);
    for await (const chunk of chunks) {
      bytes += chunk.length;
      unsent += chunk.length;
      splitter.push(chunk, onLine);
      if (parser.result) break;
      if (unsent >= batchBytes) {
        await send();
        unsent = 0;
      }
    }
    if (!parser.result) splitter.end(onLine);
  } catch (err) {
    // As a single-threaded run: what was read before the failure (a truncated .gz) is kept.
    error = (err as Error).message;
  }
  if (!parser.result) for (const event of parser.finish(splitter.stats.overLongLines)) posted(event);
  await send();
  post({ type: 'done', id: task.id, result: parser.result!, bytes, error, report: report.states });
}

const port = parentPort;
if (port && (workerData as WorkerSetup | undefined)?.role === RANGE_WORKER_ROLE) {
  const credits = new Credits((workerData as WorkerSetup).creditBatches);
  let queue = Promise.resolve();
  port.on('message', (message: ToWorker) => {
    if (message.type === 'ack') return credits.give();
    queue = queue.then(() => runTask(message, credits, (out, transfer) => port.postMessage(out, transfer)));
  });
}
