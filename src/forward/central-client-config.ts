/**
 * node-postgres settings for the central connection: the dsn, the password file (over the dsn's),
 * TLS as libpq's sslmode means it, and timeouts that bound how long a slow central database can
 * hold a batch.
 */
import type { ClientConfig } from 'pg';
import type { ForwardPostgres } from '../config/forward-config.js';
import { pgClientConfig } from '../lib/pg-connection.js';

/** A central statement (a COPY of one batch) that takes longer than this is given up and retried. */
const STATEMENT_TIMEOUT_MS = 60_000;

export function centralClientConfig(forward: Pick<ForwardPostgres, 'url' | 'password' | 'tls'>): ClientConfig {
  return pgClientConfig(forward.url, {
    application_name: 'pgvigil forward',
    connectionTimeoutMillis: 10_000,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    // The client-side bound: a server that stopped answering (not refusing) ends the batch too.
    query_timeout: STATEMENT_TIMEOUT_MS + 10_000,
    keepAlive: true,
    ...(forward.password !== null ? { password: forward.password } : {}),
    ...(forward.tls !== null ? { ssl: sslOptions(forward.tls) } : {}),
  });
}

function sslOptions(tls: NonNullable<ForwardPostgres['tls']>): ClientConfig['ssl'] {
  if (tls.mode === 'disable') return false;
  const files = {
    ...(tls.rootCert !== null ? { ca: tls.rootCert } : {}),
    ...(tls.cert !== null ? { cert: tls.cert } : {}),
    ...(tls.key !== null ? { key: tls.key } : {}),
  };
  switch (tls.mode) {
    case 'require':
      return { ...files, rejectUnauthorized: false };
    // The chain is checked, the host name is not (libpq's verify-ca).
    case 'verify-ca':
      return { ...files, rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { ...files, rejectUnauthorized: true };
  }
}
