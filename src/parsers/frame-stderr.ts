/**
 * Framing of stderr logs (log_destination = 'stderr', with or without the logging collector),
 * optionally behind a syslog header (log_destination = 'syslog' written to a file).
 *
 * A line is one of:
 * - `<prefix><SEVERITY>:  text` starts an entry of that process;
 * - `<prefix>DETAIL:  text` (HINT, QUERY, CONTEXT, LOCATION, BACKTRACE, STATEMENT) adds a field to
 *   the open entry of the same pid, even when other processes' lines came in between;
 * - `\ttext` continues the field the entry's previous line was in (message, DETAIL, CONTEXT...):
 *   append_with_tabs() puts a TAB after every newline inside a message or field;
 * - anything else is counted as unparsed.
 *
 * Entries are returned in the file order of their first line. An entry is complete when the same
 * process starts its next entry, or when `interleaveWindowLines` lines passed without a line of
 * it: the logging collector writes a message's lines together, and without it (stderr captured by
 * systemd or docker) a process writes a message in one write(), so other processes' lines come
 * between a message's lines only within a short window.
 */
import type { LogEntry, LogLevel } from '../domain/log-entry.js';
import type { Framer, PhysicalLine, UnparsedReason } from './framer.js';
import { nameOrNull, sourceOf } from './entry-fields.js';
import { DEFAULT_MAX_FIELD_CHARS, newFramingStats, recordUnparsed } from './framing-stats.js';
import { compilePrefix, execPrefix, pidFromSessionId, type CompiledPrefix } from './prefix.js';
import { fieldLabelOf, levelOf, type FieldLabel } from './severity.js';
import { SyslogHeaderParser, type SyslogHeader } from './syslog-header.js';
import { TimestampParser } from './timestamp.js';

export const DEFAULT_INTERLEAVE_WINDOW_LINES = 64;

/** What push() returns for a line that completes no entry: shared, so frozen. */
const NO_ENTRIES = Object.freeze([]) as unknown as LogEntry[];

export interface StderrFramerOptions {
  /** Path recorded in every entry's source position. */
  file: string;
  /** The server's log_line_prefix. */
  prefix: string;
  /** The server's log_timezone; resolves ambiguous or unknown zone abbreviations. */
  timezone?: string | null;
  /** Lines carry a syslog header before the prefix. */
  syslog?: boolean;
  interleaveWindowLines?: number;
  maxFieldChars?: number;
  /** Only for syslog headers without a year. */
  nowMs?: () => number;
  /**
   * A server with a translated lc_messages: the tokens after the prefix (`FEHLER:  `) -> English
   * word (`ERROR`); lang/translator.ts.
   */
  lineWords?: ReadonlyMap<string, string>;
}

type TextField = 'message' | 'detail' | 'hint' | 'query' | 'context' | 'location' | 'statement';

// BACKTRACE has no LogEntry field: its lines are folded into the entry and dropped.
const FIELD_OF_LABEL: Readonly<Record<FieldLabel, TextField | null>> = {
  DETAIL: 'detail', HINT: 'hint', QUERY: 'query', CONTEXT: 'context', LOCATION: 'location', STATEMENT: 'statement',
  BACKTRACE: null,
};

interface OpenEntry {
  entry: LogEntry;
  /** pid, or -1 when the line carries none. */
  key: number;
  /** The field a tab-indented line continues. */
  field: TextField | null;
  lastSeq: number;
  complete: boolean;
}

export class StderrFramer implements Framer {
  readonly stats = newFramingStats();
  private readonly file: string;
  private readonly prefix: CompiledPrefix;
  private readonly timestamps: TimestampParser;
  private readonly syslog: SyslogHeaderParser | null;
  private readonly windowLines: number;
  private readonly maxFieldChars: number;
  private readonly lineWords: ReadonlyMap<string, string> | null;
  /**
   * Entries not yet returned, in order of their first line; released from `head`. A released slot
   * is cleared at once, so a returned entry dies young instead of being promoted by the GC.
   */
  private readonly queue: (OpenEntry | undefined)[] = [];
  private head = 0;
  /**
   * The open (incomplete) entry of each pid, in a slot per process that stays while the process
   * keeps logging: a busy process's next entry replaces its last one without a Map write.
   */
  private readonly openByPid = new Map<number, { open: OpenEntry }>();
  /** The entry the previous line went to: a tab-indented line continues it. */
  private current: OpenEntry | null = null;
  private seq = 0;

