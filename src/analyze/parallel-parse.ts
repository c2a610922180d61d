/**
 * `pgvigil analyze -j N`: parses log files on N threads and hands their events to the caller in
 * file order, exactly as one pipeline per file would return them (same events, line numbers,
 * counts and examples).
 *
 * A plain file is cut into ranges at entry starts (split-points.ts); a gzip file is one range
 * (gzip cannot be read from the middle), so several .gz files parse in parallel, one .gz does
 * not. Parsers take ranges in order: N worker threads, or, when only a summary is made, this
 * thread and N - 1 workers. The merge reads the oldest range's batches as they come, numbers
 * its lines after the ranges before it, and skips ranges that a range read through because its
 * boundary did not hold (range-parser.ts).
 *
 * Owns: planning ranges, the pool of parsers, the in-order merge. Never: parsing (range-worker.ts
 * does) or what is done with the events (the caller).
 */
import { promises as fsp } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { RedactLevel } from '../lib/redact.js';
import type { AnyLogEvent } from '../domain/index.js';
import type { GenericRun } from '../report/analyze-summary.js';
import type { DetectedFormat } from '../parsers/detect-format.js';
import type { LogReportStates } from '../report/log-report/log-report-fold.js';
import type { PipelineStats } from '../parsers/log-pipeline.js';
import { EXAMPLES_PER_REASON } from '../parsers/framing-stats.js';
import { compressionOfFile } from '../sources/log-inputs.js';
import { parseInputFormat } from '../parsers/formats/input-format.js';
import type { ParserLog, ParserSettings } from '../sources/source-parser.js';
import { readFileHead, type HeadOrError } from './file-head.js';
import { forEachDecoded } from './generic-columns.js';
import type { RangeResult } from './range-parser.js';
import { Credits, RANGE_WORKER_ROLE, runTask, type FromWorker, type RangeTask, type WorkerSetup } from './range-worker.js';
import { batchBytesFor, creditBatches, rangeBytesFor } from './range-bytes.js';
import { entryStartTest, rangeStarts } from './split-points.js';


export interface ParallelOptions {
  jobs: number;
  /** Bytes per range of a plain file (tests make it tiny so boundaries fall everywhere); default rangeBytesFor. */
  rangeBytes?: number;
  /** The caller only summarizes (analyze-summary.ts): generic events come as runs to `onGenericRun`. */
  summaryOnly?: boolean;
  /** The target of each file's events (src/analyze/file-targets.ts); default the settings' one. */
  targets?: ReadonlyMap<string, string>;
  /** What the ranges' log report keeps of statements; default off. */
  redact?: RedactLevel;
}

/** What one file gave: as SourceParser and readLines report it for a single-threaded run. */
export interface ParsedFile {
  path: string;
  format: DetectedFormat | null;
  /** Bytes and lines read; 0 when reading failed, as a single-threaded run reports it. */
  bytes: number;
  lines: number;
  overLongLines: number;
  stats: PipelineStats | null;
  error: string | null;
  /** First line that is not blank, for the "nothing understood" message. */
  firstLine: string | null;
  /** The language the file was read in; null for English. */
  language: string | null;
}

interface PlannedRange {
  file: ParsedFile;
  /** Index among the file's ranges. */
  index: number;
  task: Omit<RangeTask, 'id'>;
  /** Bytes the file's ranges are cut at (0 for a file read whole). */
  rangeBytes: number;
  /** Set when an earlier range read through this one. */
  skipped: boolean;
  messages: FromWorker[];
  wake: (() => void) | null;
  runner: RangeRunner | null;
}

/** Where the events go, in file order. */
export interface ParsedEventSink {
  onEvent: (event: AnyLogEvent) => void;
  /** With `summaryOnly`, the generic events instead of onEvent (the run is valid only during the call). */
  onGenericRun?: (run: GenericRun) => void;
  /**
   * Awaited after each batch (back-pressure), with the input read up to it: the bytes of the
   * files before, plus its offset in its file (decompressed for a .gz).
   */
  afterBatch: (inputBytes: number) => Promise<void> | void;
  /** The log report's states of each range whose events were given, in file order (log-report-fold.ts). */
  onReport?: (states: LogReportStates) => void;
}

