/**
 * Classification: LogEntry -> typed LogEvent. Owns the dispatch from a message's first words to
 * the family classifier (one file per family); pure, no I/O, no clock, never throws.
 *
 * Dispatch is by the message's first character, then a `startsWith` on its leading words, and
 * only then a regex: most entries of a busy log are `duration: ... statement: ...` lines, which
 * must become generic after two character checks (pipeline target >= 100 MB/s).
 * Anything not recognised becomes kind `generic` with level and SQLSTATE intact, and with the
 * entry's STATEMENT, CONTEXT, DETAIL and HINT when it has them. Every event's
 * message is the entry's without the two decorations only stderr adds (a verbose `SQLSTATE: `
 * prefix, a ` at character N` suffix), so stderr, csvlog and jsonlog agree.
 * Message texts are English: a server with a translated lc_messages yields only generic events.
 */
import type { AnyLogEvent, GenericDetails, LogEntry } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { classifyAutoanalyze } from './autoanalyze.js';
import { classifyAutovacuum } from './autovacuum.js';
import { classifyCheckpoint } from './checkpoint.js';
import { CHECKSUM_FAILED, classifyDataCorruption, INVALID_PAGE } from './data-corruption.js';
import { classifyDdl } from './ddl.js';
import { classifyDeadlock, DEADLOCK_DETECTED } from './deadlock.js';
import { classifyLockWait } from './lock-wait.js';
import { classifyRecoveryConflict, classifyRecoveryConflictWait } from './recovery-conflict.js';
import { classifyServerCrash, mentionsChildPid } from './server-crash.js';
import { classifyServerRestart } from './server-restart.js';
import { classifySlotInvalidated } from './slot-invalidated.js';
import { classifyTempFile } from './temp-file.js';
import { classifyTimeout } from './timeouts.js';
import { classifyWraparound } from './wraparound.js';

export type { Classification } from './classification.js';

/**
 * Classifies one entry. `receivedMs` stands in for the timestamp of an entry whose prefix has
 * none (the caller's Clock; the classifier has no clock of its own); without either, 0.
 */
export function classifyEntry(entry: LogEntry, target: string, receivedMs?: number): AnyLogEvent {
  let message = entry.message;
  let classification: Classification | null;
  try {
    message = stripCursorPosition(stripSqlstate(message));
    classification = classifyMessage(entry, message);
  } catch (error) {
    // A classifier bug must not stop the stream: keep the entry as generic and say why.
    // The entry may be what failed to read: its continuation lines are not touched again.
    const details: GenericDetails = { classified: false, classify_error: error instanceof Error ? error.message : String(error) };
    return envelope(entry, target, receivedMs, message, { kind: 'generic', details });
  }
  return envelope(entry, target, receivedMs, message, classification ?? unclassified(entry));
}

/**
 * What an entry no family recognises becomes: most entries of a busy log (duration and statement
 * lines, with no continuation lines), so one frozen object serves them all instead of two new ones
 * per entry.
 */
const UNCLASSIFIED: Classification = Object.freeze({ kind: 'generic', details: Object.freeze({ classified: false }) });

function unclassified(entry: LogEntry): Classification {
  if (entry.statement === null && entry.context === null && entry.detail === null && entry.hint === null) return UNCLASSIFIED;
  return { kind: 'generic', details: { classified: false, ...continuationLines(entry) } };
}

/** The entry's STATEMENT, CONTEXT, DETAIL and HINT, only those it has. */
function continuationLines(entry: LogEntry): Pick<GenericDetails, 'statement' | 'context' | 'detail' | 'hint'> {
  return {
    ...(entry.statement !== null && { statement: entry.statement }),
    ...(entry.context !== null && { context: entry.context }),
    ...(entry.detail !== null && { detail: entry.detail }),
    ...(entry.hint !== null && { hint: entry.hint }),
  };
}

function envelope(entry: LogEntry, target: string, receivedMs: number | undefined, message: string, c: Classification): AnyLogEvent {
  // TypeScript cannot correlate `kind` and `details` through the spread union; Classification
  // already guarantees they belong together.
  const event = {
    kind: c.kind,
    target,
    tsMs: entry.tsMs ?? receivedMs ?? 0,
    pid: entry.pid,
    database: entry.database ?? c.database ?? null,
    user: entry.user,
    level: entry.level,
    sqlstate: entry.sqlstate,
    message: c.message ?? message,
    details: c.details,
    source: entry.source,
  } as AnyLogEvent;
  // Only when logged: most logs have no %a, and their events stay as they were.
  if (entry.application !== null) event.application = entry.application;
  return event;
}

