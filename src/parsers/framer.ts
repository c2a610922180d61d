/**
 * The framing stage: physical log lines in, LogEntry out (one entry per server message, its
 * DETAIL/HINT/CONTEXT/STATEMENT/... lines and tab-indented continuation lines folded in).
 *
 * What this folder owns: reading PostgreSQL's three log formats (stderr with any log_line_prefix,
 * optionally behind a syslog header; csvlog; jsonlog), format detection, and the pipeline glue
 * that hands entries to the classifiers (./classify/). What it must never do: read files or keep
 * offsets (the tailer does), touch the store, know what a message means (the classifiers do),
 * or throw on bad input: a line it cannot read is counted in FramingStats and work goes on.
 */
import type { LogEntry } from '../domain/log-entry.js';

export type LogFormat = 'stderr' | 'csvlog' | 'jsonlog';

/** One line of the log, without its '\n'. */
export interface PhysicalLine {
  text: string;
  /** Byte offset of the line's first byte in the file. */
  offset: number;
  /** 1-based line number when known (offline analysis), else null. */
  line: number | null;
}

export interface Framer {
  /**
   * Feeds one line; returns the entries this line completed, in file order of their first line.
   * A stderr entry completes when the next entry of the same process starts, or when no line of
   * it came for `interleaveWindowLines` lines; a csvlog record when its batch is parsed; a jsonlog
   * line at once.
   */
  push(line: PhysicalLine): LogEntry[];
  /** End of input, or idle in live tailing: returns every pending entry. */
  flush(): LogEntry[];
  /**
   * Byte offset from which re-reading reproduces every entry not yet returned (the first byte of
   * the oldest pending entry); null when nothing is pending. Entries come out in file order, so
   * re-reading from here returns no entry twice.
   */
  safeOffset(): number | null;
  readonly stats: FramingStats;
}

/** Why a line did not become (part of) an entry. Operator-visible, so snake_case. */
export const UNPARSED_REASONS = [
  'prefix_mismatch',
  'blank_line',
  'orphan_continuation',
  'orphan_field',
  'invalid_timestamp',
  'unknown_time_zone',
  'ambiguous_time_zone',
  'nonexistent_local_time',
  'syslog_header_mismatch',
  'csv_malformed',
  'csv_truncated',
  'csv_column_count',
  'json_malformed',
  'json_missing_field',
  'unknown_severity',
  /** Another program's line in an envelope stream (CloudNativePG's instance manager, Cloud Logging). */
  'not_postgres',
] as const;
export type UnparsedReason = (typeof UNPARSED_REASONS)[number];

export interface UnparsedExample {
  reason: UnparsedReason;
  offset: number;
  line: number | null;
  /** The line, cut to 300 characters. */
  text: string;
}

/** Self-metrics of a framer; field names are what an operator reads (JSON, /metrics). */
export interface FramingStats {
  lines: number;
  entries: number;
  unparsed_lines: number;
  unparsed_by_reason: Partial<Record<UnparsedReason, number>>;
  /** At most 5 per reason, the first ones seen. */
  examples: UnparsedExample[];
  /** Lines or folded fields cut at the size limit (the rest of the text was dropped). */
  truncated_fields: number;
}
