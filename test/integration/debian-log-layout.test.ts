/**
 * Incident: on Debian with the distribution's defaults (logging_collector = off), pg_ctlcluster
 * sends the server's stderr to /var/log/postgresql/postgresql-15-main.log. `--log
 * /var/log/postgresql` matched nothing (files were looked for by the server's log_filename, which
 * only the collector uses) and `check` said the directory was fine.
 *
 * A real Debian cluster made by postgresql-common's pg_createcluster (as root, which it needs),
 * with its defaults, dropped afterwards. `check` names the file, its format and whether pgvigil's
 * user can read it (a user outside group adm cannot; in adm it can); `run` reads it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { runChecks } from '../../src/cli/check.js';
import { loadConfig, type ConfigOverrides } from '../../src/config/load-config.js';
import { freePort, waitUntil } from '../../src/demo/processes.js';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { openStore } from '../../src/store/open-store.js';
import { describeWithTool } from '../helpers/tools.js';

const CLUSTER = `pgvigil_${process.pid}`;
const LOG_FILE = `/var/log/postgresql/postgresql-15-${CLUSTER}.log`;
const PREFIX = '%m [%p] %q%u@%d ';
const isRoot = process.getuid?.() === 0;

describeWithTool('pg_createcluster', `a Debian cluster with the distribution's defaults${isRoot ? '' : ' [skipped: pg_createcluster needs root]'}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-debian-log-'));
  let dsn = '';

  beforeAll(async () => {
    if (!isRoot) return;
    const port = await freePort();
    // Trust on loopback only so the test connects without a password; the rest is Debian's default.
    execFileSync('pg_createcluster', ['15', CLUSTER, '-p', String(port), '--start', '--', '--auth-local=trust', '--auth-host=trust'], { stdio: 'pipe' });
    dsn = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  }, 120_000);

  afterAll(() => {
    if (isRoot) execFileSync('pg_dropcluster', ['--stop', '15', CLUSTER], { stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  });

  const logCheck = async (flags: ConfigOverrides) => {
    const results = await runChecks(loadConfig({ flags: { name: 'db1', dsn, db: join(dir, 'check.db'), ...flags }, env: {} }));
    return results.find((r) => r.aspect === 'db1: log');
  };
  const willTail = `will tail ${LOG_FILE} (stderr, log_line_prefix '${PREFIX}' from the server's settings); readable`;

  it.skipIf(!isRoot)('check names the file in /var/log/postgresql, its format, and that it is readable', async () => {
    expect(await logCheck({ log: '/var/log/postgresql' })).toEqual({ aspect: 'db1: log', state: 'ok', message: willTail });
    // No log given: the server's cluster_name says where Debian put it.
    expect(await logCheck({})).toEqual({ aspect: 'db1: log', state: 'ok', message: willTail });
  });

  it.skipIf(!isRoot)('README\'s --log-pattern names the file; a pattern that names none says so', async () => {
    expect(await logCheck({ log: '/var/log/postgresql', log_pattern: `postgresql-15-${CLUSTER}.log` })).toMatchObject({ state: 'ok', message: willTail });
    expect(await logCheck({ log: '/var/log/postgresql', log_pattern: 'postgresql-%Y-%m-%d.log' })).toMatchObject({
      state: 'fail', message: 'no file in /var/log/postgresql is named like postgresql-%Y-%m-%d.log (the configured pattern) yet',
    });
  });

  it.skipIf(!isRoot)('check run as a user outside group adm says it cannot read the file and how to fix it; in adm it can', () => {
    // The CLI from source, as another user: `run` and `check` read the log with pgvigil's own rights.
    const cli = `import('./src/cli/main.ts').then((cli) => cli.main(process.argv.slice(1))).then((code) => { process.exitCode = code; })`;
    const check = (groups: string[]) => {
      const args = ['-u', 'nobody', ...groups.flatMap((g) => ['-G', g]), '--', process.execPath, '--import', 'tsx', '-e', cli,
        'check', '--name', 'db1', '--dsn', dsn, '--log', LOG_FILE, '--db', join(dir, 'nobody.db')];
      try {
        return execFileSync('runuser', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (err) {
        return (err as { stdout: string }).stdout; // exit 1: something failed
      }
    };
    const outside = check([]);
    expect(outside).toMatch(new RegExp(`FAIL\\s+db1: log\\s+pgvigil's user cannot read ${LOG_FILE.replace(/\./g, '\\.')} \\(uid \\d+, gid \\d+, mode 0640\\)`));
    expect(outside).toContain('add pgvigil\'s user to group adm');
    expect(check(['adm'])).toMatch(/OK\s+db1: log\s+will tail /);
  }, 120_000);

  it.skipIf(!isRoot)('run reads the server\'s errors from the Debian file', async () => {
    const db = join(dir, 'run.db');
    const app = buildApp(loadConfig({ flags: { name: 'db1', dsn, log: '/var/log/postgresql', db, listen: `127.0.0.1:${await freePort()}` }, env: {} }), { clock: systemClock, log: silentLogger() });
    await app.start();
    try {
      const client = new pg.Client({ connectionString: dsn });
      await client.connect();
      await client.query('SELECT 1/0').catch(() => undefined);
      await client.end();
      const store = openStore(db, { readonly: true });
      try {
        await waitUntil(() => store.prepare(`SELECT 1 FROM events WHERE message = 'division by zero'`).get() !== undefined, 30_000, 'the ERROR stored from the Debian log file');
      } finally {
        store.close();
      }
    } finally {
      await app.stop();
    }
  }, 120_000);
});
