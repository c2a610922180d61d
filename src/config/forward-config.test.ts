import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.js';
import { loadConfig } from './load-config.js';

function configFile(yaml: string): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'pgvigil-forward-config-')), 'pgvigil.yaml');
  writeFileSync(file, yaml);
  return file;
}

const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems.map((p) => `${p.path}: ${p.message}`);
    throw err;
  }
  return [];
};

describe('forward.postgres', () => {
  it('is off unless configured or PGVIGIL_FORWARD_POSTGRES_DSN is set', () => {
    expect(loadConfig({ env: {} }).forward.postgres).toBeNull();
    const fromEnv = loadConfig({ env: { PGVIGIL_FORWARD_POSTGRES_DSN: 'host=central dbname=fleet user=fwd' } }).forward.postgres;
    expect(fromEnv).toEqual({
      url: 'postgresql:///fleet?host=central&user=fwd', password: null, tls: null, stepMs: 60_000, batchRows: 5_000, intervalMs: 5_000, maxRowsPerSecond: 50_000, connections: 1,
    });
  });

  it('reads the password and TLS files, and the environment dsn wins over the file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-forward-secrets-'));
    writeFileSync(path.join(dir, 'password'), 's3cret\n');
    writeFileSync(path.join(dir, 'ca.pem'), 'PEM');
    const file = configFile(`forward:\n  postgres:\n    dsn: postgresql://a@file/fleet\n    password_file: ${dir}/password\n    tls: { mode: verify-ca, root_cert_file: ${dir}/ca.pem }\n    step_ms: 10000\n`);
    const forward = loadConfig({ file, env: { PGVIGIL_FORWARD_POSTGRES_DSN: 'postgresql://b@env/fleet' } }).forward.postgres;
    expect(forward).toMatchObject({ url: 'postgresql://b@env/fleet', password: 's3cret', tls: { mode: 'verify-ca', rootCert: 'PEM', cert: null, key: null }, stepMs: 10_000 });
  });

  it('lists every problem: no dsn, TLS given twice, a step out of range, an unknown key', () => {
    expect(problemsOf(() => loadConfig({ file: configFile('forward:\n  postgres: { step_ms: 500 }\n'), env: {} }))).toEqual([
      'forward.postgres.step_ms: must be a number of milliseconds or a duration such as "30s", "15m", "6h", "2d", from 1000 ms to 3600000 ms: 1 s to 1 h',
    ]);
    expect(problemsOf(() => loadConfig({ file: configFile('forward:\n  postgres: {}\n'), env: {} }))).toEqual([
      'forward.postgres.dsn: the central database is required: set dsn, or PGVIGIL_FORWARD_POSTGRES_DSN',
    ]);
    expect(problemsOf(() => loadConfig({ file: configFile('forward:\n  postgres: { dsn: "postgresql://c/fleet?sslmode=require", tls: { mode: require } }\n'), env: {} }))).toEqual([
      'forward.postgres.tls: TLS is set both here and in the dsn (sslmode, sslcert, ...): keep one',
    ]);
    expect(problemsOf(() => loadConfig({ file: configFile('forward:\n  postgres: { dsn: x=1, stepms: 1 }\n'), env: {} }))).toEqual([
      'forward.postgres: unknown key "stepms" (check the spelling against config/pgvigil.example.yaml)',
    ]);
  });
});
