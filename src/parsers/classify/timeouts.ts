/**
 * Timeout cancellations and terminations (postgres.c ProcessInterrupts(), 13-19):
 * lock_timeout (ERROR 55P03), statement_timeout (ERROR 57014), idle_in_transaction_session_timeout
 * (FATAL 25P03) and transaction_timeout (FATAL 25P04, 17+). The messages carry no DETAIL; a PG 19+
 * lock timeout has the CONTEXT `waiting for <mode> on <lock>`, and a statement timeout inside a
 * function the CONTEXT of where it ran (`PL/pgSQL function f() line 3 at SQL statement`).
 */
import type { LogEntry } from '../../domain/index.js';
import { sessionFields, type Classification } from './classification.js';
import { lockFromContext } from './lock-object.js';

export const LOCK_TIMEOUT = 'canceling statement due to lock timeout';
export const STATEMENT_TIMEOUT = 'canceling statement due to statement timeout';
export const IDLE_IN_TRANSACTION_TIMEOUT = 'terminating connection due to idle-in-transaction timeout';
export const TRANSACTION_TIMEOUT = 'terminating connection due to transaction timeout';

/** `message` is one of the four texts above; null otherwise. */
export function classifyTimeout(entry: LogEntry, message: string): Classification | null {
  switch (message) {
    case LOCK_TIMEOUT: {
      const lock = lockFromContext(entry.context);
      return {
        kind: 'lock_timeout',
        details: {
          ...sessionFields(entry),
          lock_mode: lock?.lock_mode ?? null,
          lock_object: lock?.lock_object ?? null,
          context: entry.context,
        },
      };
    }
    case STATEMENT_TIMEOUT:
      return { kind: 'statement_timeout', details: { ...sessionFields(entry), context: entry.context } };
    case IDLE_IN_TRANSACTION_TIMEOUT:
      return { kind: 'idle_in_transaction_timeout', details: sessionFields(entry) };
    // PG 17+.
    case TRANSACTION_TIMEOUT:
      return { kind: 'transaction_timeout', details: sessionFields(entry) };
    default:
      return null;
  }
}
