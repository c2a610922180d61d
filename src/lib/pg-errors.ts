/**
 * Which errors are the connection's rather than the query's, and a stable code for any error:
 * the poll scheduler reconnects or re-probes on connection errors, the central store's readers
 * report a central database that went away. Both stages need it, so it lives here.
 */

// Node socket errors, SQLSTATE class 08 (connection exception), and 57P01-57P04 (shutdown,
// crash, not yet accepting connections, database dropped under a standby's session): the
// connection, not the query, is the problem.
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'ENOENT']);

/** A stable code for an error: SQLSTATE, Node errno, or a pgvigil code. */
export function errorCode(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  if (typeof e?.code === 'string' && e.code !== '') return e.code;
  const message = typeof e?.message === 'string' ? e.message : '';
  // Also a run that began just before its database's pool was closed (dropped, or released).
  if (/Connection terminated|not queryable|connection.*(closed|ended)|pool after calling end/i.test(message)) return 'connection_terminated';
  if (/timeout exceeded when trying to connect/i.test(message)) return 'connect_timeout';
  if (/timeout/i.test(message)) return 'client_timeout';
  return 'unknown';
}

export function isConnectionError(code: string): boolean {
  return CONNECTION_ERRNOS.has(code) || code.startsWith('08') || code === '57P01' || code === '57P02' ||
    code === '57P03' || code === '57P04' || code === 'connection_terminated' || code === 'connect_timeout';
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Why pgvigil cannot reach a server, in a few words a page can carry (a bounded label value). */
export type UnreachableReason = 'refused' | 'timeout' | 'dns' | 'auth' | 'no_database' | 'too_many_clients' | 'starting_up' | 'shutting_down' | 'other';

export function unreachableReason(code: string): UnreachableReason {
  if (code === 'ECONNREFUSED' || code === 'ENOENT' || code === 'ECONNRESET' || code === 'connection_terminated') return 'refused';
  if (code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'connect_timeout' || code === 'client_timeout') return 'timeout';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  // 28000 invalid_authorization_specification (pg_hba), 28P01 invalid_password.
  if (code.startsWith('28')) return 'auth';
  if (code === '3D000') return 'no_database';
  if (code === '53300') return 'too_many_clients';
  if (code === '57P03') return 'starting_up';
  if (code === '57P01' || code === '57P02') return 'shutting_down';
  return 'other';
}
