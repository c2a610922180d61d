/**
 * libpq connection strings in both forms libpq accepts: a `postgresql://` URL, or keyword/value
 * pairs (`host=db1 port=5432 user=pgvigil dbname=postgres`), the form most PostgreSQL tools print.
 * node-postgres (pg-connection-string) reads only URLs: a keyword/value string becomes the URL
 * that means the same, and a string that is neither is refused with what is wrong with it.
 * Never: connecting, reading files or the environment.
 */

export type ConninfoResult = { ok: true; url: string } | { ok: false; problem: string };

const URL_FORM = /^postgres(?:ql)?:\/\//i;

/** Keywords node-postgres honours: the URL carries them as query parameters (dbname as the path). */
const DRIVER_KEYWORDS = new Set([
  'host', 'port', 'dbname', 'user', 'password', 'application_name', 'fallback_application_name', 'options',
  'client_encoding', 'sslmode', 'sslcert', 'sslkey', 'sslrootcert', 'sslnegotiation', 'replication',
]);

/** libpq keywords node-postgres ignores: refused, since a setting silently dropped is worse than an error. */
const LIBPQ_ONLY_KEYWORDS: Record<string, string> = {
  service: 'node-postgres does not read pg_service.conf: write the service\'s host, port, user and dbname instead',
  passfile: 'set PGPASSFILE in pgvigil\'s environment, or give the target a password_file',
  hostaddr: 'give the address as host',
  connect_timeout: 'pgvigil waits 5 s for a connection',
  gssencmode: 'node-postgres does not support GSSAPI encryption',
  krbsrvname: 'node-postgres does not support Kerberos',
  gsslib: 'node-postgres does not support GSSAPI',
  gssdelegation: 'node-postgres does not support GSSAPI',
  target_session_attrs: 'name one server per target',
  load_balance_hosts: 'name one server per target',
  keepalives: 'node-postgres sets TCP keepalives itself',
  keepalives_idle: 'node-postgres sets TCP keepalives itself',
  keepalives_interval: 'node-postgres sets TCP keepalives itself',
  keepalives_count: 'node-postgres sets TCP keepalives itself',
  tcp_user_timeout: 'not supported by node-postgres',
  sslpassword: 'decrypt the key file, or use an unencrypted sslkey readable only by pgvigil',
  sslcompression: 'not supported by node-postgres',
  sslcrl: 'not supported by node-postgres',
  sslcrldir: 'not supported by node-postgres',
  sslsni: 'node-postgres always sends SNI',
  sslcertmode: 'not supported by node-postgres',
  ssl_min_protocol_version: 'not supported by node-postgres',
  ssl_max_protocol_version: 'not supported by node-postgres',
  requirepeer: 'not supported by node-postgres',
  require_auth: 'not supported by node-postgres',
  channel_binding: 'not supported by node-postgres',
  max_protocol_version: 'not supported by node-postgres',
  min_protocol_version: 'not supported by node-postgres',
  oauth_issuer: 'not supported by node-postgres',
  oauth_client_id: 'not supported by node-postgres',
  oauth_client_secret: 'not supported by node-postgres',
  oauth_scope: 'not supported by node-postgres',
};

/** A postgres:// or postgresql:// URL (where a store may also be a file: `--store` of report and serve). */
export function isPostgresUrl(text: string): boolean {
  return URL_FORM.test(text.trim());
}

/** A dsn as node-postgres reads it: URLs pass through, keyword/value pairs become the same URL. */
export function conninfoToUrl(text: string): ConninfoResult {
  const trimmed = text.trim();
  if (URL_FORM.test(trimmed)) {
    try {
      new URL(trimmed);
      return { ok: true, url: trimmed };
    } catch {
      // The URL itself may hold a password: describe, never echo.
      return { ok: false, problem: 'not a valid postgresql:// URL (check for characters that need %-encoding, such as @ / : # in the password)' };
    }
  }
  const pairs = parseKeywordValue(trimmed);
  if (!pairs.ok) return pairs;
  return keywordsToUrl(pairs.values);
}

type Pairs = { ok: true; values: Map<string, string> } | { ok: false; problem: string };

/** libpq's conninfo_parse: `keyword = value`, values bare or 'single-quoted', backslash escapes in both. */
function parseKeywordValue(text: string): Pairs {
  const values = new Map<string, string>();
  const neither = 'neither a postgresql:// URL nor keyword=value pairs (such as "host=db1 port=5432 user=pgvigil dbname=postgres")';
  if (text === '') return { ok: false, problem: 'is empty: give a postgresql:// URL or keyword=value pairs, or leave the dsn out to use the PG* variables' };
  let i = 0;
  let previous = '';
  const skipSpace = () => { while (i < text.length && /\s/.test(text[i]!)) i++; };
  while (true) {
    skipSpace();
    if (i >= text.length) break;
    const keywordStart = i;
    while (i < text.length && text[i] !== '=' && !/\s/.test(text[i]!)) i++;
    const keyword = text.slice(keywordStart, i);
    skipSpace();
    if (text[i] !== '=') {
      // A word after an unquoted password is likely the rest of it: described, never echoed.
      if (previous === 'password') return { ok: false, problem: `${neither}: missing "=" after the password's value (quote a password holding spaces: password='...')` };
      return { ok: false, problem: `${neither}: missing "=" after "${keyword}"` };
    }
    previous = keyword;
    i++;
    skipSpace();
    let value = '';
    if (text[i] === "'") {
      i++;
      while (i < text.length && text[i] !== "'") {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
      if (i >= text.length) return { ok: false, problem: `unterminated quoted value for "${keyword}"` };
      i++;
    } else {
      while (i < text.length && !/\s/.test(text[i]!)) {
        if (text[i] === '\\' && i + 1 < text.length) i++;
        value += text[i++];
      }
    }
    values.set(keyword, value);
  }
  return { ok: true, values };
}

function keywordsToUrl(values: Map<string, string>): ConninfoResult {
  const query = new URLSearchParams();
  let database = '';
  let previous = '';
  for (const [keyword, value] of values) {
    const unsupported = LIBPQ_ONLY_KEYWORDS[keyword];
    if (unsupported !== undefined) return { ok: false, problem: `"${keyword}" is not supported: ${unsupported}` };
    if (!DRIVER_KEYWORDS.has(keyword)) {
      const what = previous === 'password' ? 'an unknown keyword after the password (quote a password holding spaces: password=\'...\')' : `unknown keyword "${keyword}"`;
      return { ok: false, problem: `${what}; pgvigil reads ${[...DRIVER_KEYWORDS].join(', ')}` };
    }
    previous = keyword;
    if (keyword === 'dbname') database = value;
    else if (value !== '') query.set(keyword, value);
  }
  // Host and port travel as query parameters: a host may be a Unix socket directory, which a URL's
  // authority cannot hold.
  const search = query.size > 0 ? `?${query.toString()}` : '';
  return { ok: true, url: `postgresql:///${encodeURIComponent(database)}${search}` };
}
