/**
 * The CLI as an operator runs it: the built binary, real files, real exit codes.
 * `npm test` builds dist/ first.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
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

  it('starts on a non-loopback listen address without a token (the API for this host only), and with a warning under http.allow_unauthenticated', async () => {
    const port = await freePort();
    const config = join(dir, 'open.yaml');
    writeFileSync(config, `listen: 0.0.0.0:${port}\nhttp:\n  allow_unauthenticated: true\ndb: ${join(dir, 'open.db')}\ndsn: postgres://nobody@127.0.0.1:1/postgres\n`);
    const child = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--config', config], { env: { PATH: process.env.PATH } });
    let output = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
    const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(() => /"level":40,.*"msg":"http\.allow_unauthenticated: \/api and \/readyz are served without a token/.test(output), 20_000, 'the warning');
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/api/alerts`).catch(() => null))?.status === 200, 20_000, '/api served without a token');
      child.kill('SIGTERM');
      expect(await exit).toBe(EXIT.OK);
    } finally {
      child.kill('SIGKILL');
    }
    expect(pgvigil(['check', '--config', config]).stdout).toMatch(/^WARN\s+listen\s+0\.0\.0\.0:\d+ is reachable from other hosts and the API has no token \(http\.allow_unauthenticated\)/m);
    // Without the setting, check says who is served what (the container test runs it).
    const closed = join(dir, 'closed.yaml');
    writeFileSync(closed, `listen: 0.0.0.0:${await freePort()}\ndb: ${join(dir, 'closed.db')}\ndsn: postgres://nobody@127.0.0.1:1/postgres\n`);
    expect(pgvigil(['check', '--config', closed]).stdout).toMatch(/^OK\s+listen\s+0\.0\.0\.0:\d+ is free; \/metrics and \/healthz for every host, the API and the page for this host only \(no http_token_file\)/m);
  });

  it('analyze: a bad --tz is a usage error, a missing file is said once, a wrong --prefix is named with the first unread line', () => {
    const log = 'test/fixtures/logs/pg13-stderr-deadlock/deadlock.log';
    const badZone = pgvigil(['analyze', '--tz', 'Mars/Base', log]);
    expect(badZone.code).toBe(EXIT.USAGE);
    expect(badZone.stderr).toContain("option '--tz <zone>' argument 'Mars/Base' is invalid. not a time zone");
    expect(badZone.stderr).not.toMatch(/internal error|^\s+at /m);

    const missing = pgvigil(['analyze', join(dir, 'nonexistent.log')]);
    expect(missing.code).toBe(EXIT.FAILURE);
    expect(`${missing.stdout}${missing.stderr}`.match(/ENOENT/g)).toHaveLength(1);

    const wrongPrefix = pgvigil(['analyze', '--prefix', '%t [%p] ', log]);
    expect(wrongPrefix.code).toBe(EXIT.FAILURE);
    const lines = readFileSync(log, 'utf8').split('\n').filter((l) => l !== '');
    // Entry lines whose text after "[pid] " is not the level: their prefix goes on (%q%u@%d).
    const unread = lines.filter((l) => /^\S+ \S+ UTC \[\d+\] /.test(l) && !/^\S+ \S+ UTC \[\d+\] [A-Z]+:/.test(l)).length;
    expect(wrongPrefix.stderr).toContain(`${log}: ${unread} of ${lines.length} lines do not match --prefix "%t [%p] "; the first is line 1: ${JSON.stringify(`${lines[0]!.slice(0, 120)}...`)}`);
    expect(wrongPrefix.stderr).toContain('SHOW log_line_prefix');
    // The detected prefix reads it all: no such note.
    const detected = pgvigil(['analyze', log]);
    expect(detected.code).toBe(EXIT.OK);
    expect(detected.stderr).not.toContain('do not match');
  });

  it('silence: adds a maintenance window to the store, lists it, expires it; an unknown target or rule is a usage error', () => {
    const config = join(dir, 'silence.yaml');
    writeFileSync(config, `name: db1\ndb: ${join(dir, 'silence.db')}\n`);
    const added = pgvigil(['silence', 'add', '-c', config, '--target', 'db1', '--rule', 'server-crashed', '--for', '2h', '--comment', 'kernel upgrade']);
    expect(added.code).toBe(EXIT.OK);
    expect(added.stdout).toMatch(/^#1 {2}db1 {2}server-crashed {2}active until \S+ {2}by \S+: kernel upgrade$/m);
    const until = Date.parse(/until (\S+)/.exec(added.stdout)![1]!);
    expect(until - Date.now()).toBeGreaterThan(7_000_000);
    expect(until - Date.now()).toBeLessThanOrEqual(7_200_000);
    expect(pgvigil(['silence', 'list', '-c', config]).stdout).toContain('#1  db1  server-crashed  active until');
    expect(pgvigil(['silence', 'expire', '-c', config, '1']).stdout).toBe('silence #1 ended\n');
    expect(pgvigil(['silence', 'list', '-c', config]).stdout).toContain('#1  db1  server-crashed  ended until');
    expect(pgvigil(['silence', 'expire', '-c', config, '1']).code).toBe(EXIT.FAILURE);
    const unknownTarget = pgvigil(['silence', 'add', '-c', config, '--target', 'db2', '--for', '1h', '--comment', 'x']);
    expect([unknownTarget.code, unknownTarget.stderr]).toEqual([EXIT.USAGE, 'pgvigil silence: no target "db2" in the config (targets: db1)\n']);
    expect(pgvigil(['silence', 'add', '-c', config, '--target', 'db1', '--rule', 'nope', '--for', '1h', '--comment', 'x']).code).toBe(EXIT.USAGE);
    expect(pgvigil(['silence', 'add', '-c', config, '--target', 'db1', '--for', 'a while', '--comment', 'x']).code).toBe(EXIT.USAGE);
  });

  it('exits 2 on an unknown flag or subcommand, or a missing argument, of every command, and 0 on --help', () => {
    for (const args of [['run', '--bogus'], ['frobnicate'], ['analyze'], ['analyze', '--jobs', '0', 'x.log'], ['report', '--bogus'], ['rules', '--bogus'], ['serve', '--bogus'], ['demo', '--bogus'], ['central', 'migrate', '--bogus']]) {
      expect({ args, code: pgvigil(args).code }).toEqual({ args, code: EXIT.USAGE });
    }
    const help = pgvigil(['run', '--help']);
    expect(help.code).toBe(EXIT.OK);
    expect(help.stdout).toContain('--listen <host:port>');
  });

  it('report, serve and analyze --rules take the config given with -c, and say when it cannot apply (#25 §5)', () => {
    const config = join(dir, 'store-reader.yaml');
    writeFileSync(config, `db: ${join(dir, 'store-reader.db')}\ntargets: [{ name: db1 }]\nrules: { disabled: [nope] }\n`);
    const badRules = pgvigil(['analyze', '--rules', '-c', config, 'x.log']);
    expect([badRules.code, badRules.stderr]).toEqual([EXIT.USAGE, expect.stringContaining('- rules.disabled: unknown rule id "nope"')]);
    writeFileSync(config, `db: ${join(dir, 'store-reader.db')}\ntargets: [{ name: db1 }]\n`);
    const withoutRules = pgvigil(['analyze', '-c', config, 'x.log']);
    expect([withoutRules.code, withoutRules.stderr]).toEqual([EXIT.USAGE, 'pgvigil analyze: -c sets the rules of --rules: give --rules too\n']);
    const report = pgvigil(['report', '-c', config, '--target', 'db2']);
    expect([report.code, report.stderr]).toEqual([EXIT.USAGE, 'pgvigil report: no target "db2" in the config (targets: db1)\n']);
    // The config's store does not exist yet: report opens that one, not ./pgvigil.db.
    expect(pgvigil(['report', '-c', config]).stderr).toContain(join(dir, 'store-reader.db'));
    const serve = pgvigil(['serve']);
    expect([serve.code, serve.stderr]).toEqual([EXIT.USAGE, expect.stringMatching(/^pgvigil serve: give the store: --store /)]);
  });

  it('takes PGVIGIL_* variables as config: a bad PGVIGIL_LISTEN is reported as the listen field', () => {
    const { code, stderr } = pgvigil(['check'], { PGVIGIL_LISTEN: 'not-an-address' });
    expect(code).toBe(EXIT.USAGE);
    expect(stderr).toContain('- listen: expected HOST:PORT');
  });

  it('check fails with a hint when nothing listens at the dsn', () => {
    const { code, stdout } = pgvigil(['check', '--dsn', 'postgres://nobody@127.0.0.1:1/postgres', '--db', join(dir, 'check.db'), '--listen', '127.0.0.1:39899']);
    expect(code).toBe(EXIT.FAILURE);
    expect(stdout).toMatch(/^FAIL\s+[A-Za-z0-9_.-]+-1: connection\s+cannot connect to 127\.0\.0\.1:1\/postgres: .*ECONNREFUSED/m);
    expect(stdout).toMatch(/hint: is PostgreSQL running and listening there\?/);
    expect(stdout).toMatch(/^OK\s+store\s+/m);
  });

  it('documents every exit code in README.md', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const code of Object.values(EXIT)) expect(readme).toMatch(new RegExp(`^\\| ${code} \\|`, 'm'));
  });
});
