/**
 * LogEntry: one framed server-log entry, after the framing stage (stderr prefix / csvlog /
 * jsonlog) and after continuation lines (DETAIL, HINT, CONTEXT, STATEMENT, QUERY, LOCATION,
 * tab-indented lines) were folded into it. Classifiers turn entries into LogEvents.
 *
 * Glossary
 * - entry: one message as the server emitted it (possibly many physical lines).
 * - frame: the part of the framing stage that decides where an entry starts.
 * - source position: file path plus byte offset of the entry's first byte, so a stored event
 *   can always be traced back to the raw log.
 */
export interface SourcePosition {
  /** Path of the log file as pgvigil opened it. */
  file: string;
  /** Byte offset of the first byte of the entry's first line. */
  offset: number;
  /** 1-based physical line number of the entry's first line, when known (offline analysis). */
  line: number | null;
}

export type LogLevel =
  | 'DEBUG5' | 'DEBUG4' | 'DEBUG3' | 'DEBUG2' | 'DEBUG1'
  | 'LOG' | 'INFO' | 'NOTICE' | 'WARNING' | 'ERROR' | 'FATAL' | 'PANIC';

export interface LogEntry {
  /** Epoch milliseconds of the entry, null when the prefix has no timestamp. */
  tsMs: number | null;
  pid: number | null;
  level: LogLevel;
  /** SQLSTATE (%e / csvlog / jsonlog state_code); null when not logged. */
  sqlstate: string | null;
  user: string | null;
  database: string | null;
  application: string | null;
  /** Backend type (csvlog/jsonlog 13+, %b), e.g. "autovacuum worker", "startup". */
  backendType: string | null;
  /** The primary message; for multi-line messages (autovacuum reports) lines joined with "\n". */
  message: string;
  detail: string | null;
  hint: string | null;
  context: string | null;
  statement: string | null;
  query: string | null;
  location: string | null;
  source: SourcePosition;
}
