/**
 * The log directory made unreadable for a while (chmod 000, as a careless `chmod -R` or a
 * package upgrade does) under `pgvigil run` (built, dist/), while a real PostgreSQL 18 keeps
 * writing to the file it has open. pgvigil warns (once, naming the file and the error), does not
 * crash, and once the permission is back reads on: every tick stored exactly once.
 *
 * Root ignores permissions, so as root the daemon runs as the unprivileged user the harness runs
 * PostgreSQL as (the store's directory is given to it).
 */
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { pgInstall } from '../helpers/pg-binaries.js';
import { countLogFiles, LogWorkload } from '../helpers/log-workload.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';

const WAIT_MS = 30_000;
const UNREADABLE_MS = 3_000;

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-log-dir-unreadable-'));
const workload = new LogWorkload({ label: 'unreadable', tickEveryMs: 20 });
let primary: PgServer;
let daemon: DaemonProcess | null = null;
/** As root: the server's user, which permissions bind. */
const user = process.getuid?.() === 0 ? pgInstall(18).owner : undefined;

beforeAll(async () => {
  if (user) chownSync(dir, user.uid, user.gid);
  primary = await startPrimary({ version: 18, name: 'log-dir-unreadable' });
});

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await workload.stop();
  if (primary) chmodSync(primary.logDir, 0o755);
  await destroyAllServers();
  rmSync(dir, { recursive: true, force: true });
});

function storedTicks(store: string): number[] {
  const db = openStore(store, { readonly: true });
  try {
    return (db.prepare('SELECT message FROM events').pluck().all() as string[]).flatMap((m) => workload.tickMessage.exec(m)?.[1] ?? []).map(Number);
  } finally {
    db.close();
  }
}

it('warns while the log directory is unreadable, keeps running, and reads on without loss once it is readable again', async () => {
  const store = join(dir, 'pgvigil.db');
  const config = join(dir, 'pgvigil.yaml');
  writeFileSync(config, stringify({ db: store, targets: [{ name: 'primary', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } }] }));
  onTestFailed(() => console.error(`pgvigil output:\n${daemon?.output()}`));
  daemon = await spawnDaemon(['--config', config], { user });
  workload.start(primary);
  await waitUntil(() => storedTicks(store).length > 10, WAIT_MS, 'ticks to be stored');

  chmodSync(primary.logDir, 0o000);
  const warning = await daemon.waitForLog(/log read failed/, WAIT_MS);
  expect(warning).toMatchObject({ level: 40, file: expect.stringContaining(primary.logDir), hint: expect.stringMatching(/may not read the log directory/) });
  await new Promise((resolve) => setTimeout(resolve, UNREADABLE_MS));
  const storedWhileUnreadable = storedTicks(store).length;
  expect(daemon.child.exitCode).toBeNull();
  // Said once per failing call (stat of the file, listing of the directory), not once per poll.
  const warnings = daemon.logLines().filter((l) => /log read failed/.test(String(l.msg)));
  expect(warnings.length).toBeLessThanOrEqual(2);
  for (const w of warnings) expect(JSON.stringify(w.err)).toMatch(/EACCES: permission denied/);

  chmodSync(primary.logDir, 0o755);
  await waitUntil(() => storedTicks(store).length > storedWhileUnreadable + 10, WAIT_MS, 'reading to resume');
  await workload.stop();
  const inLog = [...countLogFiles(primary.logFiles(), workload.tickLine).ticks.values()].sort((a, b) => a - b);
  await waitUntil(() => storedTicks(store).length >= inLog.length, WAIT_MS, `all ${inLog.length} ticks stored`);
  const stored = storedTicks(store).sort((a, b) => a - b);
  console.log(`log directory unreadable for ${UNREADABLE_MS} ms: ticks logged ${workload.ticks}, in the log ${inLog.length}, stored ${stored.length}`);
  expect(inLog).toEqual(Array.from({ length: workload.ticks }, (_, i) => i));
  expect(stored).toEqual(inLog);
  daemon.child.kill('SIGTERM');
  expect(await daemon.exit).toEqual({ code: 0, signal: null });
  daemon = null;
}, 120_000);
