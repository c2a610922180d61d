/**
 * A storm that starts and ends while pgvigil is down: when the daemon comes back, the tailer reads
 * the log written meanwhile, and the rules must judge it at its own time (as `analyze --rules`
 * does), not at the wall clock's, by when the storm has long left their window.
 *
 * The daemon's rules stage as app.ts wires it (store writer, AlertStore with a webhook channel,
 * the rules engine with every rule, the backlog catch-up) on a fake clock; the tailer's part is
 * played by handing the writer the log's events in the batches a tailer reads a backlog in.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { WebhookNotifier } from '../notify/webhook.js';
import { AlertStore } from '../store/alert-store.js';
import { LogJudgedTable } from '../store/log-judged.js';
import { openStore, type Db } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { BacklogCatchUp } from './backlog-catch-up.js';
import { buildRules, logOnlyRuleIds, RULES_DEFAULTS } from './catalog.js';
import { RuleEngine } from './engine.js';
import { LogJudgement } from './log-judgement.js';
import { DEFAULTS as STORM } from './error-storm.js';
import { eventOf } from './memory-rule-view.js';
import { StoreRuleViewSource } from './store-rule-view.js';
import { lockTimeoutDetails } from './test-events.js';

const S = 1000;
const MINUTE = 60 * S;
/** When the log below starts; pgvigil is down from here unless a test says otherwise. */
const D0 = Date.UTC(2026, 10, 3, 2, 0, 0);
const { intervalMs, holdDownMs } = RULES_DEFAULTS;
/** Rows a tailer hands the writer at once while it reads a backlog (small, so storms span several commits). */
const BATCH_EVENTS = 8;

function lockTimeout(tsMs: number): AnyLogEvent {
  const { id: _id, ...event } = eventOf('lock_timeout', lockTimeoutDetails({ database: 'shop', statement: 'UPDATE orders SET paid = true WHERE id = $1' }), {
    tsMs, database: 'shop', level: 'ERROR', sqlstate: '55P03', message: 'canceling statement due to lock timeout',
  });
  return event as AnyLogEvent;
}

/** Lines that are not part of any storm, every 30 s: a log is never silent between bursts. */
function background(fromMs: number, toMs: number): AnyLogEvent[] {
  const events: AnyLogEvent[] = [];
  for (let t = fromMs; t < toMs; t += 30 * S) {
    const { id: _id, ...event } = eventOf('generic', { classified: false }, { tsMs: t, message: 'checkpoint starting: time' });
    events.push(event as AnyLogEvent);
  }
  return events;
}

/** `count` lock timeouts `everyMs` apart from `fromMs`. */
function burst(fromMs: number, count: number, everyMs: number): number[] {
  return Array.from({ length: count }, (_, i) => fromMs + i * everyMs);
}

/**
 * Where error-storm holds on the engine's steps (multiples of the interval): the first step with
 * min_events of the storm inside its window, and the last. Computed from the timestamps, so the
 * test checks the times the alert got against the rule's own definition.
 */
function stormSpan(times: readonly number[]): { firstMs: number; lastMs: number } {
  const held: number[] = [];
  const end = Math.max(...times) + STORM.windowMs + intervalMs;
  for (let t = Math.ceil(Math.min(...times) / intervalMs) * intervalMs; t <= end; t += intervalMs) {
    if (times.filter((x) => x <= t && x >= t - STORM.windowMs).length >= STORM.minEvents) held.push(t);
  }
  return { firstMs: held[0]!, lastMs: held.at(-1)! };
}

const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function memoryStore(): Db {
  const db = openStore(':memory:');
  dbs.push(db);
  return db;
}

