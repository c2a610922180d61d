/**
 * The whole daemon SIGKILLed again and again: `pgvigil run` (built, dist/) with its tailer,
 * poller, rules and a webhook all on, killed at a random moment 100-1500 ms after it is up, at
 * least KILL_CYCLES times, while a real PostgreSQL 18 keeps logging (a RAISE WARNING every few
 * milliseconds) and a storm of statement timeouts every STORM_EVERY_MS fires error-storm, which
 * resolves when the storm is over.
 *
 * Checked after every kill, against the log files read independently: no entry stored twice,
 * every stored entry's offset is where that entry starts in its file, and no transition
 * notified twice except as a resend. At the end, after one last clean run: every tick the
 * workload logged stored exactly once, every statement timeout stored once, one firing and one
 * resolve per storm, each delivered to the webhook.
 *
 * Delivery is at least once, by design: a kill after the receiver answered 2xx but before the
 * outbox row's removal was committed sends that row again from the next run, with the same body,
 * which a receiver drops by the transition's identity (alert_id and status in the payload). So
 * a repeat must be byte-identical to the first delivery of its transition, and there can be at
 * most one per kill; anything else (a second, different notification for one transition) fails.
 * The random delays come from a seed printed with the totals (KILL_LOOP_SEED=... reruns them).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { openStore, type Db } from '../../src/store/open-store.js';
import { killDaemon, spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { countLogFiles, LogWorkload } from '../helpers/log-workload.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { seededRandom } from '../helpers/seeded-random.js';

/** At least 50; KILL_LOOP_CYCLES changes it for a longer run (or a quick one while debugging). */
const KILL_CYCLES = Number(process.env.KILL_LOOP_CYCLES ?? 50);
const TICK_EVERY_MS = 40;
const STORM_EVERY_MS = 60_000;
/** Statement timeouts per storm; error-storm's min_events is set below it. */
const STORM_ERRORS = 12;
/**
 * error-storm judges the window before "now": a storm is an alert only while a run reads and
 * evaluates it within that window. Long enough that several runs do, even on a loaded machine
 * where a start takes seconds.
 */
const STORM_WINDOW_MS = 45_000;
/** A start past this is a hang, not a slow machine: a dry run at load 25 on 2 cores saw one take over 20 s. */
const START_WAIT_MS = 60_000;
const CATCH_UP_WAIT_MS = STORM_WINDOW_MS + 30_000;

const dir = suiteTempDir('kill-loop');
const receiver = new WebhookReceiver();
let primary: PgServer;
let daemon: DaemonProcess | null = null;

beforeAll(async () => {
  await receiver.start();
  primary = await startPrimary({ version: 18, name: 'kill-loop' });
});

