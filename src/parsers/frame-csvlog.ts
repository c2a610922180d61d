/**
 * Framing of csvlog files (log_destination = 'csvlog'): one CSV record per entry, columns per
 * pg-messages.md §7.1. Multi-line messages keep raw newlines inside quoted fields, so a record can
 * span several physical lines: lines are collected until the record's quotes balance (PostgreSQL
 * doubles a quote inside a field, which keeps the count even), then csv-parse reads the record.
 *
 * A record that never closes its quotes (the server died mid-write, the disk filled) is noticed
 * when the next line starts like a new record, and counted as csv_truncated with its lines.
 *
 * Speed: a record written as PostgreSQL writes it is split by csv-record.ts; csv-parse (~26 us a
 * call) reads only the records that one declines. Complete records wait in a batch of
 * `batchRecords` before they are read; flush() (end of file, idle tailer) reads what waits.
 */
import { createRequire } from 'node:module';
import type { LogEntry } from '../domain/log-entry.js';
import { nameOrNull, pidOfText, sourceOf, textOrNull } from './entry-fields.js';
import type { Framer, PhysicalLine, UnparsedReason } from './framer.js';
import { DEFAULT_MAX_FIELD_CHARS, capped, newFramingStats, recordUnparsed } from './framing-stats.js';
import { splitCsvRecord } from './csv-record.js';
import { levelOf } from './severity.js';
import { TimestampParser } from './timestamp.js';

export interface CsvlogFramerOptions {
  /** A server with a translated lc_messages: severity words (`FEHLER`) -> English (`ERROR`). */
  severityWords?: ReadonlyMap<string, string>;
  file: string;
  timezone?: string | null;
  maxFieldChars?: number;
  /** Complete records parsed together; 1 returns every record on its last line. */
  batchRecords?: number;
}

export const DEFAULT_BATCH_RECORDS = 64;

/** A record whose quotes balance, waiting to be parsed. */
interface CompleteRecord {
  text: string;
  first: PhysicalLine;
  lineCount: number;
}

const PARSE_OPTIONS = { relax_column_count: true, record_delimiter: '\n' } as const;

// 12 and older: 23 columns; PG 13+: backend_type (24); PG 14+: leader_pid, query_id (26).
const COLUMN_COUNTS = new Set([23, 24, 26]);
/** The start of a csvlog record: log_time and its comma. */
export const CSV_RECORD_START = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [A-Za-z0-9+-]{1,10},/;

const enum Col {
  LogTime = 0, UserName = 1, DatabaseName = 2, ProcessId = 3, ErrorSeverity = 11, SqlStateCode = 12,
  Message = 13, Detail = 14, Hint = 15, InternalQuery = 16, Context = 18, Query = 19, Location = 21,
  ApplicationName = 22, BackendType = 23,
}

export class CsvlogFramer implements Framer {
  readonly stats = newFramingStats();
  private readonly file: string;
  private readonly timestamps: TimestampParser;
  private readonly maxFieldChars: number;
  private readonly batchRecords: number;
  private ready: CompleteRecord[] = [];
  /** The open record: its lines, its first line, its size. */
  private lines: string[] = [];
  private first: PhysicalLine | null = null;
  private chars = 0;
  private insideQuotes = false;

  private readonly severityWords: ReadonlyMap<string, string> | null;

  constructor(options: CsvlogFramerOptions) {
    this.file = options.file;
    this.severityWords = options.severityWords ?? null;
    this.timestamps = new TimestampParser(options.timezone ?? null);
    this.maxFieldChars = options.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
    this.batchRecords = Math.max(1, options.batchRecords ?? DEFAULT_BATCH_RECORDS);
  }

  push(line: PhysicalLine): LogEntry[] {
    this.stats.lines++;
    const text = line.text;
    if (this.first !== null && CSV_RECORD_START.test(text)) this.dropOpen('csv_truncated');
    if (this.first === null) this.first = line;
    this.lines.push(text);
    this.chars += text.length + 1;
    if (countQuotes(text) % 2 === 1) this.insideQuotes = !this.insideQuotes;
    if (this.insideQuotes) {
      // A stray quote would swallow the rest of the file: give up past a generous bound.
      if (this.chars > 16 * this.maxFieldChars) this.dropOpen('csv_malformed');
      return [];
    }
    const first = this.first;
    this.ready.push({ text: this.lines.length === 1 ? text : this.lines.join('\n'), first, lineCount: this.lines.length });
    this.reset();
    return this.ready.length >= this.batchRecords ? this.parseReady() : [];
  }