/** The daemon's rules stage on `db`, started at the clock's time. */
async function startDaemon(db: Db, clock: ManualClock) {
  const log = silentLogger();
  const writer = new StoreWriter(db, clock, log);
  const alerts = new AlertStore(db, [new WebhookNotifier({ url: 'http://127.0.0.1:9/unused' })]);
  const judgement = new LogJudgement(new LogJudgedTable(db), clock, ['primary']);
  const engine = new RuleEngine({
    // A backlog's storm of 2 h stays one storm: error-storm's usual rate is read from 6 h, not 3.
    rules: buildRules({ ...RULES_DEFAULTS, thresholds: { 'error-storm': { baselineMs: 6 * 60 * MINUTE } } }),
    views: new StoreRuleViewSource(db, { targets: [{ name: 'primary', cluster: null }], staleAfterMs: RULES_DEFAULTS.staleAfterMs }),
    alerts, clock, log, commits: writer, judged: judgement, options: RULES_DEFAULTS,
  });
  const catchUp = new BacklogCatchUp({ engine, commits: writer, judgement, clock, log, ruleIds: logOnlyRuleIds(RULES_DEFAULTS), intervalMs, targets: ['primary'] });
  const components = [writer, engine, catchUp];
  for (const c of components) await c.start();
  return {
    writer,
    engine,
    catchUp,
    /** What a tailer does with the log: batches, each committed before the next is read. */
    async read(events: readonly AnyLogEvent[]) {
      const ordered = [...events].sort((a, b) => a.tsMs - b.tsMs);
      for (let i = 0; i < ordered.length; i += BATCH_EVENTS) {
        writer.enqueue({ events: ordered.slice(i, i + BATCH_EVENTS) });
        await clock.advance(250);
        await catchUp.caughtUp();
      }
    },
    /** Time passing, with the catch-up taking its turns as the event loop would give them. */
    async pass(ms: number) {
      for (let left = ms; left > 0; left -= intervalMs) {
        await clock.advance(Math.min(intervalMs, left));
        await catchUp.caughtUp();
      }
    },
    async stop() {
      for (const c of [...components].reverse()) await c.stop();
    },
  };
}

interface StoredAlert { id: number; rule_id: string; started_ms: number; resolved_ms: number | null; summary: string; evidence: string }

function stormAlerts(db: Db): StoredAlert[] {
  return db.prepare(`SELECT * FROM alerts WHERE rule_id = 'error-storm' ORDER BY id`).all() as StoredAlert[];
}

function transitions(db: Db, alertId: number): Array<{ ts_ms: number; to_state: string }> {
  return db.prepare('SELECT ts_ms, to_state FROM alert_transitions WHERE alert_id = ? ORDER BY id').all(alertId) as Array<{ ts_ms: number; to_state: string }>;
}

