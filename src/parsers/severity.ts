/**
 * The words that follow log_line_prefix on a stderr line: a severity (error_severity() in elog.c,
 * 13-19) that starts an entry, or a field label (send_message_to_server_log()) that adds a field
 * to the entry of the same process. Only the English words: a server with a translated
 * lc_messages is not supported (pg-messages.md §0).
 */
import type { LogLevel } from '../domain/log-entry.js';

/** Field labels, in the order the server writes them. BACKTRACE has no LogEntry field. */
export type FieldLabel = 'DETAIL' | 'HINT' | 'QUERY' | 'CONTEXT' | 'LOCATION' | 'BACKTRACE' | 'STATEMENT';

/** Regex alternation of every word a prefixed line can carry before ":  ". */
export const LINE_WORDS_PATTERN =
  'LOG|ERROR|STATEMENT|DETAIL|CONTEXT|HINT|WARNING|FATAL|QUERY|NOTICE|INFO|DEBUG|PANIC|LOCATION|BACKTRACE';

/**
 * The LogLevel of a printed severity word, or null when the word is not one. The server prints
 * "DEBUG" for DEBUG1..DEBUG5 alike, so every DEBUG line becomes DEBUG1.
 */
export function levelOf(word: string): LogLevel | null {
  switch (word) {
    case 'LOG': return 'LOG';
    case 'ERROR': return 'ERROR';
    case 'WARNING': return 'WARNING';
    case 'FATAL': return 'FATAL';
    case 'NOTICE': return 'NOTICE';
    case 'INFO': return 'INFO';
    case 'PANIC': return 'PANIC';
    case 'DEBUG': return 'DEBUG1';
    default: return null;
  }
}

export function fieldLabelOf(word: string): FieldLabel | null {
  switch (word) {
    case 'STATEMENT':
    case 'DETAIL':
    case 'CONTEXT':
    case 'HINT':
    case 'QUERY':
    case 'LOCATION':
    case 'BACKTRACE':
      return word;
    default:
      return null;
  }
}
