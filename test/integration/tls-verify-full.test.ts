/**
 * TLS to PostgreSQL with sslmode=verify-full, as an operator sets it: a real PostgreSQL 18 with
 * ssl = on and a certificate from a CA this test makes with openssl, and the built CLI (`run` for
 * the poller, `check`) given the CA as sslrootcert. The right CA and host connect over TLS; a
 * certificate for another name, or another CA, fails with a log line or a check line that names
 * the target and the TLS problem, with a hint, and never a stack trace.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-processes.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const dir = suiteTempDir('tls');
const openssl = (...args: string[]): void => {
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
};

/** A CA (key and self-signed certificate) named `name` in the temp dir. */
function makeCa(name: string): void {
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', `/CN=pgvigil test ${name}`, '-keyout', `${name}.key`, '-out', `${name}.crt`);
}

/** A server certificate for `altName` (e.g. IP:127.0.0.1) signed by the CA `ca`. */
function makeServerCert(name: string, ca: string, altName: string): void {
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-keyout', `${name}.key`, '-out', `${name}.csr`);
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${altName}\n`);
  openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`, '-out', `${name}.crt`);
}

/** Copies a server certificate and key where the server's user can read them, and reloads. */
async function serveCertificate(server: PgServer, name: string): Promise<void> {
  const owner = statSync(server.dataDir);
  for (const [file, mode] of [[`${name}.crt`, 0o644], [`${name}.key`, 0o600]] as const) {
    const target = join(server.dataDir, file);
    writeFileSync(target, execFileSync('cat', [join(dir, file)]), { mode });
    chownSync(target, owner.uid, owner.gid);
  }
  await server.query(`ALTER SYSTEM SET ssl_cert_file = '${name}.crt'`);
  await server.query(`ALTER SYSTEM SET ssl_key_file = '${name}.key'`);
  await server.query('ALTER SYSTEM SET ssl = on');
  await server.query('SELECT pg_reload_conf()');
  await waitUntil(async () => (await server.query<{ ssl: string }>("SELECT current_setting('ssl') AS ssl, pg_reload_conf()"))[0]?.ssl === 'on', 10_000, 'ssl on');
}

const verifyFull = (server: PgServer, ca: string) =>
  `postgresql://postgres@${server.host}:${server.port}/postgres?sslmode=verify-full&sslrootcert=${encodeURIComponent(join(dir, `${ca}.crt`))}`;

async function check(dsn: string) {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', 'check', '--name', 'default', '--dsn', dsn, '--db', join(dir, 'check.db'), '--listen', `127.0.0.1:${await freePort()}`], {
    encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 30_000,
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

/** `pgvigil run` until `until` holds over its JSON log lines; then SIGTERM. Returns the lines. */
async function runUntil(dsn: string, db: string, until: (lines: Array<Record<string, unknown>>) => boolean | Promise<boolean>, what: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/pgvigil.js', 'run', '--name', 'default', '--dsn', dsn, '--db', join(dir, db), '--listen', `127.0.0.1:${port}`], { env: { PATH: process.env.PATH } });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => { output += text; });
  child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () => output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  try {
    await waitUntil(() => until(lines()), 30_000, what);
    // SIGTERM is a clean stop once started; before, it ends the process like any Node program.
    await waitUntil(() => lines().some((l) => /^serving \/metrics/.test(String(l.msg))), 30_000, 'the daemon started');
    child.kill('SIGTERM');
    expect(await exit).toBe(EXIT.OK);
  } finally {
    child.kill('SIGKILL');
  }
  return { lines: lines(), output };
}

describe('TLS to PostgreSQL 18 with sslmode=verify-full', () => {
  let server: PgServer;

  beforeAll(async () => {
    makeCa('ca');
    makeCa('other-ca');
    makeServerCert('server', 'ca', 'IP:127.0.0.1');
    makeServerCert('elsewhere', 'ca', 'DNS:db.elsewhere.test');
    server = await startPrimary({ version: 18, name: 'tls' });
    await serveCertificate(server, 'server');
  }, 120_000);

  afterAll(() => destroyAllServers());

  it('polls over TLS with the right CA and host: the server sees the poller\'s sessions encrypted', async () => {
    const { lines } = await runUntil(verifyFull(server, 'ca'), 'ok.db', async (logged) => {
      if (!logged.some((l) => /^connected to default \(PostgreSQL 18/.test(String(l.msg)))) return false;
      const sessions = await server.query<{ ssl: boolean }>("SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'pgvigil'");
      return sessions.length > 0 && sessions.every((s) => s.ssl);
    }, 'the poller connected over TLS');
    expect(lines.filter((l) => l.msg === 'cannot connect; retrying with backoff')).toEqual([]);
    expect((await check(verifyFull(server, 'ca'))).output).toMatch(/^OK\s+default: connection/m);
  });

  it('refuses a CA that did not sign the server certificate, naming the target and the problem', async () => {
    const dsn = verifyFull(server, 'other-ca');
    const { lines, output } = await runUntil(dsn, 'wrong-ca.db', (logged) => logged.some((l) => l.msg === 'cannot connect; retrying with backoff'), 'the refusal');
    const refusal = lines.find((l) => l.msg === 'cannot connect; retrying with backoff')!;
    expect(refusal).toMatchObject({ target: 'default', err: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate', hint: expect.stringMatching(/^the server's certificate was not issued by the CA in sslrootcert/) });
    expect(output).not.toMatch(/^\s+at /m);
    const checked = await check(dsn);
    expect(checked.code).toBe(EXIT.FAILURE);
    expect(checked.output).toMatch(/^FAIL\s+default: connection\s+cannot connect to 127\.0\.0\.1:\d+\/postgres: unable to verify the first certificate$/m);
    expect(checked.output).toMatch(/hint: the server's certificate was not issued by the CA in sslrootcert/);
    expect(checked.output).not.toMatch(/^\s+at /m);
  });

  it('refuses a certificate issued for another host, naming the target and the names it lists', async () => {
    await serveCertificate(server, 'elsewhere');
    try {
      const dsn = verifyFull(server, 'ca');
      const { lines, output } = await runUntil(dsn, 'wrong-host.db', (logged) => logged.some((l) => l.msg === 'cannot connect; retrying with backoff'), 'the refusal');
      const refusal = lines.find((l) => l.msg === 'cannot connect; retrying with backoff')!;
      expect(refusal).toMatchObject({ target: 'default', err: expect.stringMatching(/^ERR_TLS_CERT_ALTNAME_INVALID: .*IP: 127\.0\.0\.1 is not in the cert's list/), hint: expect.stringMatching(/not for the host in the dsn/) });
      expect(output).not.toMatch(/^\s+at /m);
      const checked = await check(dsn);
      expect(checked.code).toBe(EXIT.FAILURE);
      expect(checked.output).toMatch(/^FAIL\s+default: connection\s+cannot connect to 127\.0\.0\.1:\d+\/postgres: .*IP: 127\.0\.0\.1 is not in the cert's list/m);
      expect(checked.output).toMatch(/hint: the server's certificate is not for the host in the dsn/);
    } finally {
      await serveCertificate(server, 'server');
    }
  });
});
