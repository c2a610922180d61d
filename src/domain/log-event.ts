/**
 * LogEvent: a classified LogEntry. The envelope is the same for every kind; `details` holds the
 * kind's own fields in snake_case (they are what an operator reads in JSON, the API and NDJSON
 * output of `pgvigil analyze --events`). Per-kind detail types live in ./event-details.ts.
 *
 * Entries that match no family become kind `generic` and are still stored and counted.
 */
import type { LogLevel, SourcePosition } from './log-entry.js';
import type { EventDetailsByKind } from './event-details.js';

export const EVENT_KINDS = [
  'autovacuum',
  'autoanalyze',
  'recovery_conflict',
  'recovery_conflict_wait',
  'lock_wait',
  'lock_timeout',
  'statement_timeout',
  'idle_in_transaction_timeout',
  'transaction_timeout',
  'deadlock',
  'checkpoint',
  'server_crash',
  'server_restart',
  'temp_file',
  'slot_invalidated',
  'wraparound_warning',
  'data_corruption',
  'ddl',
  'generic',
] as const;

export type EventKind = (typeof EVENT_KINDS)[number];

export interface LogEvent<K extends EventKind = EventKind> {
  kind: K;
  /** Target (server) name from the config; for `pgvigil analyze`, --target or the file's name (src/analyze/file-targets.ts). */
  target: string;
  /** Epoch milliseconds; entries without a timestamp take the time they were read. */
  tsMs: number;
  pid: number | null;
  database: string | null;
  user: string | null;
  level: LogLevel;
  sqlstate: string | null;
  /**
   * The client's application_name, present only when the log has it (csvlog and jsonlog columns,
   * `%a` in a stderr log_line_prefix) and it is not empty.
   */
  application?: string;
  /** The entry's primary message (first line for multi-line reports), as the server wrote it. */
  message: string;
  /**
   * Present only for a log read through a message catalog (a server whose lc_messages is not
   * English): the catalog's language (`de`, `ja`, `zh_CN`). `message` keeps the translated text;
   * `details` hold what the English message says.
   */
  language?: string;
  details: EventDetailsByKind[K];
  source: SourcePosition;
}

export type AnyLogEvent = { [K in EventKind]: LogEvent<K> }[EventKind];