/**
 * With log_error_verbosity = verbose the stderr message reads `SQLSTATE: text`; the framing
 * normally moves the code to `sqlstate`, this covers a framing that did not.
 */
function stripSqlstate(message: string): string {
  if (message.charCodeAt(5) !== 58 /* : */ || message.charCodeAt(6) !== 32) return message;
  return /^[0-9A-Z]{5}: /.test(message) ? message.slice(7) : message;
}

const CURSOR_POSITION = ' at character ';
const STATEMENT = 'statement: ';

/**
 * stderr appends ` at character N` to the message of an error raised at a known position of the
 * query (elog.c; e.g. a lock wait or lock timeout during parse analysis); csvlog and jsonlog keep
 * the position in a column of its own. Removed so every format yields the same message. Reads
 * only the message's tail: most messages do not end in a digit and cost one character test.
 */
function stripCursorPosition(message: string): string {
  let i = message.length - 1;
  while (i >= 0 && message.charCodeAt(i) >= 48 && message.charCodeAt(i) <= 57) i--;
  if (i === message.length - 1) return message;
  const start = i + 1 - CURSOR_POSITION.length;
  return start > 0 && message.startsWith(CURSOR_POSITION, start) ? message.slice(0, start) : message;
}

function classifyMessage(entry: LogEntry, message: string): Classification | null {
  switch (message.charCodeAt(0)) {
    case 100: // d
      // "duration: ..." is most of a busy log: out after one more character.
      if (message.charCodeAt(1) === 117 /* u */) return null;
      if (message === DEADLOCK_DETECTED) return classifyDeadlock(entry);
      if (message.startsWith('database system ')) return classifyServerRestart(message);
      if (message.startsWith('database ')) return classifyWraparound(message);
      break;
    case 115: // s
      if (message.startsWith(STATEMENT)) return classifyDdl(message, STATEMENT.length);
      if (message.startsWith('shutting down ') || message.startsWith('selected new timeline ')) return classifyServerRestart(message);
      break;
    case 97: // a
      if (message.startsWith('automatic ')) {
        if (message.startsWith('automatic analyze ')) return classifyAutoanalyze(entry, message);
        return classifyAutovacuum(entry, message);
      }
      if (message.startsWith('all server processes ') || message.startsWith('aborting startup ')) {
        return classifyServerRestart(message);
      }
      break;
    case 99: // c
      if (message.startsWith('canceling statement due to ')) {
        if (message === 'canceling statement due to conflict with recovery') return classifyRecoveryConflict(entry, false);
        return classifyTimeout(entry, message);
      }
      // "checkpointer process (PID n) ..." is a child exit, hence the space.
      if (message.startsWith('checkpoint ') || message.startsWith('checkpoints ')) return classifyCheckpoint(message);
      break;
    case 116: // t
      if (message.startsWith('temporary file: ')) return classifyTempFile(entry, message);
      if (message.startsWith('terminating ')) return classifyTerminating(entry, message);
      break;
    case 112: // p
      if (message.startsWith('process ')) return classifyLockWait(entry, message);
      if (message.startsWith(CHECKSUM_FAILED)) return classifyDataCorruption(message);
      break;
    case 114: // r
      if (message.startsWith('recovery ')) return classifyRecoveryConflictWait(entry, message);
      if (message.startsWith('restartpoint ')) return classifyCheckpoint(message);
      // "redo starts/done/is not required", "received ... shutdown request", "received promote request".
      if (message.startsWith('re')) return classifyServerRestart(message);
      break;
    case 105: // i
      if (message.startsWith('invalidating ')) return classifySlotInvalidated(entry, message);
      if (message.startsWith(INVALID_PAGE)) return classifyDataCorruption(message);
      break;
    case 101: // e
      if (message.startsWith('execute ')) return classifyDdl(message, message.indexOf(': ') + 2);
      break;
    default:
      break;
  }
  // Child exits name any process type (`server process`, `background worker "x"`, `checkpointer
  // process`...), so they are found by their `(PID n)` instead of their first word.
  if (entry.level === 'LOG' && mentionsChildPid(message)) return classifyServerCrash(entry, message);
  return null;
}

function classifyTerminating(entry: LogEntry, message: string): Classification | null {
  if (message === 'terminating connection due to conflict with recovery') return classifyRecoveryConflict(entry, true);
  if (message.startsWith('terminating connection due to ')) return classifyTimeout(entry, message);
  if (message.startsWith('terminating process ')) return classifySlotInvalidated(entry, message);
  return classifyServerRestart(message);
}