/** Parses `files` in this order on `options.jobs` threads, giving `sink` their events in file order. */
export async function parseFilesInParallel(
  files: readonly string[],
  heads: ReadonlyMap<string, HeadOrError>,
  settings: ParserSettings,
  options: ParallelOptions,
  sink: ParsedEventSink,
  log: ParserLog,
): Promise<ParsedFile[]> {
  if (options.summaryOnly && !sink.onGenericRun) throw new Error('parseFilesInParallel: summaryOnly needs onGenericRun');
  const parsed: ParsedFile[] = [];
  const ranges: PlannedRange[] = [];
  for (const path of files) {
    const file: ParsedFile = { path, format: null, bytes: 0, lines: 0, overLongLines: 0, stats: null, error: null, firstLine: null, language: null };
    parsed.push(file);
    try {
      ranges.push(...await planFile(file, heads.get(path) ?? await readFileHead(path, settings, log), settings, options));
    } catch (err) {
      file.error = (err as Error).message;
      // As SourceParser reports a file it could not read: the format given, if any.
      const named = settings.format === 'auto' ? null : parseInputFormat(settings.format);
      file.format = named === null ? null : { ...named, prefix: settings.prefix };
    }
  }
  const widest = Math.max(0, ...ranges.map((r) => r.rangeBytes));
  const pool = new ParserPool(Math.max(1, Math.min(options.jobs, ranges.length)), options.summaryOnly === true, ranges, { role: RANGE_WORKER_ROLE, creditBatches: creditBatches(widest, batchBytesFor(options.summaryOnly === true)) });
  try {
    await mergeInOrder(ranges, pool, sink);
  } finally {
    await pool.close();
  }
  return parsed;
}

/** The file's ranges, read in the format and language its head told. */
async function planFile(file: ParsedFile, head: HeadOrError, settings: ParserSettings, options: ParallelOptions): Promise<PlannedRange[]> {
  if ('error' in head) throw new Error(head.error);
  const format = head.format;
  Object.assign(file, { firstLine: head.firstLine, format, language: head.translation?.language ?? null });
  const pipeline = { target: options.targets?.get(file.path) ?? settings.target, format: format.format, prefix: format.prefix, syslog: format.syslog, envelope: format.envelope, timezone: settings.timezone, file: file.path };
  const range = (index: number, rangeBytes: number, task: Omit<RangeTask, 'id' | 'type' | 'pipeline' | 'translation' | 'summaryOnly' | 'redact'>): PlannedRange => ({
    file, index, rangeBytes, skipped: false, messages: [], wake: null, runner: null,
    task: { type: 'task', pipeline, translation: head.translation, summaryOnly: options.summaryOnly === true, redact: options.redact ?? 'off', ...task },
  });
  // An envelope's lines are not the server's: where one of its entries starts is its own matter.
  const isEntryStart = format.envelope === undefined ? entryStartTest(format) : null;
  if (await compressionOfFile(file.path) === 'gzip' || isEntryStart === null) return [range(0, 0, { whole: true, start: 0, ends: [Infinity] })];
  const { size } = await fsp.stat(file.path);
  file.bytes = size;
  const rangeBytes = options.rangeBytes ?? rangeBytesFor(size, options.jobs, options.summaryOnly === true);
  const starts = await rangeStarts(file.path, size, rangeBytes, isEntryStart);
  return starts.map((start, i) => range(i, rangeBytes, { whole: false, start, ends: [...starts.slice(i + 1), Infinity] }));
}

