/**
 * The live log source: follows one log file, or a log directory's `log_filename` files, through
 * rotation, truncation and re-creation, parses what is appended and hands events to the store
 * writer together with the position they were read up to, in the same batch. That pairing is
 * what makes a restart (or a SIGKILL) resume exactly: nothing read twice, nothing skipped.
 *
 * Owns: which file to read, from where, and the saved position. Never: parsing (the pipeline),
 * writing SQL (the writer), or letting an error escape: a failure is logged with file and offset,
 * counted, and retried on the next tick.
 *
 * Wake-ups come from chokidar and from a poll interval (events can be missed); either way a tick
 * re-stats and reads to EOF, so a missed event only costs latency.
 */
import { watch, type FSWatcher } from 'chokidar';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { AnyLogEvent, Clock, Component } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { parseInputFormat } from '../parsers/formats/input-format.js';
import type { LogFormat } from '../parsers/framer.js';
import type { ReportMinuteRow } from '../store/report-minutes.js';
import type { WriteBatch } from '../store/store-writer.js';
import { identityOf, listDirectory, namesDirectory, resolveLink, statFile } from './file-identity.js';
import { LineSplitter } from './line-reader.js';
import { DEFAULT_LOG_FILENAME, compareWriteOrder, fileNameForFormat, linkTargetsBetween, listLogFiles, namesSortByTime, patternToRegExp, type LogFile } from './log-file-set.js';
import { decideResume, type SavedOffset, type StartAt } from './resume-position.js';
import { SourceParser, type ParserSettings } from './source-parser.js';

export const TAIL_CHUNK_BYTES = 64 * 1024;
/** How many of a directory's non-matching file names a warning lists. */
const NAMES_SHOWN = 5;

/** The part of StoreWriter the tailer uses. */
export interface TailerWriter {
  enqueue(batch: WriteBatch): void;
  readonly accepting: boolean;
}

export interface LogTailerOptions extends ParserSettings {
  /** The configured log file, or the log directory when `logFilename` is set. */
  source: string;
  /**
   * PostgreSQL's log_filename. Directory mode when set, or when `source` is a directory (or ends
   * in `/`), with the default pattern then.
   */
  logFilename?: string | null;
  startAt?: StartAt;
  writer: TailerWriter;
  /** The position saved by the last run (readSavedOffset), null on first start. */
  savedOffset: SavedOffset | null;
  clock: Clock;
  log: Logger;
  pollIntervalMs?: number;
  /** A pending entry is taken as complete after this long without a new line. */
  idleFlushMs?: number;
  /** Wait between checks while the writer refuses more. */
  backpressureWaitMs?: number;
  /** Bytes split and parsed at a time (and so the most read past a full writer). */
  chunkBytes?: number;
  /** Bytes per read() call; parsed chunkBytes at a time. */
  readBytes?: number;
  maxLineBytes?: number;
  /** chokidar wake-ups; off leaves the poll interval alone (tests of the poll path). */
  watch?: boolean;
  /**
   * Which events go to the store (all by default). Events left out are still parsed and counted
   * (stats().eventsNotStored), and the position still moves past them.
   */
  storeEvent?: (event: AnyLogEvent) => boolean;
  /**
   * The log report's rows of what a commit read (every event, stored or not), committed with it
   * and its position so each line is in the report once (src/report/log-report/minute-folds.ts).
   */
  foldReport?: (events: readonly AnyLogEvent[]) => ReportMinuteRow[];
}

/** A storeEvent filter: everything except `generic` events below WARNING (statement/duration lines). */
export function notableOrProblem(event: AnyLogEvent): boolean {
  return event.kind !== 'generic' || PROBLEM_LEVELS.has(event.level);
}

const PROBLEM_LEVELS = new Set(['WARNING', 'ERROR', 'FATAL', 'PANIC']);

export interface LogTailerStats {
  linesRead: number;
  bytesRead: number;
  /** Bytes between the read position and the end of the current file (as of the last tick). */
  lagBytes: number;
  /** Now minus the timestamp of the newest event read, 0 when caught up; null before any event. */
  behindSeconds: number | null;
  filesRotated: number;
  truncations: number;
  readErrors: number;
  /** Files that were rotated away (or deleted) before they were read to the end. */
  filesLost: number;
  /** Events parsed but left out of the store by the storeEvent filter. */
  eventsNotStored: number;
  overLongLines: number;
  currentFile: string | null;
  waitingForSource: boolean;
  parser: ReturnType<SourceParser['stats']>;
}

