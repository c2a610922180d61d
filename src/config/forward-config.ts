/**
 * The `forward.postgres` section resolved: the central dsn (PGVIGIL_FORWARD_POSTGRES_DSN wins
 * over the file), its password file and TLS files read. Part of loadConfig: never connects.
 */
import { readFileSync } from 'node:fs';
import { conninfoToUrl } from '../lib/conninfo.js';
import type { ConfigProblem } from './config-error.js';
import { forwardPostgresSchema, type ForwardPostgresRaw } from './schema.js';

export interface ForwardTls {
  mode: 'disable' | 'require' | 'verify-ca' | 'verify-full';
  /** PEM contents of the files named in the config. */
  rootCert: string | null;
  cert: string | null;
  key: string | null;
}

export interface ForwardPostgres {
  /** libpq URL of the central database. */
  url: string;
  password: string | null;
  tls: ForwardTls | null;
  stepMs: number;
  batchRows: number;
  intervalMs: number;
  maxRowsPerSecond: number;
  connections: number;
}

const PATH = 'forward.postgres';
const TLS_KEYWORDS = /[?&](sslmode|sslcert|sslkey|sslrootcert)=/;

export function resolveForwardPostgres(raw: ForwardPostgresRaw | null, env: NodeJS.ProcessEnv, problems: ConfigProblem[]): ForwardPostgres | null {
  const envDsn = env.PGVIGIL_FORWARD_POSTGRES_DSN || null;
  if (raw === null && envDsn === null) return null;
  const section = raw ?? forwardPostgresSchema.parse({});
  const dsn = envDsn ?? section.dsn;
  if (dsn === null) {
    problems.push({ path: `${PATH}.dsn`, message: 'the central database is required: set dsn, or PGVIGIL_FORWARD_POSTGRES_DSN' });
    return null;
  }
  const url = conninfoToUrl(dsn);
  // The dsn's value is never echoed: it may hold a password.
  if (!url.ok) {
    problems.push({ path: `${PATH}.dsn`, message: url.problem });
    return null;
  }
  const read = (key: string, file: string | null): string | null => {
    if (file === null) return null;
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      problems.push({ path: `${PATH}.${key}`, message: `cannot read the file: ${(err as Error).message}`, value: file });
      return null;
    }
  };
  if (section.tls !== null && TLS_KEYWORDS.test(url.url)) {
    problems.push({ path: `${PATH}.tls`, message: 'TLS is set both here and in the dsn (sslmode, sslcert, ...): keep one' });
  }
  return {
    url: url.url,
    password: read('password_file', section.password_file)?.trim() ?? null,
    tls: section.tls && {
      mode: section.tls.mode,
      rootCert: read('tls.root_cert_file', section.tls.root_cert_file),
      cert: read('tls.cert_file', section.tls.cert_file),
      key: read('tls.key_file', section.tls.key_file),
    },
    stepMs: section.step_ms,
    batchRows: section.batch_rows,
    intervalMs: section.interval_ms,
    maxRowsPerSecond: section.max_rows_per_second,
    connections: section.connections,
  };
}
