/**
 * PostgreSQL faults seen by the whole daemon: `pgvigil run` (built, dist/) watches a real
 * PostgreSQL 18 while the test kills its postmaster with SIGKILL and starts it again, then stops
 * it for a while. collectors-scenarios.ts covers the poller alone (a clean restart, the gap in
 * the series); this is the daemon's view: pgvigil does not exit, /metrics says `pg_up 0` during
 * the outage and 1 after, the crash recovery and the stop are stored as server_restart events,
 * the poller reconnects, and the tailer follows the log into the file the new postmaster opens:
 * every tick in the log files is stored once; and after a stop of pgvigil, the files the server
 * wrote meanwhile (a restart's and two rotations past it) are read in order, each tick once.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { countLogFiles, LogWorkload } from '../helpers/log-workload.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const WAIT_MS = 30_000;
/** How long the server stays stopped: several poll intervals and reconnect attempts. */
const STOPPED_MS = 8_000;

const dir = suiteTempDir('pg-faults');
const store = join(dir, 'pgvigil.db');
const workload = new LogWorkload({ label: 'pg-faults', tickEveryMs: 50, reconnect: true });
let primary: PgServer;
let daemon: DaemonProcess;

beforeAll(async () => {
  primary = await startPrimary({ version: 18, name: 'pg-faults' });
  const config = join(dir, 'pgvigil.yaml');
  writeFileSync(config, stringify({
    db: store,
    targets: [{ name: 'primary', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } }],
    collectors: { interval_ms: { pg_stat_database: 1_000 } },
  }));
  daemon = await spawnDaemon(['--config', config]);
  workload.start(primary);
});

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await workload.stop();
  await destroyAllServers();
});

const pgUp = async () => /^pg_up\{target="primary"\} (\d)$/m.exec(await daemon.metrics())?.[1];

function stored() {
  const db = openStore(store, { readonly: true });
  try {
    return {
      phases: (db.prepare(`SELECT details FROM events WHERE kind = 'server_restart' ORDER BY id`).pluck().all() as string[]).map((d) => (JSON.parse(d) as { phase: string }).phase),
      messages: db.prepare('SELECT message FROM events ORDER BY id').pluck().all() as string[],
      ticks: (db.prepare('SELECT message FROM events').pluck().all() as string[]).flatMap((m) => workload.tickMessage.exec(m)?.[1] ?? []).map(Number),
      commitSamples: db.prepare(
        `SELECT p.ts_ms FROM samples p JOIN series s ON s.id = p.series_id WHERE s.name = 'pg_stat_database_xact_commit_total' ORDER BY p.ts_ms`,
      ).pluck().all() as number[],
    };
  } finally {
    db.close();
  }
}

/**
 * Every tick in the log files so far stored as often as it is there (a tick retried after a kill
 * may be logged twice); ticks logged after the files were read (the workload may still run) are
 * left out of the comparison.
 */
async function expectEveryTickStoredOnce(): Promise<string> {
  const inLog = [...countLogFiles(primary.logFiles(), workload.tickLine).ticks.values()].sort((a, b) => a - b);
  const last = inLog.at(-1) ?? -1;
  const storedSoFar = () => stored().ticks.filter((tick) => tick <= last).sort((a, b) => a - b);
  await waitUntil(() => storedSoFar().length >= inLog.length, WAIT_MS, `the ${inLog.length} ticks in the log to be stored`);
  expect(storedSoFar()).toEqual(inLog);
  return `${inLog.length} ticks in ${primary.logFiles().length} log files, stored ${storedSoFar().length}`;
}

it('survives the postmaster killed with SIGKILL: pg_up 0 then 1, the crash recovery stored, the log followed into the new file', async () => {
  onTestFailed(() => console.error(`pgvigil output:\n${daemon.output()}`));
  await waitUntil(async () => (await pgUp()) === '1' && stored().ticks.length > 10, WAIT_MS, 'pg_up 1 and ticks stored');
  const filesBefore = primary.logFiles().length;

  await primary.kill('SIGKILL');
  await waitUntil(async () => (await pgUp()) === '0', WAIT_MS, 'pg_up 0 on /metrics');
  await primary.start();
  await waitUntil(async () => (await pgUp()) === '1', WAIT_MS, 'pg_up 1 after the restart');
  await daemon.waitForLog(/^lost primary; reconnecting$/, WAIT_MS);
  expect(daemon.logLines().filter((l) => /^connected to primary /.test(String(l.msg))).map((l) => l.restarted)).toEqual([false, true]);
  const recoveredAndReady = (phases: string[]) => phases.includes('automatic_recovery') && phases.lastIndexOf('ready') > phases.indexOf('automatic_recovery');
  await waitUntil(() => recoveredAndReady(stored().phases), WAIT_MS, 'the crash recovery and the start stored as server_restart events');
  expect(stored().phases).toEqual(expect.arrayContaining(['interrupted', 'automatic_recovery', 'ready']));
  const ticksBefore = stored().ticks.length;
  await waitUntil(() => stored().ticks.length > ticksBefore + 10, WAIT_MS, 'ticks logged after the restart to be stored');
  expect(primary.logFiles().length).toBeGreaterThan(filesBefore);
  console.log(`postmaster SIGKILL: ${await expectEveryTickStoredOnce()}`);
  expect(daemon.child.exitCode).toBeNull();
}, 120_000);