afterAll(async () => {
  daemon?.child.kill('SIGKILL');
  await receiver.stop();
  await destroyAllServers();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const workload = new LogWorkload({ label: 'kill-loop', tickEveryMs: TICK_EVERY_MS, storm: { everyMs: STORM_EVERY_MS, errors: STORM_ERRORS } });
const TICK = workload.tickMessage;
const readLogFiles = (files: string[]) => countLogFiles(files, workload.tickLine);

interface StoredEvent { kind: string; message: string; source_file: string; source_offset: number }
interface Transition { alert_id: number; to_state: string; ts_ms: number }

function readStore(store: string) {
  const db: Db = openStore(store, { readonly: true });
  try {
    return {
      events: db.prepare('SELECT kind, message, source_file, source_offset FROM events ORDER BY id').all() as StoredEvent[],
      transitions: db.prepare(
        `SELECT t.alert_id, t.to_state, t.ts_ms FROM alert_transitions t JOIN alerts a ON a.id = t.alert_id
         WHERE a.rule_id = 'error-storm' ORDER BY t.id`,
      ).all() as Transition[],
      outboxRows: db.prepare('SELECT count(*) FROM outbox').pluck().get() as number,
    };
  } finally {
    db.close();
  }
}

const deliveryKey = (alertId: unknown, status: unknown) => `${String(alertId)}/${String(status)}`;

/** Deliveries of error-storm transitions: the bodies received, by alert id and status. */
function deliveries(): Map<string, string[]> {
  const bodies = new Map<string, string[]>();
  for (const body of receiver.received) {
    if (body.rule_id !== 'error-storm') continue;
    const key = deliveryKey(body.alert_id, body.status);
    bodies.set(key, [...(bodies.get(key) ?? []), JSON.stringify(body)]);
  }
  return bodies;
}

/** Repeats of a transition's notification: resends of the same body, at most one per kill. */
function checkResends(kills: number): number {
  let resends = 0;
  for (const [key, bodies] of deliveries()) {
    expect(new Set(bodies).size, `two different notifications for the transition ${key}`).toBe(1);
    resends += bodies.length - 1;
  }
  expect(resends, `more resends than kills (${kills})`).toBeLessThanOrEqual(kills);
  return resends;
}

/** What must hold after every kill: nothing stored twice, nothing stored where it is not, no transition notified twice but as a resend. */
function checkConsistent(store: string, cycle: number): void {
  const stored = readStore(store);
  const file = readLogFiles(primary.logFiles());
  const seen = new Set<string>();
  const twice = stored.events.map((e) => `${e.source_file}:${e.source_offset}`).filter((p) => seen.size === seen.add(p).size);
  expect(twice, `entries stored twice after kill ${cycle}`).toEqual([]);
  const misplaced = stored.events.filter((e) => !file.starts.has(`${e.source_file}:${e.source_offset}`)
    || (TICK.test(e.message) && file.ticks.get(`${e.source_file}:${e.source_offset}`) !== Number(TICK.exec(e.message)?.[1])));
  expect(misplaced, `entries stored at an offset where they do not start, after kill ${cycle}`).toEqual([]);
  checkResends(cycle);
}

function writeConfig(store: string): string {
  const file = join(dir, 'pgvigil.yaml');
  writeFileSync(file, stringify({
    db: store,
    targets: [{ name: 'primary', dsn: primary.dsn(), log: { path: primary.logDir, start_at: 'beginning' } }],
    notify: { webhooks: [{ name: 'kill-loop', url: receiver.url }] },
    rules: {
      interval_ms: 500,
      hold_down_ms: 1_000,
      thresholds: { 'error-storm': { window_ms: STORM_WINDOW_MS, min_events: STORM_ERRORS - 2 } },
    },
  }));
  return file;
}

it(`stores every entry once and notifies every alert transition across ${KILL_CYCLES} SIGKILLs of pgvigil run`, async () => {
  const seed = Number(process.env.KILL_LOOP_SEED ?? Date.now() % 1_000_000);
  const random = seededRandom(seed);
  const store = join(dir, 'pgvigil.db');
  const config = writeConfig(store);
  let lastOutput = '';
  let phase = 'starting';
  onTestFailed(() => console.error(`kill loop seed ${seed}, failed in ${phase}; last pgvigil output:\n${daemon?.output() ?? lastOutput}`));
  workload.start(primary);
  const started = Date.now();
  const killedAfter: number[] = [];
  const startupMs: number[] = [];
  try {
    for (let cycle = 1; cycle <= KILL_CYCLES; cycle++) {
      phase = `cycle ${cycle} after ${Math.round((Date.now() - started) / 1000)} s`;
      const spawnedMs = Date.now();
      daemon = await spawnDaemon(['--config', config]);
      // Up: every component started, so each run reads, evaluates and sends until the kill.
      await daemon.waitForLog(/^serving \/metrics/, START_WAIT_MS);
      startupMs.push(Date.now() - spawnedMs);
      const delayMs = 100 + Math.round(random() * 1_400);
      await sleep(delayMs);
      expect(await killDaemon(daemon), `pgvigil exited on its own before kill ${cycle}`).toEqual({ code: null, signal: 'SIGKILL' });
      lastOutput = daemon.output();
      daemon = null;
      killedAfter.push(delayMs);
      checkConsistent(store, cycle);
    }
  } finally {
    await workload.stop();
  }
  const loopMs = Date.now() - started;

  phase = `the last run, after ${Math.round(loopMs / 1000)} s of kills`;
  // One last run reads what was logged since the last kill and lets the last storm resolve.
  daemon = await spawnDaemon(['--config', config]);
  // The logging collector writes behind the backends: wait until the files hold what was logged.
  let file = readLogFiles(primary.logFiles());
  await waitUntil(() => {
    file = readLogFiles(primary.logFiles());
    return file.ticks.size >= workload.ticks && file.statementTimeouts >= workload.stormErrors;
  }, CATCH_UP_WAIT_MS, 'the log files to hold every tick and statement timeout');
  let missing = '';
  await waitUntil(() => {
    const stored = readStore(store);
    const ticks = stored.events.filter((e) => TICK.test(e.message)).length;
    const timeouts = stored.events.filter((e) => e.kind === 'statement_timeout').length;
    missing = `${ticks} of ${file.ticks.size} ticks stored, ${timeouts} of ${file.statementTimeouts} statement timeouts (${workload.storms} storms),` +
      ` last transition ${stored.transitions.at(-1)?.to_state}, ${stored.outboxRows} outbox rows`;
    return ticks >= file.ticks.size && stored.transitions.at(-1)?.to_state === 'resolved' && stored.outboxRows === 0;
  }, CATCH_UP_WAIT_MS, 'the last run to store every tick, resolve the last storm and empty the outbox').catch((err: Error) => {
    throw new Error(`${err.message}: ${missing}`);
  });
  daemon.child.kill('SIGTERM');
  expect(await daemon.exit).toEqual({ code: 0, signal: null });
  daemon = null;
  checkConsistent(store, KILL_CYCLES);

  const stored = readStore(store);
  const storedTicks = stored.events.flatMap((e) => TICK.exec(e.message)?.[1] ?? []).map(Number).sort((a, b) => a - b);
  const fileTicks = [...file.ticks.values()].sort((a, b) => a - b);
  const storedTimeouts = stored.events.filter((e) => e.kind === 'statement_timeout').length;
  const firings = stored.transitions.filter((t) => t.to_state === 'firing');
  const delivered = deliveries();
  const resends = checkResends(KILL_CYCLES);
  console.log(
    `kill loop (seed ${seed}): ${KILL_CYCLES} SIGKILLs in ${Math.round(loopMs / 1000)} s, ${Math.min(...killedAfter)}-${Math.max(...killedAfter)} ms into each run` +
    ` (starting took ${Math.round(startupMs.reduce((a, b) => a + b, 0) / startupMs.length)} ms a start on average);` +
    ` ticks logged ${workload.ticks}, in the log ${fileTicks.length}, stored ${storedTicks.length};` +
    ` statement timeouts caused ${workload.stormErrors}, in the log ${file.statementTimeouts}, stored ${storedTimeouts};` +
    ` storms ${workload.storms}, error-storm transitions ${stored.transitions.length} (${firings.length} firing), webhook deliveries ${delivered.size} distinct plus ${resends} resends`,
  );
  expect(fileTicks).toEqual(Array.from({ length: workload.ticks }, (_, i) => i));
  expect(storedTicks).toEqual(fileTicks);
  expect(file.statementTimeouts).toBe(workload.stormErrors);
  expect(storedTimeouts).toBe(file.statementTimeouts);
  // Every storm fired once and resolved once, in turn; each transition went out once.
  expect(firings).toHaveLength(workload.storms);
  expect(stored.transitions.map((t) => t.to_state)).toEqual(Array.from({ length: 2 * workload.storms }, (_, i) => (i % 2 === 0 ? 'firing' : 'resolved')));
  expect([...delivered.keys()].sort()).toEqual(stored.transitions.map((t) => deliveryKey(t.alert_id, t.to_state)).sort());
}, 900_000);