interface OpenFile {
  path: string;
  name: string;
  id: string;
  handle: FileHandle;
  splitter: LineSplitter;
  sizeBytes: number;
  mtimeMs: number;
  /** The offset last handed to the writer, to skip enqueueing an unchanged position. */
  savedOffset: number;
}

export class LogTailer implements Component {
  readonly name: string;
  private readonly o: Required<Omit<LogTailerOptions, 'prefix' | 'timezone' | 'savedOffset' | 'logFilename' | 'storeEvent' | 'foldReport' | 'clock' | 'language'>> & LogTailerOptions & { clock: Clock };
  private readonly directoryMode: boolean;
  private readonly pattern: RegExp | null;
  private readonly parser: SourceParser;
  private current: OpenFile | null = null;
  private saved: SavedOffset | null;
  private watcher: FSWatcher | null = null;
  private loop: Promise<void> | null = null;
  private stopping = false;
  private wakeRequested = false;
  private wakeController = new AbortController();
  /** Aborted by stop() only: ends back-pressure waits, which a wake-up must not cut short. */
  private readonly stopController = new AbortController();
  private sourceSeenAtStart: boolean | null = null;
  private lastLineMs = 0;
  private lastEventTsMs: number | null = null;
  private lastErrorText = '';
  private readonly counters = { linesRead: 0, bytesRead: 0, filesRotated: 0, truncations: 0, readErrors: 0, filesLost: 0, overLongLines: 0, eventsNotStored: 0 };
  private waitingSince: number | null = null;
  private readBuffer: Buffer | null = null;

  constructor(options: LogTailerOptions) {
    this.o = {
      startAt: 'end', pollIntervalMs: 1000, idleFlushMs: 1000, backpressureWaitMs: 50, chunkBytes: TAIL_CHUNK_BYTES, readBytes: 1024 * 1024,
      maxLineBytes: 1024 * 1024, watch: true, ...options,
    };
    this.name = `log-tailer:${options.target}`;
    this.saved = options.savedOffset;
    this.directoryMode = (options.logFilename !== undefined && options.logFilename !== null) || namesDirectory(options.source);
    this.parser = new SourceParser(options, options.log);
    this.pattern = this.directoryMode ? patternToRegExp(this.fileNamePattern()) : null;
  }

  async start(): Promise<void> {
    if (this.o.watch) {
      const watched = this.directoryMode ? this.o.source : path.dirname(this.o.source);
      this.watcher = watch(watched, { depth: 0, ignoreInitial: true, atomic: false, persistent: false });
      this.watcher.on('all', () => this.wake());
      this.watcher.on('error', (err) => this.o.log.debug({ err, source: this.o.source }, 'file watcher error; polling continues'));
    }
    this.loop = this.run();
  }

  /** Stops after the chunk in hand. The pending entry is not flushed: its offset is saved instead. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.stopController.abort();
    this.wake();
    await this.loop;
    await this.watcher?.close();
    await this.closeCurrent();
  }

  /** The log's language, learned once the server could be asked (SourceParser.setLanguage). */
  setLanguage(language: LogTailerOptions['language']): void {
    this.parser.setLanguage(language);
  }

  /** Asks for a tick now (a file changed). */
  wake(): void {
    this.wakeRequested = true;
    this.wakeController.abort();
  }

