/**
 * The parsing side of a log source: one pipeline per file (events carry the file's path), format
 * detection when the format is `auto`, and parser statistics added up across files.
 *
 * Owns: when a pipeline is created and what it is fed. Never: I/O or offsets of its own (the
 * tailer and the offline reader own those; `safeOffset()` passes the pipeline's through).
 */
import type { AnyLogEvent, Clock } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import type { PhysicalLine } from '../parsers/framer.js';
import { detectInput } from '../parsers/formats/detect-input.js';
import { parseInputFormat, type InputFormat } from '../parsers/formats/input-format.js';
import { createLogPipeline, type LogPipeline, type PipelineStats } from '../parsers/log-pipeline.js';
import type { DetectedFormat } from '../parsers/detect-format.js';
import type { LanguageSetting } from '../parsers/lang/index.js';
import type { Translator } from '../parsers/lang/translator.js';
import type { LineSplitter } from './line-reader.js';

export interface ParserSettings {
  /** Target (server) name stamped on every event. */
  target: string;
  /** PostgreSQL's formats, an envelope around one (analyze), or auto. */
  format: InputFormat;
  /** log_line_prefix for stderr; detected when absent. */
  prefix?: string;
  /** Zone for timestamps printed without one (%t/%m with an abbreviation PostgreSQL left out). */
  timezone?: string;
  /** Time of entries whose prefix has none. */
  clock?: Clock;
  /** The log's language (parsers/lang); English when absent. */
  language?: LanguageSetting;
}

export type { PipelineStats };

/** What a parser logs to: what it detected. Not the whole Logger, so `analyze` can run without loading pino. */
export type ParserLog = Pick<Logger, 'info'>;

/** A translated log's language and the majors of the shipped catalogs it is read with. */
export interface LogTranslation {
  language: string;
  majors: number[];
}

/** Lines held back for detection before giving up and using what was found. */
const DETECT_LINES = 200;

export class SourceParser {
  private pipeline: LogPipeline | null = null;
  private file: string | null = null;
  private resolved: DetectedFormat | null;
  /** Lines read while the format is still unknown (auto): parsed once it is known. */
  private undetected: PhysicalLine[] = [];
  private closed: PipelineStats | null = null;
  /** The current file's translator; undefined while it is being detected. */
  private translator: Translator | null | undefined;

  /** setLanguage() was called: the next lines are read with the new language. */
  private languageChanged = false;

  constructor(private settings: ParserSettings, private readonly log: ParserLog) {
    // Known from the settings alone, or null: a named envelope has its inside detected unless --prefix tells it.
    const named = parseInputFormat(settings.format);
    this.resolved = named === null ? null : detectInput([], { final: true, named, prefix: settings.prefix });
    this.translator = this.fixedTranslator();
  }

  /** The language the current file was read in; null for English or while undetected. */
  get language(): string | null {
    return this.translator?.language ?? null;
  }

  /** The current file's language and the catalog majors it is read with (a worker builds the same translator from them); null for English or while undetected. */
  get translation(): LogTranslation | null {
    return this.translator ? { language: this.translator.language, majors: this.translator.majors } : null;
  }

  private fixedTranslator(): Translator | null | undefined {
    const language = this.settings.language;
    if (language === undefined) return null;
    return 'translator' in language ? language.translator : undefined;
  }

  /** The format in use, once known. */
  get format(): DetectedFormat | null {
    return this.resolved;
  }

  /** Starts a new file: the previous pipeline's counts are kept, its pending state dropped. */
  openFile(file: string): void {
    this.retirePipeline();
    this.file = file;
    this.undetected = [];
    this.translator = this.fixedTranslator();
  }

  /**
   * The log's language, learned after reading began (the server's lc_messages, once it could be
   * asked): the entries pending so far are finished as they were read, the next lines are read
   * with it.
   */
  setLanguage(language: ParserSettings['language']): void {
    this.settings = { ...this.settings, language };
    this.languageChanged = true;
  }

  /** Splits `chunk` with `splitter` and returns the events the completed lines finished. */
  take(splitter: LineSplitter, chunk: Buffer): AnyLogEvent[] {
    const events: AnyLogEvent[] = this.languageChanged ? this.switchLanguage() : [];
    const pipeline = this.pipeline ?? this.startPipeline(false);
    if (pipeline) {
      splitter.push(chunk, (line) => {
        const out = pipeline.push(line);
        for (let i = 0; i < out.length; i++) events.push(out[i]!);
      });
      return events;
    }
    splitter.push(chunk, (line) => this.undetected.push(line));
    const started = this.startPipeline(false);
    if (started) for (const line of this.takeUndetected()) events.push(...started.push(line));
    return events;
  }