  constructor(options: StderrFramerOptions) {
    this.file = options.file;
    this.lineWords = options.lineWords ?? null;
    this.prefix = compilePrefix(options.prefix, this.lineWords === null ? undefined : [...this.lineWords.keys()]);
    this.timestamps = new TimestampParser(options.timezone ?? null);
    this.syslog = options.syslog === true ? new SyslogHeaderParser(this.timestamps, options.nowMs ?? Date.now) : null;
    this.windowLines = options.interleaveWindowLines ?? DEFAULT_INTERLEAVE_WINDOW_LINES;
    this.maxFieldChars = options.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
  }

  /** The entries the line completed; when none (most lines), one shared frozen empty array. */
  push(line: PhysicalLine): LogEntry[] {
    this.stats.lines++;
    this.seq++;
    this.frameLine(line);
    return this.release(false);
  }

  flush(): LogEntry[] {
    return this.release(true);
  }

  safeOffset(): number | null {
    return this.head < this.queue.length ? (this.queue[this.head] as OpenEntry).entry.source.offset : null;
  }

  private frameLine(line: PhysicalLine): void {
    let text = line.text;
    if (text.length > this.maxFieldChars) {
      text = text.slice(0, this.maxFieldChars);
      this.stats.truncated_fields++;
    }
    if (text.charCodeAt(text.length - 1) === 13) text = text.slice(0, -1); // CRLF files

    let body = text;
    let header: SyslogHeader | null = null;
    if (this.syslog !== null) {
      header = this.syslog.parse(text);
      if (header === null) return this.unparsed('syslog_header_mismatch', line, text);
      body = text.slice(header.bodyStart);
    }
    if (body.charCodeAt(0) === 9) return this.continueEntry(body.slice(1), '\n', line, text, header);
    if (header !== null && body.startsWith('#011')) return this.continueEntry(body.slice(4), '\n', line, text, header);

    const m = execPrefix(this.prefix, body);
    if (m === null) {
      // A long line that write_syslog() cut into pieces continues without a prefix.
      if (header !== null && header.chunk > 1) return this.continueEntry(body, '', line, text, header);
      return this.unparsed(body.length === 0 ? 'blank_line' : 'prefix_mismatch', line, text);
    }
    const token = m[this.prefix.groups.word] as string;
    const word = this.lineWords === null ? token : (this.lineWords.get(token) as string);
    const content = body.slice(m[0].length);
    const pid = this.pidOf(m, header);
    const level = levelOf(word);
    if (level !== null) return this.startEntry(m, level, pid, content, line, text, header);
    const label = fieldLabelOf(word) as FieldLabel; // the regex admits only severities and labels
    this.addField(FIELD_OF_LABEL[label], pid, content, line, text);
  }

  private startEntry(
    m: RegExpExecArray, level: LogLevel, pid: number | null, content: string,
    line: PhysicalLine, text: string, header: SyslogHeader | null,
  ): void {
    const tsMs = this.timeOf(m, header);
    if (tsMs !== null && Number.isNaN(tsMs)) return this.unparsed(this.timestamps.failure, line, text);
    const g = this.prefix.groups;
    let sqlstate = g.sqlstate === 0 ? null : (m[g.sqlstate] ?? null);
    let message = content;
    if (hasVerboseSqlstate(content)) {
      // log_error_verbosity = verbose: "LOG:  00000: message"
      sqlstate = content.slice(0, 5);
      message = content.slice(7);
    }
    const entry: LogEntry = {
      tsMs,
      pid,
      level,
      sqlstate,
      user: g.user === 0 ? null : nameOrNull(m[g.user]),
      database: g.database === 0 ? null : nameOrNull(m[g.database]),
      application: g.application === 0 ? null : nameOrNull(m[g.application]),
      backendType: g.backendType === 0 ? null : nameOrNull(m[g.backendType]),
      message,
      detail: null,
      hint: null,
      context: null,
      statement: null,
      query: null,
      location: null,
      source: sourceOf(this.file, line),
    };
    const key = pid ?? -1;
    const open: OpenEntry = { entry, key, field: 'message', lastSeq: this.seq, complete: false };
    const slot = this.openByPid.get(key);
    if (slot === undefined) {
      this.openByPid.set(key, { open });
    } else {
      slot.open.complete = true;
      slot.open = open;
    }
    this.queue.push(open);
    this.current = open;
  }

