/**
 * The CLI as an operator runs it: the built binary, real files, real exit codes.
 * `npm test` builds dist/ first.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { EXIT } from '../../src/cli/exit-codes.js';

const dir = suiteTempDir('cli');

function pgvigil(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('pgvigil CLI', () => {
  it('exits 2 with one line per bad field for an invalid config, for run and check alike', () => {
    const config = join(dir, 'bad.yaml');
    writeFileSync(config, 'listen: "9899"\nretention:\n  max_age_days: "a week"\nnotfy: {}\n');
    for (const command of ['run', 'check']) {
      const { code, stderr } = pgvigil([command, '--config', config]);
      expect(code).toBe(EXIT.USAGE);
      expect(stderr).toContain(`invalid configuration (${config})`);
      expect(stderr).toContain('- listen: expected HOST:PORT');
      expect(stderr).toContain('- retention.max_age_days: Invalid input: expected number, received string (got "a week")');
      expect(stderr).toContain('- (top level): unknown key "notfy"');
    }
  });

  it('exits 2 on an unknown flag or subcommand and 0 on --help', () => {
    expect(pgvigil(['run', '--bogus']).code).toBe(EXIT.USAGE);
    expect(pgvigil(['frobnicate']).code).toBe(EXIT.USAGE);
    const help = pgvigil(['run', '--help']);
    expect(help.code).toBe(EXIT.OK);
    expect(help.stdout).toContain('--listen <host:port>');
  });

  it('takes PGVIGIL_* variables as config: a bad PGVIGIL_LISTEN is reported as the listen field', () => {
    const { code, stderr } = pgvigil(['check'], { PGVIGIL_LISTEN: 'not-an-address' });
    expect(code).toBe(EXIT.USAGE);
    expect(stderr).toContain('- listen: expected HOST:PORT');
  });

  it('check fails with a hint when nothing listens at the dsn', () => {
    const { code, stdout } = pgvigil(['check', '--dsn', 'postgres://nobody@127.0.0.1:1/postgres', '--db', join(dir, 'check.db'), '--listen', '127.0.0.1:39899']);
    expect(code).toBe(EXIT.FAILURE);
    expect(stdout).toMatch(/^FAIL\s+default: connection\s+cannot connect to 127\.0\.0\.1:1\/postgres: .*ECONNREFUSED/m);
    expect(stdout).toMatch(/hint: is PostgreSQL running and listening there\?/);
    expect(stdout).toMatch(/^OK\s+store\s+/m);
  });

  it('documents every exit code in README.md', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const code of Object.values(EXIT)) expect(readme).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});
