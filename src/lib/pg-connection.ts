/**
 * How pgvigil connects to a target: its dsn (a URL: loadConfig turns keyword/value strings into
 * one) over PG* environment variables and libpq defaults, which node-postgres honours. Shared by the poller, `pgvigil check` and the
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
  let url: URL | null = null;
  try {
    url = config.connectionString ? new URL(config.connectionString) : null;
  } catch {
    // loadConfig accepts only dsns that parse; anything else falls back to the environment.
  }
  // As node-postgres reads a URL: a host=/port=/user= query parameter wins over the authority.
  const part = (name: string, fromAuthority: string | undefined): string | undefined =>
    url?.searchParams.get(name) || fromAuthority || undefined;
  const host = part('host', url?.hostname) ?? process.env.PGHOST ?? 'localhost';
  const port = part('port', url?.port) ?? process.env.PGPORT ?? '5432';
  const database = decodeURIComponent(url?.pathname.slice(1) ?? '') || config.database || process.env.PGDATABASE ||
    part('user', url?.username) || process.env.PGUSER || 'postgres';
  return `${host}:${port}/${database}`;
}

/** A one-line hint for the PostgreSQL connection errors operators hit most, matched to the server's own words. */
export function connectionHint(err: unknown): string {
  const code = (err as { code?: string }).code;
  const message = (err as { message?: string }).message ?? '';
  switch (code) {
    case 'ECONNREFUSED':
      return 'is PostgreSQL running and listening there? Set the dsn (--dsn, PGVIGIL_DSN) or PGHOST/PGPORT.';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve; check the dsn.';
    case 'ETIMEDOUT':
      return 'no answer: check the host, the port and any firewall between pgvigil and the server.';
    case '28P01':
      return authenticationHint(message);
    case '28000':
      return authorizationHint(message);
    case '3D000':
      return 'the database does not exist: name an existing one in the dsn (postgres is a good choice).';
    case '57P03':
      return 'the server is starting up or shutting down; pgvigil will retry.';
    default:
      return tlsHint(code, message) ?? 'see the error above; `pgvigil check` explains each setting pgvigil needs.';
  }
}

/**
 * Node's TLS verification codes (sslmode=verify-ca/verify-full), in the words of the fix. The
 * error's own message says which name or which certificate; the hint says where to look.
 */
const TLS_HINTS: Record<string, string> = {
  ERR_TLS_CERT_ALTNAME_INVALID: 'the server\'s certificate is not for the host in the dsn: connect by a name or address the certificate lists (subjectAltName), or issue it for this one.',
  SELF_SIGNED_CERT_IN_CHAIN: 'the server\'s certificate was not issued by the CA in sslrootcert: point sslrootcert at the CA that signed it.',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'the server\'s certificate is self-signed and not the one in sslrootcert: put that certificate (or its CA) in sslrootcert.',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the server\'s certificate was not issued by the CA in sslrootcert (or the server does not send the intermediate certificates): point sslrootcert at the CA that signed it.',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the CA that issued the server\'s certificate is not in sslrootcert: add it.',
  CERT_HAS_EXPIRED: 'the server\'s certificate has expired: renew it (ssl_cert_file) and SELECT pg_reload_conf();',
  CERT_NOT_YET_VALID: 'the server\'s certificate is not valid yet: check the clocks of both hosts.',
};

function tlsHint(code: string | undefined, message: string): string | null {
  if (code !== undefined && code in TLS_HINTS) return TLS_HINTS[code]!;
  if (/does not support SSL/i.test(message)) return 'the dsn asks for TLS (sslmode) and the server has ssl = off: turn ssl on in postgresql.conf, or change sslmode.';
  return null;
}

const quoted = (message: string, before: string): string | null => new RegExp(`${before}"([^"]*)"`).exec(message)?.[1] ?? null;

const sqlIdentifier = (name: string): string => (/^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

/** How to create the role pgvigil connects as; the statement is the same whatever went wrong first. */
function createRole(role: string, withPassword: boolean): string {
  const name = sqlIdentifier(role);
  return `CREATE ROLE ${name} LOGIN${withPassword ? " PASSWORD '...'" : ''}; GRANT pg_monitor TO ${name};`;
}

// 28P01. With password authentication the server says this for a role that does not exist too:
// it never tells a client which one it was.
function authenticationHint(message: string): string {
  const role = quoted(message, 'for user ') ?? 'pgvigil';
  return `the password for role ${role} was refused: set it with password_file, PGPASSWORD, PGPASSFILE or the dsn. ` +
    `If the role may not exist yet (the server does not say), create it: ${createRole(role, true)}`;
}

// 28000 covers three different faults; the server's message says which.
function authorizationHint(message: string): string {
  const role = quoted(message, 'role ');
  if (role !== null && / does not exist/.test(message)) {
    return `the role does not exist: create it as a superuser, ${createRole(role, false)} (or connect as an existing role: user= in the dsn, PGUSER).`;
  }
  if (role !== null && / is not permitted to log in/.test(message)) {
    return `the role exists but may not log in: ALTER ROLE ${sqlIdentifier(role)} LOGIN;`;
  }
  if (/pg_hba\.conf/.test(message)) {
    const host = quoted(message, 'host ') ?? '<pgvigil host>';
    const user = quoted(message, 'user ') ?? 'pgvigil';
    const database = quoted(message, 'database ') ?? 'all';
    return `pg_hba.conf has no line that lets role ${user} in from ${host} to database ${database} (or a line rejects it): ` +
      `add one such as "host ${database} ${user} ${host}/32 scram-sha-256" above any reject line, then SELECT pg_reload_conf();`;
  }
  if (/(Peer|Ident) authentication failed/i.test(message)) {
    return 'peer/ident authentication compares the operating-system user with the role: run pgvigil as that OS user, ' +
      'map it in pg_ident.conf, or connect over TCP (host=127.0.0.1) with a password.';
  }
  return 'the server refused the connection: its log says why (pg_hba.conf, role attributes such as LOGIN).';
}
