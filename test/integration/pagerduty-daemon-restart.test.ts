/**
 * Incident: a backend is SIGKILLed (what the OOM killer does) while PagerDuty is answering 503,
 * and pgvigil itself is SIGKILLed before it could page. The built daemon (`pgvigil run` with a
 * YAML config) tails a real PostgreSQL 18, fires server-crashed and queues the trigger in its
 * outbox; after the kill, PagerDuty comes back and a new daemon on the same store pages exactly
 * once under the incident's dedup_key, then resolves it when the alert ends (server-crashed stays
 * open for active_for_ms after the crash; the test shortens it).
 *
 * The group wait (a new incident's first trigger held, 10 s by default) is shortened to 1 s by
 * the config. Runs the built daemon (dist/): `npm test` builds it first.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore, type Db } from '../../src/store/open-store.js';
import { PagerDutyReceiver } from '../helpers/pagerduty-receiver.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-server.js';
import { backendKilledCrashRestart } from '../helpers/scenarios/crash.js';
import { LogWatcher } from '../helpers/scenarios/log-watcher.js';

const ROUTING_KEY = 'R0ut1ngKeyR0ut1ngKeyR0ut1ngKey02';
const PGVIGIL = join(import.meta.dirname, '../../bin/pgvigil.js');
/** Long enough that the alert is still open when the restarted daemon pages, short for a test. */
const ACTIVE_FOR_MS = 10_000;
const STARTUP_WAIT_MS = 20_000;
/** The group wait, the crash's way through the log and the rules, and a retry's backoff. */
const DELIVERY_WAIT_MS = 25_000;

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-pd-daemon-'));
const receiver = new PagerDutyReceiver(ROUTING_KEY);
const daemons: Daemon[] = [];
let primary: PgServer;

beforeAll(async () => {
  await receiver.start();
  primary = await startPrimary({ version: 18, name: 'pd-daemon' });
});

afterAll(async () => {
  for (const daemon of daemons) daemon.child.kill('SIGKILL');
  await receiver.stop();
  await destroyAllServers();
  rmSync(dir, { recursive: true, force: true });
});

