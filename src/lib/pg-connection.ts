/**
 * How pgvigil connects to a target: its dsn (libpq URL) over PG* environment variables and
 * libpq defaults, which node-postgres honours. Shared by the poller, `pgvigil check` and the
 * log-settings lookup so every connection says who it is (application_name) the same way.
 */
import type { ClientConfig } from 'pg';
import type { Target } from '../config/load-config.js';

export function clientConfigFor(target: Pick<Target, 'dsn' | 'password'>, database?: string): ClientConfig {
  const config: ClientConfig = {
    application_name: 'pgvigil',
    connectionTimeoutMillis: 5_000,
    ...(target.dsn ? { connectionString: target.dsn } : {}),
    ...(target.password ? { password: target.password } : {}),
  };
  // Per-database connections (pg_stat_user_tables is per database) keep everything else.
  if (database !== undefined) config.database = database;
  return config;
}

/** Where a connection goes, for messages: never includes the password. */
export function describeConnection(config: ClientConfig): string {
  if (config.connectionString) {
    try {
      const url = new URL(config.connectionString);
      url.password = '';
      return `${url.host || 'localhost'}${url.pathname}`;
    } catch {
      return '(unparseable dsn)';
    }
  }
  return `${process.env.PGHOST ?? 'localhost'}:${process.env.PGPORT ?? '5432'}/${config.database ?? process.env.PGDATABASE ?? process.env.PGUSER ?? 'postgres'}`;
}

/** A one-line hint for the PostgreSQL connection errors operators hit most. */
export function connectionHint(err: unknown): string {
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'is PostgreSQL running and listening there? Set the dsn (--dsn, PGVIGIL_DSN) or PGHOST/PGPORT.';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve; check the dsn.';
    case 'ETIMEDOUT':
      return 'no answer: check the host, the port and any firewall between pgvigil and the server.';
    case '28P01':
      return 'password authentication failed: set password_file, PGPASSWORD or the dsn password.';
    case '28000':
      return 'the server refused the connection (pg_hba.conf): add an entry for the pgvigil role and host.';
    case '3D000':
      return 'the database does not exist: name an existing one in the dsn (postgres is a good choice).';
    case '57P03':
      return 'the server is starting up or shutting down; pgvigil will retry.';
    default:
      return 'see the error above; `pgvigil check` explains each setting pgvigil needs.';
  }
}