  flush(): LogEntry[] {
    if (this.first !== null) this.dropOpen('csv_truncated');
    return this.parseReady();
  }

  safeOffset(): number | null {
    return this.ready[0]?.first.offset ?? this.first?.offset ?? null;
  }

  private parseReady(): LogEntry[] {
    const records = this.ready;
    if (records.length === 0) return [];
    this.ready = [];
    const out: LogEntry[] = [];
    for (let i = 0; i < records.length; i++) {
      const record = records[i] as CompleteRecord;
      const row = splitCsvRecord(record.text) ?? parseRows(record.text, 1)?.[0];
      const entry = row === undefined ? this.unparsed('csv_malformed', record) : this.entryOf(row, record);
      if (entry !== null) out.push(entry);
    }
    this.stats.entries += out.length;
    return out;
  }

  private entryOf(row: string[], record: CompleteRecord): LogEntry | null {
    const first = record.first;
    if (!COLUMN_COUNTS.has(row.length)) return this.unparsed('csv_column_count', record);
    const tsMs = this.timestamps.parse(row[Col.LogTime] ?? '');
    if (Number.isNaN(tsMs)) return this.unparsed(this.timestamps.failure, record);
    const severity = row[Col.ErrorSeverity] ?? '';
    const level = levelOf(this.severityWords?.get(severity) ?? severity);
    if (level === null) return this.unparsed('unknown_severity', record);
    return {
      tsMs,
      pid: pidOfText(row[Col.ProcessId]),
      level,
      sqlstate: textOrNull(row[Col.SqlStateCode]),
      user: nameOrNull(row[Col.UserName]),
      database: nameOrNull(row[Col.DatabaseName]),
      application: nameOrNull(row[Col.ApplicationName]),
      backendType: textOrNull(row[Col.BackendType]), // PG 13+
      message: capped(this.stats, row[Col.Message] ?? '', this.maxFieldChars),
      detail: this.cappedOrNull(row[Col.Detail]),
      hint: this.cappedOrNull(row[Col.Hint]),
      context: this.cappedOrNull(row[Col.Context]),
      statement: this.cappedOrNull(row[Col.Query]),
      query: this.cappedOrNull(row[Col.InternalQuery]),
      location: textOrNull(row[Col.Location]),
      source: sourceOf(this.file, first),
    };
  }

  private cappedOrNull(text: string | undefined): string | null {
    const value = textOrNull(text);
    return value === null ? null : capped(this.stats, value, this.maxFieldChars);
  }

  private dropOpen(reason: UnparsedReason): void {
    if (this.first !== null) this.unparsed(reason, { text: this.lines[0] ?? '', first: this.first, lineCount: this.lines.length });
    this.reset();
  }

  private reset(): void {
    this.lines = [];
    this.first = null;
    this.chars = 0;
    this.insideQuotes = false;
  }

  private unparsed(reason: UnparsedReason, record: CompleteRecord): null {
    recordUnparsed(this.stats, reason, record.first, record.text, record.lineCount);
    return null;
  }
}

/**
 * csv-parse is required on the first record the fast path declines: loaded with the module, it
 * cost every `analyze` and every parsing worker, whatever the format, tens of ms of CPU.
 */
const requireHere = createRequire(import.meta.url);

/** The rows of `text` when csv-parse reads exactly `count` of them; null otherwise. */
function parseRows(text: string, count: number): string[][] | null {
  try {
    const { parse } = requireHere('csv-parse/sync') as typeof import('csv-parse/sync');
    const rows = parse(text, PARSE_OPTIONS) as string[][];
    return rows.length === count ? rows : null;
  } catch {
    return null;
  }
}

function countQuotes(text: string): number {
  let count = 0;
  for (let i = text.indexOf('"'); i >= 0; i = text.indexOf('"', i + 1)) count++;
  return count;
}