it(`survives the server stopped for ${STOPPED_MS / 1000} s: pg_up 0 throughout, no samples inside the gap, the stop and start stored`, async () => {
  onTestFailed(() => console.error(`pgvigil output:\n${daemon.output()}`));
  await waitUntil(async () => (await pgUp()) === '1', WAIT_MS, 'pg_up 1');
  const phasesBefore = stored().phases.length;
  await primary.stop('fast');
  const stoppedAt = Date.now();
  await waitUntil(async () => (await pgUp()) === '0', WAIT_MS, 'pg_up 0 on /metrics');
  await new Promise((resolve) => setTimeout(resolve, STOPPED_MS));
  expect(await pgUp()).toBe('0');
  expect(daemon.child.exitCode).toBeNull();
  const startedAt = Date.now();
  await primary.start();
  await waitUntil(async () => (await pgUp()) === '1', WAIT_MS, 'pg_up 1 after the start');
  await waitUntil(() => stored().commitSamples.some((ts) => ts > startedAt), WAIT_MS, 'samples after the start');
  expect(stored().commitSamples.filter((ts) => ts > stoppedAt + 1_000 && ts < startedAt)).toEqual([]);
  await waitUntil(() => stored().phases.slice(phasesBefore).includes('ready'), WAIT_MS, 'the start read from the new log file');
  expect(stored().phases.slice(phasesBefore)).toEqual(expect.arrayContaining(['shutdown_requested', 'shut_down', 'ready']));
  await workload.stop();
  console.log(`server stopped ${STOPPED_MS / 1000} s: ${await expectEveryTickStoredOnce()}`);
  daemon.child.kill('SIGTERM');
  expect(await daemon.exit).toEqual({ code: 0, signal: null });
}, 120_000);

it('reads every file the server wrote while pgvigil was stopped, in order: the restart\'s new file and two rotations past it', async () => {
  // The daemon was stopped by the test above, at the end of the file it was reading.
  const whileDown = new LogWorkload({ label: 'pg-faults-down', tickEveryMs: 20 });
  const filesBefore = primary.logFiles().length;
  await primary.stop('fast');
  await primary.start();
  whileDown.start(primary);
  for (let rotation = 0; rotation < 2; rotation++) {
    // log_filename has seconds: a rotation within the same second would append to the same file.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await primary.query('SELECT pg_rotate_logfile()');
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  await whileDown.stop();
  const inLog = [...countLogFiles(primary.logFiles(), whileDown.tickLine).ticks.values()].sort((a, b) => a - b);
  expect(primary.logFiles().length).toBeGreaterThanOrEqual(filesBefore + 3);

  daemon = await spawnDaemon(['--config', join(dir, 'pgvigil.yaml')]);
  onTestFailed(() => console.error(`pgvigil output:\n${daemon.output()}`));
  // In the order stored: the files read oldest first.
  const storedTicks = () => stored().messages.flatMap((m) => whileDown.tickMessage.exec(m)?.[1] ?? []).map(Number);
  await waitUntil(() => storedTicks().length >= inLog.length, WAIT_MS, `the ${inLog.length} ticks written while pgvigil was stopped`);
  expect(inLog).toEqual(Array.from({ length: whileDown.ticks }, (_, i) => i));
  expect(storedTicks()).toEqual(inLog);
  console.log(`while pgvigil was stopped: a restart and 2 rotations, ${primary.logFiles().length - filesBefore} new files, ${inLog.length} ticks in them, stored ${storedTicks().length}`);
  daemon.child.kill('SIGTERM');
  expect(await daemon.exit).toEqual({ code: 0, signal: null });
}, 120_000);