  stats(): LogTailerStats {
    const current = this.current;
    const lagBytes = current ? Math.max(0, current.sizeBytes - current.splitter.readOffset) : 0;
    // Caught up with a quiet server is not "behind", however old the last event is.
    const behindSeconds = this.lastEventTsMs === null ? null
      : lagBytes === 0 ? 0 : Math.max(0, (this.o.clock.nowMs() - this.lastEventTsMs) / 1000);
    return {
      ...this.counters,
      lagBytes,
      behindSeconds,
      currentFile: current?.path ?? null,
      waitingForSource: this.waitingSince !== null,
      parser: this.parser.stats(),
    };
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.wakeRequested = false;
      await this.tick();
      if (this.stopping) break;
      if (this.wakeRequested) continue;
      this.wakeController = new AbortController();
      await this.o.clock.sleep(this.sleepMs(), this.wakeController.signal);
    }
  }

  private sleepMs(): number {
    if (!this.parser.hasPending()) return this.o.pollIntervalMs;
    const idleLeftMs = this.lastLineMs + this.o.idleFlushMs - this.o.clock.monotonicMs();
    return Math.max(1, Math.min(this.o.pollIntervalMs, idleLeftMs));
  }

  private async tick(): Promise<void> {
    let where = { file: this.current?.path ?? this.o.source, offset: this.current?.splitter.readOffset ?? 0 };
    try {
      if (!this.current && !(await this.openStartFile())) return;
      for (;;) {
        const current = this.current!;
        where = { file: current.path, offset: current.splitter.readOffset };
        await this.readToEnd(current);
        if (this.stopping) return;
        const next = await this.successor(current);
        if (!next) break;
        // What was written to the old file after the read above and before the new one
        // appeared is still to be read: the old file is final only now.
        await this.readToEnd(current);
        if (this.stopping) return;
        await this.switchTo(next);
      }
      this.flushIfIdle();
      this.lastErrorText = '';
    } catch (err) {
      this.counters.readErrors++;
      const text = `${where.file}: ${(err as Error).message}`;
      // Log a repeating failure once, not every poll; the counter keeps counting.
      if (text !== this.lastErrorText) this.o.log.warn({ err, ...where, source: this.o.source, ...readFailureHint(err) }, 'log read failed; retrying on the next tick');
      this.lastErrorText = text;
    }
  }

  /** Decides where to start (saved offset, start_at) once the source has files. */
  private async openStartFile(): Promise<boolean> {
    const files = await this.sourceFiles();
    this.sourceSeenAtStart ??= files !== null && files.length > 0;
    if (files === null || files.length === 0) {
      if (this.waitingSince === null) {
        this.waitingSince = this.o.clock.nowMs();
        await this.sayWhySourceIsEmpty(files);
      }
      return false;
    }
    const renamedSaved = !this.directoryMode && this.saved && files[0]?.id !== this.saved.fileId
      ? await this.findRenamed(this.saved) : null;
    const decision = decideResume({
      files, saved: this.saved, startAt: this.o.startAt, presentAtStart: this.sourceSeenAtStart,
      namesSortByTime: this.directoryMode && namesSortByTime(this.o.logFilename || DEFAULT_LOG_FILENAME), singleFile: !this.directoryMode, renamedSaved,
    });
    if (decision.kind === 'wait') return false;
    if (this.waitingSince !== null) this.o.log.info({ source: this.o.source, file: decision.file.path }, 'log source appeared');
    this.waitingSince = null;
    if (decision.lost) {
      this.counters.filesLost++;
      this.o.log.warn({ ...decision.lost, source: this.o.source, next: decision.file.path },
        'the file being read when pgvigil stopped is gone; what was written to it after that offset was not read');
    }
    if (decision.truncatedWhileDown) {
      this.counters.truncations++;
      this.o.log.warn({ file: decision.file.path, savedOffset: this.saved?.offset }, 'log file was truncated while pgvigil was down; reading it from the start');
    }
    const offset = decision.offset === 'end' ? await lastLineStart(decision.file) : decision.offset;
    await this.openFile(decision.file, offset);
    this.saved = null;
    return true;
  }

  private async openFile(file: LogFile, offset: number): Promise<void> {
    const handle = await fsp.open(file.path, 'r');
    const stats = await handle.stat({ bigint: true });
    this.current = {
      path: file.path, name: file.name, id: identityOf(stats), handle,
      splitter: new LineSplitter({ startOffset: offset, startLine: offset === 0 ? 1 : null, maxLineBytes: this.o.maxLineBytes }),
      sizeBytes: Number(stats.size), mtimeMs: Number(stats.mtimeMs), savedOffset: -1,
    };
    this.parser.openFile(file.path);
    // A link's target in another directory: its appends wake the tailer too.
    if (!this.directoryMode && path.dirname(file.path) !== path.dirname(this.o.source)) this.watcher?.add(path.dirname(file.path));
    this.o.log.info({ file: file.path, offset, source: this.o.source }, 'tailing log file');
  }

  /** Reads from the current position to EOF, a chunk at a time, pausing while the writer is full. */
  private async readToEnd(current: OpenFile): Promise<void> {
    const stats = await current.handle.stat({ bigint: true });
    current.sizeBytes = Number(stats.size);
    current.mtimeMs = Number(stats.mtimeMs);
    if (current.sizeBytes < current.splitter.readOffset) this.truncated(current);
    const buffer = (this.readBuffer ??= Buffer.allocUnsafe(this.o.readBytes));
    while (!this.stopping) {
      const { bytesRead } = await current.handle.read(buffer, 0, this.o.readBytes, current.splitter.readOffset);
      if (bytesRead === 0) break;
      // Parse and hand over ~64 KiB at a time: decoding is fastest at that size, and a full
      // writer stops the reading within one chunk.
      for (let start = 0; start < bytesRead && !this.stopping; start += this.o.chunkBytes) {
        await this.takeChunk(current, buffer.subarray(start, Math.min(start + this.o.chunkBytes, bytesRead)));
      }
    }
  }

  private async takeChunk(current: OpenFile, chunk: Buffer): Promise<void> {
    this.counters.bytesRead += chunk.length;
    const { lines: linesBefore, overLongLines: overLongBefore } = current.splitter.stats;
    const events = this.parser.take(current.splitter, chunk);
    const lines = current.splitter.stats.lines - linesBefore;
    this.counters.linesRead += lines;
    this.counters.overLongLines += current.splitter.stats.overLongLines - overLongBefore;
    // Monotonic: a wall clock jumping back must not hold the last entry of a burst until it catches up.
    if (lines > 0) this.lastLineMs = this.o.clock.monotonicMs();
    this.commit(current, events);
    current.sizeBytes = Math.max(current.sizeBytes, current.splitter.readOffset);
    while (!this.o.writer.accepting && !this.stopping) {
      await this.o.clock.sleep(this.o.backpressureWaitMs, this.stopController.signal);
    }
    await yieldToLoop();
  }

  /** Same file, now shorter than what was read: log_truncate_on_rotation or copytruncate. */
  private truncated(current: OpenFile): void {
    this.counters.truncations++;
    this.o.log.info({ file: current.path, offset: current.splitter.readOffset, sizeBytes: current.sizeBytes }, 'log file truncated; reading it from the start');
    // The entry in progress was real data; it ends where the old content ended.
    const events = this.parser.flush();
    current.splitter.reset(0, 1);
    this.parser.openFile(current.path);
    this.commit(current, events);
  }

  /** The file to read after `current` once it is read to the end, or null to stay on it. */
  private async successor(current: OpenFile): Promise<LogFile | null> {
    const position: LogFile = { path: current.path, name: current.name, id: current.id, sizeBytes: current.sizeBytes, mtimeMs: current.mtimeMs };
    if (!this.directoryMode) {
      const [now] = await this.sourceFiles() ?? [];
      if (!now || now.id === current.id) return null;
      return (await this.linkTargetsSkipped(position, now))[0] ?? now;
    }
    const files = (await this.sourceFiles()) ?? [];
    return files.find((f) => f.id !== current.id && compareWriteOrder(f, position) > 0) ?? null;
  }

  /** A link that now names a file beside the one being read: the files it named in between. */
  private async linkTargetsSkipped(current: LogFile, now: LogFile): Promise<LogFile[]> {
    const directory = path.dirname(now.path);
    if (now.path === this.o.source || path.dirname(current.path) !== directory) return [];
    const siblings: LogFile[] = [];
    for (const name of (await listDirectory(directory)) ?? []) {
      const state = await statFile(path.join(directory, name));
      if (state) siblings.push({ path: path.join(directory, name), name, ...state });
    }
    return linkTargetsBetween(current, now, siblings);
  }

  /** The current file is done (a newer file exists): its last line and entry are final. */
  private async switchTo(next: LogFile): Promise<void> {
    const finished = this.current!;
    const events = this.parser.finish(finished.splitter);
    this.counters.filesRotated++;
    this.o.log.info({ from: finished.path, to: next.path }, 'log file rotated');
    await this.closeCurrent();
    await this.openFile(next, 0);
    this.commit(this.current!, events);
  }

  private flushIfIdle(): void {
    const current = this.current;
    if (!current || !this.parser.hasPending()) return;
    if (this.o.clock.monotonicMs() - this.lastLineMs < this.o.idleFlushMs) return;
    this.commit(current, this.parser.flush());
  }

  /** Hands events and the position they were read up to to the writer, in one batch. */
  private commit(current: OpenFile, events: AnyLogEvent[]): void {
    const offset = this.parser.safeOffset() ?? current.splitter.consumedOffset;
    if (events.length === 0 && offset === current.savedOffset) return;
    current.savedOffset = offset;
    const last = events.at(-1);
    if (last) this.lastEventTsMs = Math.max(this.lastEventTsMs ?? last.tsMs, last.tsMs);
    const keep = this.o.storeEvent;
    const stored = keep ? events.filter(keep) : events;
    this.counters.eventsNotStored += events.length - stored.length;
    this.o.writer.enqueue({
      events: stored,
      offsets: [{ target: this.o.target, source: this.o.source, filePath: current.path, fileId: current.id, offset }],
      ...(this.o.foldReport && events.length > 0 ? { reportMinutes: this.o.foldReport(events) } : {}),
    });
  }

  private async closeCurrent(): Promise<void> {
    const current = this.current;
    this.current = null;
    await current?.handle.close().catch(() => undefined);
  }

  /** A directory with files, none of them matching, is a wrong log_filename rather than a server yet to write. */
  private async sayWhySourceIsEmpty(files: LogFile[] | null): Promise<void> {
    if (!this.directoryMode) {
      this.o.log.info({ source: this.o.source }, `log file ${this.o.source} does not exist yet; waiting for it`);
      return;
    }
    const pattern = this.fileNamePattern();
    const names = files === null ? [] : (await listDirectory(this.o.source)) ?? [];
    if (names.length === 0) {
      this.o.log.info({ source: this.o.source, pattern }, `log directory ${this.o.source} does not exist or holds no ${pattern} files yet; waiting for it`);
      return;
    }
    const shown = names.sort().slice(0, NAMES_SHOWN);
    const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : '';
    this.o.log.warn({ source: this.o.source, pattern, names: shown }, `log directory ${this.o.source} holds ${names.length} ` +
      `file${names.length === 1 ? '' : 's'} (${shown.join(', ')}${more}) but none named like ${pattern}: set filename_pattern to the ` +
      "server's log_filename (pgvigil reads it from the server when it can connect); waiting for a matching file");
  }

  private async sourceFiles(): Promise<LogFile[] | null> {
    if (this.directoryMode) return listLogFiles(this.o.source, this.pattern!);
    const file = await resolveLink(this.o.source);
    const state = file === null ? null : await statFile(file);
    return state ? [{ path: file!, name: path.basename(file!), ...state }] : [];
  }

  /**
   * File mode, the configured path now naming another file: the saved file where it was (a link
   * re-pointed away from it), or renamed within its directory (logrotate's `postgresql.log.1`).
   */
  private async findRenamed(saved: SavedOffset): Promise<LogFile | null> {
    const fileId = saved.fileId;
    const there = saved.filePath === this.o.source ? null : await statFile(saved.filePath);
    if (there?.id === fileId) return { path: saved.filePath, name: path.basename(saved.filePath), ...there };
    const directory = path.dirname(this.o.source);
    const base = path.basename(this.o.source);
    const names = (await listDirectory(directory)) ?? [];
    for (const name of names.filter((n) => n.startsWith(base) && n !== base)) {
      const state = await statFile(path.join(directory, name));
      if (state?.id === fileId) return { path: path.join(directory, name), name, ...state };
    }
    return null;
  }

  /** log_filename as the server names files of this format. */
  private fileNamePattern(): string {
    return fileNameForFormat(this.o.logFilename || DEFAULT_LOG_FILENAME, parseInputFormat(this.o.format)?.format ?? 'stderr');
  }
}