describe('a storm in the log written while pgvigil was down', () => {
  it('fires and resolves at the storm\'s own times when the daemon reads the backlog, marked as found late, with its notifications', async () => {
    const db = memoryStore();
    // Down for 20 minutes; 30 lock timeouts in 2 minutes (one every 4 s) from minute 5.
    const storm = burst(D0 + 5 * MINUTE, 30, 4 * S);
    const clock = new ManualClock(D0 + 20 * MINUTE);
    const daemon = await startDaemon(db, clock);
    await daemon.read([...background(D0, D0 + 20 * MINUTE), ...storm.map(lockTimeout)]);
    await daemon.pass(30 * S);

    const alerts = stormAlerts(db);
    expect(alerts).toHaveLength(1);
    const alert = alerts[0]!;
    const span = stormSpan(storm);
    expect({ started: alert.started_ms, resolved: alert.resolved_ms }).toEqual({ started: span.firstMs, resolved: span.lastMs + holdDownMs });
    expect(transitions(db, alert.id)).toEqual([
      { ts_ms: span.firstMs, to_state: 'firing' },
      { ts_ms: span.lastMs + holdDownMs, to_state: 'resolved' },
    ]);
    expect(JSON.parse(alert.evidence)).toMatchObject({ facts: { found_in_backlog: true, top_relation: 'orders' } });
    expect(alert.summary).toMatch(/found late/);

    // Still news: the receiver is told of both, with their real times and the mark.
    const rows = db.prepare('SELECT action, payload FROM outbox WHERE alert_id = ? ORDER BY id').all(alert.id) as Array<{ action: string; payload: string }>;
    expect(rows.map((r) => r.action)).toEqual(['trigger', 'resolve']);
    for (const row of rows) expect(JSON.parse(row.payload)).toMatchObject({ evidence: { facts: { found_in_backlog: true } } });
    expect(rows.map((r) => (JSON.parse(r.payload) as { at: string }).at)).toEqual([new Date(span.firstMs).toISOString(), new Date(span.lastMs + holdDownMs).toISOString()]);
    await daemon.stop();
  });

  it('keeps the alert that was open when pgvigil stopped as the one alert, and resolves it when the backlog shows the storm ended, even when its hold-down runs out before the tailer reads', async () => {
    const db = memoryStore();
    // Live for 2 minutes of a storm (one lock timeout every 4 s), which goes on for a minute after the stop.
    const storm = burst(D0, 45, 4 * S);
    const clock = new ManualClock(D0);
    const first = await startDaemon(db, clock);
    for (const ts of storm.filter((t) => t < D0 + 2 * MINUTE)) {
      await clock.advance(ts + S - clock.nowMs());
      first.writer.enqueue({ events: [lockTimeout(ts)] });
    }
    await clock.advance(S);
    expect(stormAlerts(db).map((a) => a.resolved_ms)).toEqual([null]);
    expect(JSON.parse(stormAlerts(db)[0]!.evidence)).not.toHaveProperty('facts.found_in_backlog');
    await first.stop();

    // Down for 20 minutes; back, it reads the rest of the storm and the quiet after it.
    await clock.advance(D0 + 22 * MINUTE - clock.nowMs());
    const second = await startDaemon(db, clock);
    // A slow start: the tailer hands over its first lines two minutes later, past the hold-down.
    await second.pass(2 * MINUTE);
    await second.read([...background(D0 + 2 * MINUTE, D0 + 22 * MINUTE), ...storm.filter((t) => t >= D0 + 2 * MINUTE).map(lockTimeout)]);
    await second.pass(30 * S);

    const alerts = stormAlerts(db);
    expect(alerts).toHaveLength(1);
    const span = stormSpan(storm);
    expect(alerts[0]!.resolved_ms).toBe(span.lastMs + holdDownMs);
    expect(transitions(db, alerts[0]!.id).map((t) => t.to_state)).toEqual(['firing', 'resolved']);
    await second.stop();
  });

  it('judges at the next start what a catch-up killed half-way had stored but not judged, once: the storm its last lines complete fires and resolves at its own times', async () => {
    const db = memoryStore();
    // Exactly min_events lock timeouts: the storm holds only once its last one is judged.
    const storm = burst(D0 + 5 * MINUTE, STORM.minEvents, 4 * S);
    const span = stormSpan(storm);
    // Back after 20 minutes, it reads the backlog up to the storm's last line and is SIGKILLed
    // there: its clock never moves again and nothing of it runs, only what it committed remains.
    const killed = await startDaemon(db, new ManualClock(D0 + 20 * MINUTE));
    await killed.read([...background(D0, D0 + 5 * MINUTE), ...storm.map(lockTimeout)]);
    expect(db.prepare(`SELECT count(*) FROM events WHERE kind = 'lock_timeout'`).pluck().get()).toBe(STORM.minEvents);
    expect(stormAlerts(db)).toEqual([]);

    // Back again 20 minutes later; the server wrote nothing for 10 minutes after the storm, so the
    // lines the tailer reads now are past the storm's window: only the stored lines show it.
    const clock = new ManualClock(D0 + 40 * MINUTE);
    const restarted = await startDaemon(db, clock);
    await restarted.read(background(D0 + 15 * MINUTE, D0 + 40 * MINUTE));
    await restarted.pass(30 * S);

    const alerts = stormAlerts(db);
    expect(alerts).toHaveLength(1);
    expect(transitions(db, alerts[0]!.id)).toEqual([
      { ts_ms: span.firstMs, to_state: 'firing' },
      { ts_ms: span.lastMs + holdDownMs, to_state: 'resolved' },
    ]);
    expect(alerts[0]!.summary).toMatch(/found late/);
    expect(db.prepare('SELECT action FROM outbox WHERE alert_id = ? ORDER BY id').pluck().all(alerts[0]!.id)).toEqual(['trigger', 'resolve']);
    // Judged to the end: a third start has nothing left to catch up.
    const newest = db.prepare(`SELECT max(id) FROM events WHERE target = 'primary'`).pluck().get();
    expect(db.prepare(`SELECT event_id FROM log_judged WHERE target = 'primary'`).pluck().get()).toBe(newest);
    await restarted.stop();
  });

  it('does not judge again an instant judged live: a line from the end of a storm resolved live, read late, raises no second alert', async () => {
    const db = memoryStore();
    const storm = burst(D0, 30, 4 * S);
    const clock = new ManualClock(D0);
    const daemon = await startDaemon(db, clock);
    for (const ts of storm) {
      await clock.advance(ts + S - clock.nowMs());
      daemon.writer.enqueue({ events: [lockTimeout(ts)] });
    }
    await clock.advance(STORM.windowMs + holdDownMs + MINUTE);
    expect(stormAlerts(db).map((a) => a.resolved_ms === null)).toEqual([false]);

    // One more line written a second after the storm's last timeout, handed over only now (the
    // rest of a rotated file): behind the clock, but the instants it belongs to were judged.
    daemon.writer.enqueue({ events: background(storm.at(-1)! + S, storm.at(-1)! + 2 * S) });
    await daemon.pass(30 * S);
    expect(stormAlerts(db)).toHaveLength(1);
    await daemon.stop();
  });

  it('steps a backlog of hours in turns of a few evaluations, the event loop free between them, with the same alert', async () => {
    const db = memoryStore();
    // A lock timeout every 4 s for 2 hours: one storm all along, ~1,440 evaluations to step.
    const storm = burst(D0, 1_800, 4 * S);
    const clock = new ManualClock(D0 + 3 * 60 * MINUTE);
    const daemon = await startDaemon(db, clock);
    let evaluations = 0;
    const evaluate = daemon.engine.evaluate.bind(daemon.engine);
    // The catch-up's evaluations (those with a scope) in one piece of work: a microtask queued at
    // the first runs after it ends.
    let mostInOneTurn = 0;
    let inThisTurn: number | null = null;
    daemon.engine.evaluate = (...args) => {
      if (args[2] === undefined) return evaluate(...args);
      evaluations++;
      if (inThisTurn === null) {
        inThisTurn = 0;
        queueMicrotask(() => { inThisTurn = null; });
      }
      mostInOneTurn = Math.max(mostInOneTurn, ++inThisTurn);
      return evaluate(...args);
    };
    // The whole backlog in one commit, as a tailer reading fast hands the writer its batch.
    daemon.writer.enqueue({ events: storm.map(lockTimeout) });
    const afterCommit = evaluations;
    await daemon.pass(30 * S);

    expect(afterCommit).toBe(0);
    expect(evaluations).toBeGreaterThan(1_000);
    expect(mostInOneTurn).toBeLessThanOrEqual(20);
    const span = stormSpan(storm);
    expect(stormAlerts(db).map((a) => [a.started_ms, a.resolved_ms])).toEqual([[span.firstMs, span.lastMs + holdDownMs]]);
    await daemon.stop();
  });

  it('is not pinned by a judged instant from a wall clock that was an hour ahead and has gone back: the storm fires at its own times', async () => {
    const db = memoryStore();
    // Live for a minute with the wall clock an hour ahead: its evaluations judge up to D0 + 1 h 1 min.
    const clock = new ManualClock(D0);
    clock.jumpWallClock(60 * MINUTE);
    const first = await startDaemon(db, clock);
    for (let i = 0; i < 6; i++) {
      first.writer.enqueue({ events: background(clock.nowMs(), clock.nowMs() + S) });
      await first.pass(10 * S);
    }
    expect(db.prepare(`SELECT at_ms FROM log_judged WHERE target = 'primary'`).pluck().get()).toBeGreaterThan(D0 + 60 * MINUTE);
    await first.stop();
    // Set right while pgvigil was down; the storm is written at the real time, read 20 minutes later.
    clock.jumpWallClock(-60 * MINUTE);
    await clock.advance(D0 + 20 * MINUTE - clock.nowMs());
    const storm = burst(D0 + 5 * MINUTE, 30, 4 * S);
    const second = await startDaemon(db, clock);
    await second.read([...background(D0 + MINUTE, D0 + 20 * MINUTE), ...storm.map(lockTimeout)]);
    await second.pass(30 * S);

    const span = stormSpan(storm);
    expect(stormAlerts(db).map((a) => [a.started_ms, a.resolved_ms])).toEqual([[span.firstMs, span.lastMs + holdDownMs]]);
    await second.stop();
  });

  it('takes a step that threw (its store transaction failed) again at the next interval, from the same event: nothing of the backlog is lost', async () => {
    const db = memoryStore();
    const clock = new ManualClock(D0 + 20 * MINUTE);
    const daemon = await startDaemon(db, clock);
    const evaluate = daemon.engine.evaluate.bind(daemon.engine);
    let failures = 0;
    daemon.engine.evaluate = (...args) => {
      if (args[2] !== undefined && failures === 0) {
        failures++;
        throw new Error('SQLITE_FULL: database or disk is full');
      }
      return evaluate(...args);
    };
    const storm = burst(D0 + 5 * MINUTE, 30, 4 * S);
    await daemon.read([...background(D0, D0 + 15 * MINUTE), ...storm.map(lockTimeout)]);
    expect(failures).toBe(1);
    await daemon.pass(30 * S);
    const span = stormSpan(storm);
    expect(stormAlerts(db).map((a) => [a.started_ms, a.resolved_ms])).toEqual([[span.firstMs, span.lastMs + holdDownMs]]);
    await daemon.stop();
  });
});