/** Where a range is parsed: a worker thread, or this thread (threadRunner). */
interface RangeRunner {
  run(task: RangeTask): void;
  /** The merge read one of the current range's batches. */
  ack(): void;
  close(): Promise<void>;
}

/** A worker thread; its messages go to `received`. */
function workerRunner(setup: WorkerSetup, received: (runner: RangeRunner, message: FromWorker) => void, fail: (err: Error) => void): RangeRunner {
  const worker = startWorker(setup);
  const runner: RangeRunner = {
    run: (task) => worker.postMessage(task),
    ack: () => worker.postMessage({ type: 'ack' }),
    close: async () => {
      await worker.terminate();
    },
  };
  worker.on('message', (message: FromWorker) => received(runner, message));
  worker.on('error', fail);
  return runner;
}

/**
 * This thread as one of the parsers. When only a summary is made, the merge has almost nothing
 * to do, and a worker spends its first ~0.3 s starting: this thread parses the first range at
 * once and shares the rest, so `-j N` starts N - 1 workers. Its reads are the points at which the
 * merge and the workers' messages get their turn.
 */
function threadRunner(setup: WorkerSetup, received: (runner: RangeRunner, message: FromWorker) => void, fail: (err: Error) => void): RangeRunner {
  const credits = new Credits(setup.creditBatches);
  const runner: RangeRunner = {
    run: (task) => {
      runTask(task, credits, (message) => received(runner, message)).catch(fail);
    },
    ack: () => credits.give(),
    close: async () => undefined,
  };
  return runner;
}

class ParserPool {
  private readonly runners: RangeRunner[] = [];
  private next = 0;
  private failure: Error | null = null;

  /** @param inThread one of the `size` parsers is this thread */
  constructor(size: number, inThread: boolean, private readonly ranges: PlannedRange[], setup: WorkerSetup) {
    const received = (runner: RangeRunner, message: FromWorker): void => this.received(runner, message);
    const fail = (err: Error): void => this.fail(err);
    for (let i = 0; i < size; i++) {
      this.runners.push(inThread && i === 0 ? threadRunner(setup, received, fail) : workerRunner(setup, received, fail));
    }
    for (const runner of this.runners) this.assign(runner);
  }