  /** Feeds one line (offline reading, where the caller splits). */
  push(line: PhysicalLine): AnyLogEvent[] {
    if (this.languageChanged) return [...this.switchLanguage(), ...this.push(line)];
    const pipeline = this.pipeline ?? this.startPipeline(false);
    if (pipeline) return pipeline.push(line);
    this.undetected.push(line);
    const started = this.startPipeline(false);
    if (!started) return [];
    const events: AnyLogEvent[] = [];
    for (const held of this.takeUndetected()) events.push(...started.push(held));
    return events;
  }

  /** Everything pending becomes final (end of file, idle, rotation). */
  flush(): AnyLogEvent[] {
    const pipeline = this.pipeline ?? this.startPipeline(true);
    if (!pipeline) return [];
    const events: AnyLogEvent[] = [];
    for (const line of this.takeUndetected()) events.push(...pipeline.push(line));
    events.push(...pipeline.flush());
    return events;
  }

  /**
   * The file is final (rotated away): a last line whose newline never came is its last line, and
   * everything pending is flushed.
   */
  finish(splitter: LineSplitter): AnyLogEvent[] {
    const events: AnyLogEvent[] = [];
    splitter.end((line) => events.push(...this.push(line)));
    events.push(...this.flush());
    return events;
  }

  /** First byte of the oldest line not yet turned into a returned event; null when none. */
  safeOffset(): number | null {
    if (this.undetected.length > 0) return this.undetected[0]!.offset;
    return this.pipeline?.safeOffset() ?? null;
  }

  hasPending(): boolean {
    return this.safeOffset() !== null;
  }

  /** Counts of every file parsed so far, the current one included. */
  stats(): PipelineStats | null {
    const current = this.pipeline?.stats ?? null;
    if (!this.closed) return current ? structuredClone(current) : null;
    return current ? addStats(structuredClone(this.closed), current) : structuredClone(this.closed);
  }

  private startPipeline(force: boolean): LogPipeline | null {
    if (this.file === null) throw new Error('SourceParser: openFile() must come first');
    const language = this.settings.language;
    const detector = language !== undefined && 'detect' in language ? language : null;
    // The language is told by as many first lines as the format (the whole file when shorter).
    if (this.translator === undefined && !force && this.undetected.length < DETECT_LINES) return null;
    const lineWords = this.translator === undefined ? detector?.detect.lineWords : this.translator?.lineWordList;
    if (!this.resolved) {
      const named = parseInputFormat(this.settings.format) ?? undefined;
      const texts = this.undetected.map((l) => l.text);
      if (!force && this.undetected.length < DETECT_LINES) {
        const found = detectInput(texts, { final: false, named, prefix: this.settings.prefix, lineWords });
        if (!found) return null;
        this.resolved = found;
      } else {
        this.resolved = detectInput(texts, { final: true, named, prefix: this.settings.prefix, lineWords }) ?? { format: 'stderr', envelope: named?.envelope };
      }
      this.log.info({ file: this.file, ...this.resolved }, 'log format detected');
    }
    if (this.translator === undefined && detector !== null) {
      const lines = this.undetected.map((l) => l.text);
      const found = detector.detect.detect(lines);
      this.translator = found === null ? null : detector.translatorFor(found, lines);
      if (this.translator) this.log.info({ file: this.file, language: found, majors: this.translator.majors }, 'log language detected');
    }
    this.pipeline = createLogPipeline({
      target: this.settings.target, format: this.resolved.format, prefix: this.resolved.prefix, syslog: this.resolved.syslog, envelope: this.resolved.envelope,
      timezone: this.settings.timezone, file: this.file, clock: this.settings.clock, translator: this.translator ?? null,
    });
    return this.pipeline;
  }

  private switchLanguage(): AnyLogEvent[] {
    this.languageChanged = false;
    this.translator = this.fixedTranslator();
    if (this.pipeline === null) return [];
    const pending = this.pipeline.flush();
    this.retirePipeline();
    return pending;
  }

  private takeUndetected(): PhysicalLine[] {
    const lines = this.undetected;
    this.undetected = [];
    return lines;
  }

  private retirePipeline(): void {
    if (!this.pipeline) return;
    this.closed = this.closed ? addStats(this.closed, this.pipeline.stats) : structuredClone(this.pipeline.stats);
    this.pipeline = null;
  }
}

const MAX_MERGED_EXAMPLES = 50;

/** Adds `more` into `into`: numbers and maps of numbers add up, example lists are concatenated. */
export function addStats<T>(into: T, more: T): T {
  const target = into as Record<string, unknown>;
  for (const [key, value] of Object.entries(more as Record<string, unknown>)) {
    const have = target[key];
    if (typeof value === 'number') target[key] = (typeof have === 'number' ? have : 0) + value;
    else if (Array.isArray(value)) target[key] = [...(Array.isArray(have) ? have : []), ...value].slice(0, MAX_MERGED_EXAMPLES);
    else if (value && typeof value === 'object') target[key] = addStats((have && typeof have === 'object' ? have : {}) as object, value as object);
  }
  return into;
}