  private addField(field: TextField | null, pid: number | null, content: string, line: PhysicalLine, text: string): void {
    const target = this.openByPid.get(pid ?? -1)?.open;
    if (target === undefined) return this.unparsed('orphan_field', line, text);
    target.lastSeq = this.seq;
    target.field = field;
    this.current = target;
    if (field === null) return;
    const existing = target.entry[field];
    target.entry[field] = existing === null ? content : this.joined(existing, '\n', content);
  }

  private continueEntry(content: string, separator: string, line: PhysicalLine, text: string, header: SyslogHeader | null): void {
    const target = header !== null ? this.openByPid.get(header.pid)?.open : this.current;
    if (target === undefined || target === null) return this.unparsed('orphan_continuation', line, text);
    target.lastSeq = this.seq;
    this.current = target;
    const field = target.field;
    if (field === null) return;
    target.entry[field] = this.joined(target.entry[field] ?? '', separator, content);
  }

  private joined(existing: string, separator: string, addition: string): string {
    if (existing.length + separator.length + addition.length <= this.maxFieldChars) return existing + separator + addition;
    this.stats.truncated_fields++;
    if (existing.length >= this.maxFieldChars) return existing;
    return (existing + separator + addition).slice(0, this.maxFieldChars);
  }

  private pidOf(m: RegExpExecArray, header: SyslogHeader | null): number | null {
    const g = this.prefix.groups;
    const pid = g.pid === 0 ? undefined : m[g.pid];
    if (pid !== undefined) return decimal(pid);
    const session = g.session === 0 ? undefined : m[g.session];
    if (session !== undefined) return pidFromSessionId(session);
    return header?.pid ?? null;
  }

  /** Epoch ms; null when the line has no time; NaN when the time is invalid. */
  private timeOf(m: RegExpExecArray, header: SyslogHeader | null): number | null {
    const g = this.prefix.groups;
    const text = g.timestamp === 0 ? undefined : m[g.timestamp];
    if (text !== undefined) {
      if (this.prefix.timestampKind === 'n') return this.timestamps.parseEpoch(text);
      return this.timestamps.parseDateTime(text, m[g.time] ?? '', g.millis === 0 ? undefined : m[g.millis], m[g.zone] ?? '');
    }
    if (header !== null && this.syslog !== null) {
      const ms = this.syslog.timeOfLast();
      if (Number.isNaN(ms)) this.timestamps.failure = 'invalid_timestamp';
      return ms;
    }
    return null;
  }

  private unparsed(reason: UnparsedReason, line: PhysicalLine, text: string): void {
    recordUnparsed(this.stats, reason, line, text);
    this.current = null;
  }

  /** Removes finished entries from the head of the queue and returns them; all of them when `all`. */
  private release(all: boolean): LogEntry[] {
    const queue = this.queue;
    let out: LogEntry[] | null = null;
    while (this.head < queue.length) {
      const open = queue[this.head] as OpenEntry;
      if (!all && !open.complete && this.seq - open.lastSeq <= this.windowLines) break;
      // A complete entry was replaced in its slot when its process started the next one.
      if (!open.complete && this.openByPid.get(open.key)?.open === open) this.openByPid.delete(open.key);
      if (this.current === open) this.current = null;
      (out ??= []).push(open.entry);
      queue[this.head++] = undefined;
    }
    if (out === null) return NO_ENTRIES;
    this.stats.entries += out.length;
    if (this.head === queue.length) {
      queue.length = 0;
      this.head = 0;
    } else if (this.head >= 1024) {
      queue.splice(0, this.head); // what remains is the few open entries
      this.head = 0;
    }
    return out;
  }
}

/** A string of 1-10 digits (the regex checked) as a number; cheaper than Number() per line. */
function decimal(digits: string): number {
  let value = 0;
  for (let i = 0; i < digits.length; i++) value = value * 10 + (digits.charCodeAt(i) - 48);
  return value;
}

/** "XX000: " at the start: five SQLSTATE characters (every SQLSTATE has a digit), colon, space. */
function hasVerboseSqlstate(content: string): boolean {
  if (content.charCodeAt(5) !== 58 || content.charCodeAt(6) !== 32) return false;
  let digit = false;
  for (let i = 0; i < 5; i++) {
    const c = content.charCodeAt(i);
    if (c >= 48 && c <= 57) digit = true;
    else if (!(c >= 65 && c <= 90)) return false;
  }
  return digit;
}
