/**
 * How pgvigil connects to a server: its dsn (a URL: loadConfig turns keyword/value strings into
 * one) under the fields pgvigil sets itself, over PG* environment variables and libpq defaults,
 * which node-postgres honours. Every connection pgvigil opens (poller, `pgvigil check`, the
 * log-settings lookup, the forwarder, the central store) is configured here.
 */
import type { ClientConfig } from 'pg';
import { parse } from 'pg-connection-string';
import type { Target } from '../config/load-config.js';
import { sqlIdentifier } from './sql-identifier.js';

/**
 * Sent at connect with every connection: a startup option outranks the database's and the role's
 * own search_path (ALTER DATABASE/ROLE ... SET). Without it, whoever owns a database could put a
 * schema of theirs before pg_catalog (or a better-matching function in public) and have pgvigil
 * run their code with pg_monitor's rights at the next poll. pg_temp last: named explicitly, it is
 * never searched first for tables, and never for functions or operators.
 */
export const PINNED_SEARCH_PATH_OPTION = '-c search_path=pg_catalog,pg_temp';

/**
 * A node-postgres config from a dsn and the fields pgvigil sets itself (password_file's password,
 * the database of a per-database connection, timeouts); those win over the dsn's. node-postgres
 * lets every field it parses from a connectionString replace the explicit ones: a dsn without a
 * password gave password '' and lost password_file's. So the dsn is parsed here and never handed
 * on. A field the dsn leaves empty stays unset: PG* variables and libpq defaults still apply.
 */
export function pgClientConfig(dsn: string | null | undefined, fields: Omit<ClientConfig, 'connectionString'> = {}): ClientConfig {
  const fromDsn = dsn ? dsnFields(dsn) : {};
  // The operator's options (the dsn's; PGOPTIONS, which node-postgres reads only when no options
  // are given), then pgvigil's, then the pin: a later -c wins, so the pin always holds.
  const options = [fromDsn.options ?? process.env.PGOPTIONS, fields.options, PINNED_SEARCH_PATH_OPTION]
    .filter((part): part is string => part !== undefined && part.trim() !== '');
  return { ...fromDsn, ...fields, options: [...new Set(options)].join(' ') };
}

/** The fields of a dsn, as node-postgres reads them, but the database name decoded whole. */
function dsnFields(dsn: string): ClientConfig {
  const parsed = parse(dsn);
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (value !== '' && value !== null && value !== undefined) fields[key] = value;
  }
  if (typeof fields.port === 'string') fields.port = Number(fields.port);
  // pg-connection-string decodes the path with decodeURI, which leaves %3A, %2F, %26, %2B, %3F
  // (and the other reserved characters) encoded: a database named `a:b` was never reached.
  const database = databaseOfUrl(dsn);
  if (database !== null) fields.database = database;
  return fields as ClientConfig;
}

function databaseOfUrl(dsn: string): string | null {
  try {
    const name = decodeURIComponent(new URL(dsn).pathname.slice(1));
    return name === '' ? null : name;
  } catch {
    // Not a URL node-postgres reads the same way (a socket path, a stray %): its own reading stands.
    return null;
  }
}

export function clientConfigFor(target: Pick<Target, 'dsn' | 'password'>, database?: string): ClientConfig {
  return pgClientConfig(target.dsn, {
    application_name: 'pgvigil',
    connectionTimeoutMillis: 5_000,
    ...(target.password ? { password: target.password } : {}),
    // Per-database connections (pg_stat_user_tables is per database) keep everything else.
    ...(database !== undefined ? { database } : {}),
  });
}

/** Where a connection goes, for messages: never includes the password. */
export function describeConnection(config: ClientConfig): string {
  const host = config.host || process.env.PGHOST || 'localhost';
  const port = config.port || process.env.PGPORT || '5432';
  const database = config.database || process.env.PGDATABASE || config.user || process.env.PGUSER || 'postgres';
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