interface Daemon {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function startDaemon(configFile: string): Promise<Daemon> {
  const port = await freePort();
  const child = spawn(process.execPath, [PGVIGIL, 'run', '--config', configFile, '--listen', `127.0.0.1:${port}`], { env: { PATH: process.env.PATH } });
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
  child.stdout.setEncoding('utf8').on('data', (text: string) => { output += text; });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const daemon = { child, url: `http://127.0.0.1:${port}`, output: () => output, exit };
  daemons.push(daemon);
  return daemon;
}

/** /readyz is 200 once the store is writable, the server was polled and its log is being read. */
function waitReady(daemon: Daemon, what: string): Promise<void> {
  return waitUntil(async () => {
    if (daemon.child.exitCode !== null) throw new Error(`pgvigil exited ${daemon.child.exitCode}`);
    return (await fetch(`${daemon.url}/readyz`)).status === 200;
  }, STARTUP_WAIT_MS, what);
}

function writeConfig(store: string): string {
  const file = join(dir, 'pgvigil.yaml');
  writeFileSync(file, stringify({
    db: store,
    targets: [{
      name: 'primary',
      cluster: 'shop',
      dsn: primary.dsn(),
      // The log_line_prefix comes from pg_settings, as in production.
      log: { path: primary.logDir, start_at: 'beginning' },
    }],
    notify: { pagerduty: { routing_key: ROUTING_KEY, events_url: receiver.eventsUrl, change_url: receiver.changeUrl, group_wait_ms: 1_000 } },
    rules: { interval_ms: 500, hold_down_ms: 1_000, thresholds: { 'server-crashed': { active_for_ms: ACTIVE_FOR_MS } } },
  }));
  return file;
}

const incidentKey = (db: Db) =>
  db.prepare(`SELECT dedup_key FROM incidents WHERE rule_id = 'server-crashed'`).pluck().get() as string | undefined;

const outboxRows = (db: Db, key: string) =>
  db.prepare(`SELECT action, attempts, state FROM outbox WHERE channel = 'pagerduty' AND dedup_key = ? ORDER BY id`).all(key) as Array<{ action: string; attempts: number; state: string }>;

const acceptedFor = (key: string) => receiver.received.filter((r) => r.status === 202 && r.body.dedup_key === key);

it('pages once for a crash seen while PagerDuty was down, after pgvigil itself was killed and restarted, and resolves it', async () => {
  const store = join(dir, 'pgvigil.db');
  const config = writeConfig(store);
  receiver.failAll(503);
  const first = await startDaemon(config);
  onTestFailed(() => console.error(`--- pgvigil output\n${daemons.map((d) => d.output()).join('\n--- restarted\n')}`));
  await waitReady(first, 'the first daemon to be ready');

  const logFile = primary.logFiles().at(-1);
  if (logFile === undefined) throw new Error(`no log file in ${primary.logDir}`);
  await backendKilledCrashRestart.run({ version: 18, primary, standby: null, log: new LogWatcher(logFile) });
  const crashLine = await primary.waitForLog(/client backend \(PID \d+\) was terminated by signal 9: Killed/);
  const victimPid = /\(PID (\d+)\)/.exec(crashLine)?.[1];

  const db = openStore(store, { readonly: true });
  try {
    await waitUntil(() => incidentKey(db) !== undefined, DELIVERY_WAIT_MS, 'server-crashed to open an incident');
    const key = incidentKey(db)!;
    await waitUntil(() => (outboxRows(db, key)[0]?.attempts ?? 0) >= 1, DELIVERY_WAIT_MS, 'a first attempt of the trigger, refused with 503');
    first.child.kill('SIGKILL');
    expect(await first.exit).toEqual({ code: null, signal: 'SIGKILL' });
    const refused = receiver.received.filter((r) => r.body.dedup_key === key);
    expect(new Set(refused.map((r) => `${String(r.body.event_action)} ${r.status}`))).toEqual(new Set(['trigger 503']));
    expect(receiver.pages).toBe(0);
    expect(outboxRows(db, key)).toEqual([{ action: 'trigger', attempts: expect.any(Number), state: 'pending' }]);
    receiver.failAll(null);
    const second = await startDaemon(config);

    await receiver.waitFor(() => acceptedFor(key).length > 0, DELIVERY_WAIT_MS, 'the trigger delivered by the restarted daemon');
    const trigger = acceptedFor(key)[0]!.body;
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY, event_action: 'trigger', client: 'pgvigil',
      // The server by name and address: this machine, for a server on 127.0.0.1.
      payload: { source: `primary (${hostname()}:${new URL(primary.dsn()).port})`, severity: 'critical', class: 'server-crashed', group: 'shop', custom_details: { rule_id: 'server-crashed', target: 'primary', firing: 1 } },
    });
    expect((trigger.payload as { summary: string }).summary).toMatch(new RegExp(
      `^client backend pid ${victimPid} was killed by signal 9 \\(Killed: on Linux almost always the OOM killer\\) while running: SELECT pg_sleep\\(\\?\\); the server terminated every connection`,
    ));

    // A second accepted trigger ends the wait at once: it is the failure this test is about.
    const actions = () => acceptedFor(key).map((r) => r.body.event_action);
    const resolved = () => actions().includes('resolve') && outboxRows(db, key).length === 0;
    await receiver.waitFor(() => resolved() || actions().filter((a) => a === 'trigger').length > 1, ACTIVE_FOR_MS + DELIVERY_WAIT_MS, 'the resolve once the alert ends');
    expect(actions()).toEqual(['trigger', 'resolve']);
    expect(receiver.incidents).toEqual([expect.objectContaining({ dedupKey: key, open: false, triggers: 1 })]);
    const transitions = db.prepare(
      `SELECT a.dedup_key, t.to_state FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id WHERE a.rule_id = 'server-crashed' ORDER BY t.id`,
    ).all() as Array<{ dedup_key: string; to_state: string }>;
    expect(transitions.map((t) => t.to_state)).toEqual(['firing', 'resolved']);
    expect(transitions[0]!.dedup_key).toBe('server-crashed/primary');

    second.child.kill('SIGTERM');
    expect(await second.exit).toEqual({ code: 0, signal: null });
  } finally {
    db.close();
  }
});
