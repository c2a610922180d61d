/**
 * What `docker run --read-only` asks of pgvigil: everything but the store's directory read-only.
 * docker does not run here, so the built daemon (`pgvigil run`, dist/) runs as an unprivileged
 * user (root ignores permissions) against a real PostgreSQL 18 with its working directory, HOME
 * and TMPDIR in directories it cannot write, and the store in the one directory it can. Under
 * strace, every call that could write the file system (open for writing or creating, mkdir,
 * rename, unlink, link, truncate, chmod) is recorded, successful or refused: all of them must be
 * in the store's directory, and the daemon must poll, tail the log and store as usual.
 */
import { chmodSync, chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, onTestFailed } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { pgInstall } from '../helpers/pg-binaries.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { itWithTool } from '../helpers/tools.js';

const WAIT_MS = 60_000;
/** Every system call that can change the file system, by path. */
const WRITING_CALLS = 'open,openat,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,rmdir,link,linkat,symlink,symlinkat,truncate,chmod,fchmodat,chown,fchownat,utimensat';

const dir = suiteTempDir('read-only-root');
/** As root: the server's user, which permissions bind. */
const user = process.getuid?.() === 0 ? pgInstall(18).owner : undefined;
const readOnly = path.join(dir, 'read-only');
const storeDir = path.join(dir, 'store');
const traceDir = path.join(dir, 'trace');
let primary: PgServer;
let daemon: DaemonProcess | null = null;

beforeAll(async () => {
  chmodSync(dir, 0o755); // a temp directory is 0700: the daemon's user must get through it
  primary = await startPrimary({ version: 18, name: 'read-only-root' });
});

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await destroyAllServers();
});

/** A directory the daemon's user can read but not write. */
function readOnlyDir(name: string): string {
  const made = path.join(readOnly, name);
  mkdirSync(made, { recursive: true });
  chmodSync(made, 0o555);
  return made;
}

/** A directory the daemon's user owns. */
function ownDir(made: string): string {
  mkdirSync(made, { recursive: true });
  if (user) chownSync(made, user.uid, user.gid);
  chmodSync(made, 0o700);
  return made;
}

interface WriteCall {
  call: string;
  path: string;
  result: string;
}

/**
 * The calls in strace's output that write, with their path made absolute (relative paths are
 * relative to the working directory): opens only with O_WRONLY, O_RDWR or O_CREAT.
 */
function writeCalls(trace: string, cwd: string): WriteCall[] {
  const calls: WriteCall[] = [];
  for (const line of trace.split('\n')) {
    const m = /^\d+\s+(\w+)\((.*)\)\s+=\s+(.*)$/.exec(line);
    if (!m) continue;
    const [, call, args, result] = m as unknown as [string, string, string, string];
    if (/^(open|openat)$/.test(call) && !/O_WRONLY|O_RDWR|O_CREAT/.test(args)) continue;
    for (const quoted of args.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
      calls.push({ call, path: path.resolve(cwd, quoted[1]!), result });
    }
  }
  return calls;
}

itWithTool('strace', 'runs with only its store directory writable: polls, tails and stores, and writes nowhere else', async () => {
  const home = readOnlyDir('home');
  const tmp = readOnlyDir('tmp');
  const cwd = readOnlyDir('cwd');
  const etc = readOnlyDir('etc');
  ownDir(storeDir);
  ownDir(traceDir);
  const config = path.join(etc, 'pgvigil.yaml');
  chmodSync(etc, 0o755);
  writeFileSync(config, stringify({
    db: path.join(storeDir, 'pgvigil.db'),
    targets: [{ name: 'primary', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } }],
    collectors: { interval_ms: { pg_stat_database: 1_000 } },
  }));
  chmodSync(etc, 0o555);
  const traceFile = path.join(traceDir, 'strace.txt');
  daemon = await spawnDaemon(['--config', config], {
    ...(user ? { user } : {}),
    env: { HOME: home, TMPDIR: tmp },
    cwd,
    wrapper: ['strace', '-f', '-qq', '-o', traceFile, '-e', `trace=${WRITING_CALLS}`],
  });
  onTestFailed(() => console.error(`pgvigil output:\n${daemon?.output()}`));

  const stored = () => {
    const db = openStore(path.join(storeDir, 'pgvigil.db'), { readonly: true });
    try {
      return {
        events: db.prepare('SELECT count(*) FROM events').pluck().get() as number,
        commitSamples: db.prepare(`SELECT count(*) FROM samples p JOIN series s ON s.id = p.series_id WHERE s.name = 'pg_stat_database_xact_commit_total'`).pluck().get() as number,
      };
    } finally {
      db.close();
    }
  };
  await waitUntil(async () => /^pg_up\{target="primary"\} 1$/m.test(await daemon!.metrics()), WAIT_MS, 'pg_up 1');
  await waitUntil(() => { try { const s = stored(); return s.events > 0 && s.commitSamples > 1; } catch { return false; } }, WAIT_MS, 'events and samples stored');

  // The daemon is strace's child: strace would detach on SIGTERM and leave it running.
  const straced = daemon.child.pid!;
  const [pid] = readFileSync(`/proc/${straced}/task/${straced}/children`, 'utf8').trim().split(' ');
  process.kill(Number(pid), 'SIGTERM');
  expect(await daemon.exit).toEqual({ code: 0, signal: null });
  const problems = daemon.logLines().filter((l) => Number(l.level) >= 40);
  expect(problems, 'warnings or errors').toEqual([]);

  const calls = writeCalls(readFileSync(traceFile, 'utf8'), cwd);
  const elsewhere = calls.filter((c) => c.path !== storeDir && !c.path.startsWith(`${storeDir}/`));
  const written = [...new Set(calls.filter((c) => !elsewhere.includes(c)).map((c) => `${c.call} ${path.relative(storeDir, c.path) || '.'}`))].sort();
  console.log(`read-only root: ${calls.length} writing calls, all in the store directory: ${written.join(', ')}`);
  expect(elsewhere, 'writing calls outside the store directory').toEqual([]);
}, 180_000);