  /** Throws the error a parser died of, if any. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  ack(range: PlannedRange): void {
    range.runner?.ack();
  }

  async close(): Promise<void> {
    await Promise.all(this.runners.map((r) => r.close()));
  }

  private assign(runner: RangeRunner): void {
    while (this.next < this.ranges.length && this.ranges[this.next]!.skipped) this.next++;
    const range = this.ranges[this.next];
    if (!range) return;
    range.runner = runner;
    runner.run({ ...range.task, id: this.next });
    this.next++;
  }

  private received(runner: RangeRunner, message: FromWorker): void {
    const range = this.ranges[message.id]!;
    if (range.skipped && message.type !== 'done') runner.ack();
    else range.messages.push(message);
    if (message.type === 'done') this.assign(runner);
    const wake = range.wake;
    range.wake = null;
    wake?.();
  }

  private fail(err: Error): void {
    this.failure = new Error(`pgvigil analyze: a parsing thread failed: ${err.message}`, { cause: err });
    for (const range of this.ranges) range.wake?.();
  }
}

/**
 * A worker's young generation (V8's default grows it to tens of MB per thread). A worker's events
 * die within their chunk, so a small one costs no measurable CPU, and three heaps of the default
 * size put `-j 2` over 200 MB of RSS on a 256 MB log (212-242 MB; 174-191 MB with 8).
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * The worker runs the compiled module next to this one; from the TypeScript source (tests, tsx)
 * it registers tsx in the worker first: a worker does not inherit the loader of its parent.
 */
function startWorker(workerData: WorkerSetup): Worker {
  const resourceLimits = { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./range-worker.js', import.meta.url), { resourceLimits, workerData });
  const entry = new URL('./range-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { eval: true, resourceLimits, workerData });
}

async function nextMessage(range: PlannedRange, pool: ParserPool): Promise<FromWorker> {
  for (;;) {
    pool.check();
    const message = range.messages.shift();
    if (message) return message;
    await new Promise<void>((resolve) => { range.wake = resolve; });
  }
}

async function mergeInOrder(ranges: PlannedRange[], pool: ParserPool, sink: ParsedEventSink): Promise<void> {
  let filesBeforeBytes = 0;
  let current: ParsedFile | null = null;
  for (let r = 0; r < ranges.length; r++) {
    const range = ranges[r]!;
    if (range.skipped) continue;
    const file = range.file;
    if (file !== current) {
      filesBeforeBytes += current?.bytes ?? 0;
      current = file;
    }
    const lineBase = file.lines;
    for (;;) {
      const message = await nextMessage(range, pool);
      if (message.type !== 'done') {
        const each = (event: AnyLogEvent): void => {
          if (event.source) renumber(event.source, lineBase);
          sink.onEvent(event);
        };
        if (message.type === 'events') message.events.forEach(each);
        else forEachDecoded(message.columns, each, sink.onGenericRun!);
        await sink.afterBatch(filesBeforeBytes + range.task.start + message.bytesRead);
        pool.ack(range);
        continue;
      }
      addRange(file, message.result, lineBase, range.task.whole ? message.bytes : null, message.error);
      sink.onReport?.(message.report);
      // Ranges this one read through are already merged: their own results are dropped.
      for (let skip = 1; skip <= message.result.endIndex; skip++) skipRange(ranges[r + skip]!, pool);
      break;
    }
  }
}

function skipRange(range: PlannedRange, pool: ParserPool): void {
  range.skipped = true;
  for (const message of range.messages.splice(0)) if (message.type !== 'done') pool.ack(range);
}

function renumber(position: { line: number | null }, lineBase: number): void {
  if (position.line !== null) position.line += lineBase;
}

/** Adds a range's counts to its file's, examples renumbered and kept per reason as one pipeline keeps them. */
function addRange(file: ParsedFile, result: RangeResult, lineBase: number, wholeBytes: number | null, error: string | null): void {
  const stats = result.stats;
  for (const example of stats.examples) renumber(example, lineBase);
  file.lines += stats.lines;
  file.overLongLines += result.overLongLines;
  if (wholeBytes !== null) file.bytes = wholeBytes;
  if (error) Object.assign(file, { error, bytes: 0, lines: 0 });
  file.stats = file.stats ? mergeStats(file.stats, stats) : stats;
}

/** `into` + `more`, for consecutive ranges of one file. */
export function mergeStats(into: PipelineStats, more: PipelineStats): PipelineStats {
  const kept = new Map<string, number>();
  for (const example of into.examples) kept.set(example.reason, (kept.get(example.reason) ?? 0) + 1);
  const examples = [...into.examples];
  for (const example of more.examples) {
    const seen = kept.get(example.reason) ?? 0;
    if (seen >= EXAMPLES_PER_REASON) continue;
    kept.set(example.reason, seen + 1);
    examples.push(example);
  }
  const byReason = { ...into.unparsed_by_reason };
  for (const [reason, n] of Object.entries(more.unparsed_by_reason) as Array<[keyof typeof byReason, number]>) byReason[reason] = (byReason[reason] ?? 0) + n;
  const byKind = { ...into.events_by_kind };
  for (const [kind, n] of Object.entries(more.events_by_kind) as Array<[keyof typeof byKind, number]>) byKind[kind] += n;
  return {
    lines: into.lines + more.lines,
    entries: into.entries + more.entries,
    unparsed_lines: into.unparsed_lines + more.unparsed_lines,
    unparsed_by_reason: byReason,
    examples,
    truncated_fields: into.truncated_fields + more.truncated_fields,
    events: into.events + more.events,
    translated_entries: into.translated_entries + more.translated_entries,
    events_by_kind: byKind,
  };
}
