/**
 * Every environment variable README documents does what it says (#25 §5): each PGVIGIL_* variable
 * and proxy variable README names has a check here that sets it and observes its effect, and a
 * variable README names without one fails the test, so the two cannot drift apart.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pg19ChrootDir } from '../../test/helpers/pg-binaries.js';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { proxyRouteFor } from '../notify/proxy-agent.js';
import { loadConfig } from './load-config.js';

const dir = suiteTempDir('documented-env');
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const RECEIVER = new URL('https://events.pagerduty.com/v2/enqueue');
const PROXY = 'http://proxy.example.net:3128';

/** One per documented variable: sets it (and only what it needs) and checks its effect. */
const CHECKS: Record<string, () => void> = {
  PGVIGIL_CONFIG: () => expect(loadConfig({ env: { PGVIGIL_CONFIG: file('env.yaml', 'db: /tmp/from-config.db\n') } }).dbPath).toBe('/tmp/from-config.db'),
  PGVIGIL_DB: () => expect(loadConfig({ env: { PGVIGIL_DB: '/tmp/env.db' } }).dbPath).toBe('/tmp/env.db'),
  PGVIGIL_DSN: () => expect(loadConfig({ env: { PGVIGIL_DSN: 'host=db7.example.net port=5433' } }).targets[0]!.address).toBe('db7.example.net:5433'),
  PGVIGIL_NAME: () => expect(loadConfig({ env: { PGVIGIL_NAME: 'orders-primary' } }).targets[0]!.name).toBe('orders-primary'),
  PGVIGIL_LOG: () => expect(loadConfig({ env: { PGVIGIL_LOG: '/var/log/postgresql' } }).targets[0]!.log?.path).toBe('/var/log/postgresql'),
  PGVIGIL_LOG_PATTERN: () => expect(loadConfig({ env: { PGVIGIL_LOG: '/var/log/postgresql', PGVIGIL_LOG_PATTERN: 'postgresql-16-main.log' } }).targets[0]!.log?.filename_pattern)
    .toBe('postgresql-16-main.log'),
  PGVIGIL_LISTEN: () => expect(loadConfig({ env: { PGVIGIL_LISTEN: '127.0.0.1:2000' } }).listen).toEqual({ host: '127.0.0.1', port: 2000 }),
  PGVIGIL_LOG_LEVEL: () => expect(loadConfig({ env: { PGVIGIL_LOG_LEVEL: 'debug' } }).logLevel).toBe('debug'),
  PGVIGIL_HTTP_TOKEN_FILE: () => expect(loadConfig({ env: { PGVIGIL_HTTP_TOKEN_FILE: file('token', `${'t'.repeat(32)}\n`) } }).httpToken).toBe('t'.repeat(32)),
  PGVIGIL_EXTERNAL_URL: () => expect(loadConfig({ env: { PGVIGIL_EXTERNAL_URL: 'https://pgvigil.example.net/' } }).externalUrl).toBe('https://pgvigil.example.net'),
  PGVIGIL_PAGERDUTY_ROUTING_KEY: () => expect(loadConfig({ file: file('pd.yaml', 'notify:\n  pagerduty: {}\n'), env: { PGVIGIL_PAGERDUTY_ROUTING_KEY: 'R0UT1NGKEY' } })
    .notify.pagerduty?.routingKey).toBe('R0UT1NGKEY'),
  PGVIGIL_FORWARD_POSTGRES_DSN: () => expect(loadConfig({ file: file('fwd.yaml', 'forward:\n  postgres: {}\n'), env: { PGVIGIL_FORWARD_POSTGRES_DSN: 'postgresql://central.example.net/pgvigil' } })
    .forward.postgres?.url).toMatch(/^postgresql:\/\/central\.example\.net/),
  // The tests' PostgreSQL 19rc1 chroot (README: tests).
  PGVIGIL_PG19_CHROOT: () => {
    vi.stubEnv('PGVIGIL_PG19_CHROOT', '/srv/pg19');
    expect(pg19ChrootDir()).toBe('/srv/pg19');
  },
  HTTPS_PROXY: () => {
    vi.stubEnv('HTTPS_PROXY', PROXY);
    expect(proxyRouteFor(RECEIVER)?.proxy).toBe(PROXY);
  },
  HTTP_PROXY: () => {
    vi.stubEnv('HTTP_PROXY', PROXY);
    expect(proxyRouteFor(new URL('http://hooks.example.net/alert'))?.proxy).toBe(PROXY);
    expect(proxyRouteFor(RECEIVER)).toBeNull();
  },
  ALL_PROXY: () => {
    vi.stubEnv('ALL_PROXY', PROXY);
    expect(proxyRouteFor(RECEIVER)?.proxy).toBe(PROXY);
  },
  NO_PROXY: () => {
    vi.stubEnv('HTTPS_PROXY', PROXY);
    vi.stubEnv('NO_PROXY', '.pagerduty.com');
    expect(proxyRouteFor(RECEIVER)).toBeNull();
  },
};

/** Proxy variables in either case would leak in from the machine running the tests. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NO_PROXY'].flatMap((v) => [v, v.toLowerCase()]);

function documented(): string[] {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const names = [...readme.matchAll(/\bPGVIGIL_[A-Z][A-Z0-9_]*|\b(?:HTTPS|HTTP|ALL|NO)_PROXY\b/g)].map((m) => m[0]);
  return [...new Set(names)].sort();
}

describe('environment variables README documents', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('names some, each with a check here', () => {
    expect(documented().length).toBeGreaterThan(10);
    expect(documented().filter((name) => !(name in CHECKS))).toEqual([]);
  });

  it.each(documented().filter((name) => name in CHECKS))('%s does what README says', (name) => {
    for (const variable of PROXY_VARIABLES) vi.stubEnv(variable, '');
    CHECKS[name]!();
  });
});
