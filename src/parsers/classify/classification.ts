/**
 * What a family classifier returns: the kind and its details, plus, when the event's message or
 * database should differ from the entry's (multi-line reports keep only their first line; the
 * autovacuum report names its database while the prefix of a background process does not).
 */
import type { EventDetailsByKind, EventKind, LogEntry, SessionFields } from '../../domain/index.js';

export type Classification = {
  [K in EventKind]: { kind: K; details: EventDetailsByKind[K]; message?: string; database?: string };
}[EventKind];

/** Who, where and what, for kinds raised in a client backend. */
export function sessionFields(entry: LogEntry): SessionFields {
  return { pid: entry.pid, database: entry.database, user: entry.user, statement: entry.statement };
}