/** Where to start "at the end": after the last newline, so an unfinished line is read whole. */
async function lastLineStart(file: LogFile): Promise<number> {
  if (file.sizeBytes === 0) return 0;
  const handle = await fsp.open(file.path, 'r');
  try {
    const windowBytes = Math.min(file.sizeBytes, TAIL_CHUNK_BYTES);
    const buffer = Buffer.alloc(windowBytes);
    const { bytesRead } = await handle.read(buffer, 0, windowBytes, file.sizeBytes - windowBytes);
    const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    return newline === -1 ? file.sizeBytes : file.sizeBytes - windowBytes + newline + 1;
  } finally {
    await handle.close();
  }
}

/** Reads the position a previous run saved for (target, source), or null. */
export function readSavedOffset(
  db: { prepare(sql: string): { get(...params: unknown[]): unknown } },
  target: string,
  source: string,
): SavedOffset | null {
  const row = db.prepare('SELECT file_path, file_id, offset, updated_ms FROM tailer_offsets WHERE target = ? AND source = ?')
    .get(target, source) as { file_path: string; file_id: string; offset: number; updated_ms: number } | undefined;
  return row ? { filePath: row.file_path, fileId: row.file_id, offset: row.offset, updatedMs: row.updated_ms } : null;
}

export type { LogFormat };

/** What an operator can do about a read failure that is theirs to fix (permissions). */
function readFailureHint(err: unknown): { hint?: string } {
  if ((err as NodeJS.ErrnoException).code !== 'EACCES') return {};
  const uid = process.getuid?.();
  return {
    hint: `pgvigil (uid ${uid ?? '?'}) may not read the log directory or file: give it read access ` +
      '(x and r on the directory, r on the files: log_file_mode 0640 with a shared group, or 0644); reading resumes by itself',
  };
}
