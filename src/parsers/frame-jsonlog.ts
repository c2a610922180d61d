/**
 * Framing of jsonlog files (PG 15+, log_destination = 'jsonlog'): one JSON object per line, keys
 * per pg-messages.md §7.2 (absent when the value is absent). Every line is a whole entry.
 */
import type { LogEntry } from '../domain/log-entry.js';
import { locationOf, nameOrNull, pidOfNumber, sourceOf } from './entry-fields.js';
import type { Framer, PhysicalLine, UnparsedReason } from './framer.js';
import { DEFAULT_MAX_FIELD_CHARS, capped, newFramingStats, recordUnparsed } from './framing-stats.js';
import { levelOf } from './severity.js';
import { TimestampParser } from './timestamp.js';

export interface JsonlogFramerOptions {
  /** A server with a translated lc_messages: severity words (`FEHLER`) -> English (`ERROR`). */
  severityWords?: ReadonlyMap<string, string>;
  file: string;
  timezone?: string | null;
  maxFieldChars?: number;
}

export class JsonlogFramer implements Framer {
  readonly stats = newFramingStats();
  private readonly file: string;
  private readonly timestamps: TimestampParser;
  private readonly maxFieldChars: number;

  private readonly severityWords: ReadonlyMap<string, string> | null;

  constructor(options: JsonlogFramerOptions) {
    this.file = options.file;
    this.severityWords = options.severityWords ?? null;
    this.timestamps = new TimestampParser(options.timezone ?? null);
    this.maxFieldChars = options.maxFieldChars ?? DEFAULT_MAX_FIELD_CHARS;
  }

  push(line: PhysicalLine): LogEntry[] {
    this.stats.lines++;
    const entry = this.entryOf(line);
    if (entry === null) return [];
    this.stats.entries++;
    return [entry];
  }

  flush(): LogEntry[] {
    return [];
  }

  safeOffset(): number | null {
    return null;
  }

  private entryOf(line: PhysicalLine): LogEntry | null {
    const text = line.text;
    if (text.charCodeAt(0) !== 123 /* { */) return this.unparsed('json_malformed', line);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return this.unparsed('json_malformed', line);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.unparsed('json_malformed', line);
    const o = value as Record<string, unknown>;
    const timestamp = str(o.timestamp);
    const severity = str(o.error_severity);
    const message = str(o.message);
    if (timestamp === null || severity === null || message === null) return this.unparsed('json_missing_field', line);
    const tsMs = this.timestamps.parse(timestamp);
    if (Number.isNaN(tsMs)) return this.unparsed(this.timestamps.failure, line);
    const level = levelOf(this.severityWords?.get(severity) ?? severity);
    if (level === null) return this.unparsed('unknown_severity', line);
    return {
      tsMs,
      pid: pidOfNumber(o.pid),
      level,
      sqlstate: str(o.state_code),
      user: nameOrNull(str(o.user) ?? undefined),
      database: nameOrNull(str(o.dbname) ?? undefined),
      application: nameOrNull(str(o.application_name) ?? undefined),
      backendType: str(o.backend_type),
      message: capped(this.stats, message, this.maxFieldChars),
      detail: this.cappedOrNull(o.detail),
      hint: this.cappedOrNull(o.hint),
      context: this.cappedOrNull(o.context),
      statement: this.cappedOrNull(o.statement),
      query: this.cappedOrNull(o.internal_query),
      location: locationOf(str(o.func_name), str(o.file_name), typeof o.file_line_num === 'number' ? o.file_line_num : null),
      source: sourceOf(this.file, line),
    };
  }

  private cappedOrNull(value: unknown): string | null {
    const text = str(value);
    return text === null ? null : capped(this.stats, text, this.maxFieldChars);
  }

  private unparsed(reason: UnparsedReason, line: PhysicalLine): null {
    recordUnparsed(this.stats, reason, line, line.text);
    return null;
  }
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}
