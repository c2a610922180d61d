/**
 * The forwarder's pipeline against a real SQLite store and a scripted central database: batch
 * N+1 is read (and, with two connections, written) while N is written, yet the cursors move only
 * past committed batches, in order.
 */
import { setImmediate as eventLoopTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { openStore, type Db } from '../store/open-store.js';
import { ReportMinutesTable } from '../store/report-minutes.js';
import type { ForwardBatch } from './forward-queue.js';
import { ForwardQueue } from './forward-queue.js';
import { Forwarder } from './forwarder.js';

const START_MS = Date.UTC(2026, 0, 1);

/** A central database whose writes end when the test says so (or at once, with autoCommit). */
class ScriptedCentral {
  readonly batches: ForwardBatch[] = [];
  autoCommit = false;
  private pending: Array<{ firstEventId: number; resolve: () => void; reject: (err: Error) => void }> = [];

  /** The event ids of each batch written, committed or not. */
  get sent(): number[][] {
    return this.batches.map((b) => b.events.map((e) => e.id));
  }

  /** One connection's writer; the forwarder writes one batch at a time on each. */
  connection(): { write: (batch: ForwardBatch) => Promise<void>; close: () => Promise<void> } {
    return { write: (batch) => this.write(batch), close: async () => {} };
  }

  commitOldest(): void {
    this.pending.shift()!.resolve();
  }

  failOldest(message: string): void {
    this.pending.shift()!.reject(new Error(message));
  }

  /** Commits the write of the batch that starts with this event. */
  commitBatchOf(firstEventId: number): void {
    const index = this.pending.findIndex((p) => p.firstEventId === firstEventId);
    if (index < 0) throw new Error(`no write of a batch starting at event ${firstEventId} is waiting`);
    this.pending.splice(index, 1)[0]!.resolve();
  }

  /** Resolves once `count` writes are waiting. */
  async writesWaiting(count: number): Promise<void> {
    for (let turn = 0; this.pending.length < count; turn++) {
      if (turn > 1_000) throw new Error(`${count} writes never waited at once (${this.pending.length} did)`);
      await eventLoopTurn();
    }
  }

  private write(batch: ForwardBatch): Promise<void> {
    this.batches.push(batch);
    if (this.autoCommit) return Promise.resolve();
    return new Promise((resolve, reject) => this.pending.push({ firstEventId: batch.events[0]!.id, resolve, reject }));
  }
}

function storeWithEvents(count: number): Db {
  const db = openStore(':memory:');
  addEvents(db, count);
  return db;
}

function addEvents(db: Db, count: number): void {
  const insert = db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
    VALUES ('db1', ?, 'generic', 'LOG', ?, '{}', 'postgresql.log', ?)`);
  for (let i = 0; i < count; i++) insert.run(START_MS + i, `message ${i}`, i * 100);
}

function setup(events: number, connections = 1) {
  const db = storeWithEvents(events);
  const queue = new ForwardQueue(db, { batchRows: 2, stepMs: 60_000, graceMs: 0 });
  const clock = new ManualClock(START_MS + 3_600_000);
  const central = new ScriptedCentral();
  const writers = Array.from({ length: connections }, () => central.connection());
  const forwarder = new Forwarder(queue, writers, clock, { info() {}, warn() {} }, { intervalMs: 1_000, maxRowsPerSecond: Infinity });
  queue.init(clock.nowMs());
  const eventCursor = () => db.prepare(`SELECT position FROM forward_cursors WHERE stream = 'events'`).pluck().get() as number;
  return { db, queue, central, forwarder, eventCursor };
}

/** Drains with every central write committed at once; resolves with the event ids of each batch sent. */
async function drain(forwarder: Forwarder, central: ScriptedCentral): Promise<number[][]> {
  const first = central.batches.length;
  central.autoCommit = true;
  while ((await forwarder.forwardOnce()) > 0);
  central.autoCommit = false;
  return central.sent.slice(first);
}

/** One forwardOnce() whose oldest central write commits, or fails with `failure`; settles as forwardOnce() does. */
async function forwardOneBatch(forwarder: Forwarder, central: ScriptedCentral, failure?: string): Promise<number> {
  const sending = forwarder.forwardOnce();
  await central.writesWaiting(1);
  if (failure === undefined) central.commitOldest();
  else central.failOldest(failure);
  return sending;
}

describe('Forwarder pipeline', () => {
  it('reads batch N+1 while N is written, and moves the cursor only past the committed N', async () => {
    const { central, forwarder, eventCursor } = setup(5);
    const first = forwarder.forwardOnce();
    await central.writesWaiting(1);
    expect(central.sent).toEqual([[1, 2]]);
    expect(eventCursor()).toBe(0);
    central.commitOldest();
    await expect(first).resolves.toBe(2);
    expect(eventCursor()).toBe(2);

    // Batch 2 was read ahead, not committed: the cursor stays before it while it is written.
    const second = forwarder.forwardOnce();
    await central.writesWaiting(1);
    expect(central.sent[1]).toEqual([3, 4]);
    expect(eventCursor()).toBe(2);
    central.commitOldest();
    await second;
    expect(eventCursor()).toBe(4);

    await drain(forwarder, central);
    expect(central.sent).toEqual([[1, 2], [3, 4], [5]]);
    expect(eventCursor()).toBe(5);
  });

  it('sends the batch it read ahead while the previous one was written', async () => {
    const { db, central, forwarder } = setup(4);
    await forwardOneBatch(forwarder, central);
    // Read from the cursors now, batch 2 would carry this change; read ahead, it does not.
    db.prepare(`UPDATE events SET message = 'changed' WHERE id = 3`).run();
    await forwardOneBatch(forwarder, central);
    expect(central.batches[1]!.events.map((e) => e.message)).toEqual(['message 2', 'message 3']);
  });

  it('drops the batch read ahead when batch N fails, and sends N again from the cursor', async () => {
    const { central, forwarder, eventCursor } = setup(5);
    await expect(forwardOneBatch(forwarder, central, 'COPY failed: connection reset')).rejects.toThrow(/COPY failed/);
    expect(eventCursor()).toBe(0);
    expect(forwarder.stats.failures).toBe(1);

    expect(await drain(forwarder, central)).toEqual([[1, 2], [3, 4], [5]]);
    expect(eventCursor()).toBe(5);
    expect(forwarder.stats.forwardedRows.events).toBe(5);
  });

  it('drops the batch read ahead when the batch sent from it fails', async () => {
    const { central, forwarder, eventCursor } = setup(5);
    await forwardOneBatch(forwarder, central);
    await expect(forwardOneBatch(forwarder, central, 'statement timeout')).rejects.toThrow(/statement timeout/);
    expect(eventCursor()).toBe(2);
    expect(await drain(forwarder, central)).toEqual([[3, 4], [5]]);
    expect(eventCursor()).toBe(5);
  });

  it('sends every event once, in order, while events keep arriving', async () => {
    const { db, central, forwarder } = setup(3);
    const first = await drain(forwarder, central);
    addEvents(db, 4);
    const second = await drain(forwarder, central);
    expect([...first, ...second].flat()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('Forwarder on two central connections', () => {
  it('writes batch N+1 beside N, and commits the cursors in order when N+1 ends first', async () => {
    const { central, forwarder, eventCursor } = setup(5, 2);
    const first = forwarder.forwardOnce();
    await central.writesWaiting(2);
    expect(central.sent).toEqual([[1, 2], [3, 4]]);
    central.commitBatchOf(3);
    await eventLoopTurn();
    expect(eventCursor()).toBe(0);
    central.commitBatchOf(1);
    await expect(first).resolves.toBe(2);
    expect(eventCursor()).toBe(2);
    // Batch 2 committed centrally already: the next call commits its cursor and sends batch 3.
    const second = forwarder.forwardOnce();
    await expect(second).resolves.toBe(2);
    expect(eventCursor()).toBe(4);
    await central.writesWaiting(1);
    expect(central.sent).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('sends N and N+1 again from the cursor when N fails after N+1 committed centrally', async () => {
    const { central, forwarder, eventCursor } = setup(5, 2);
    const first = forwarder.forwardOnce();
    await central.writesWaiting(2);
    central.commitBatchOf(3);
    central.failOldest('COPY failed: connection reset');
    await expect(first).rejects.toThrow(/COPY failed/);
    expect(eventCursor()).toBe(0);
    expect(await drain(forwarder, central)).toEqual([[1, 2], [3, 4], [5]]);
    expect(eventCursor()).toBe(5);
    expect(forwarder.stats.forwardedRows.events).toBe(5);
  });
});

describe('ForwardQueue.nextAfter', () => {
  it('reads on from where an uncommitted batch ends, alert changes included, and commits only in order', async () => {
    const db = storeWithEvents(3);
    const queue = new ForwardQueue(db, { batchRows: 2, stepMs: 60_000, graceMs: 0 });
    queue.init(START_MS);
    const insertAlert = db.prepare(`INSERT INTO alerts (rule_id, dedup_key, severity, state, target, labels, summary, evidence, started_ms, updated_ms)
      VALUES ('server-crashed', ?, 'critical', 'firing', 'db1', '{}', 'crash', '{}', ?, ?)`);
    for (let i = 0; i < 3; i++) insertAlert.run(`k${i}`, START_MS + i, START_MS + i);

    const first = queue.next(START_MS);
    const second = await queue.nextAfter(first, START_MS, eventLoopTurn);
    expect(first.events.map((e) => e.id)).toEqual([1, 2]);
    expect(second.events.map((e) => e.id)).toEqual([3]);
    expect(first.alerts.map((a) => a.id)).toEqual([1, 2]);
    expect(second.alerts.map((a) => a.id)).toEqual([3]);

    expect(() => queue.commit(second, START_MS)).toThrow(/not at the cursors.*an earlier batch was not committed/);
    queue.commit(first, START_MS);
    expect(() => queue.commit(first, START_MS)).toThrow(/an earlier batch was not committed/);
    queue.commit(second, START_MS);
    const third = queue.next(START_MS);
    expect([third.events.length, third.alerts.length]).toEqual([0, 0]);
  });
});

describe('ForwardQueue: the log report\'s minutes', () => {
  const minute = (i: number) => START_MS + i * 60_000;
  const states = (label: string) => JSON.stringify({ errors: label });

  function minuteStore() {
    const db = storeWithEvents(0);
    const table = new ReportMinutesTable(db);
    const queue = new ForwardQueue(db, { batchRows: 3, stepMs: 60_000, graceMs: 0 });
    queue.init(START_MS);
    /** The next batch, committed as the forwarder would after the central commit. */
    const forward = () => {
      const batch = queue.next(START_MS);
      queue.commit(batch, START_MS);
      return batch.reportMinutes.map((m) => ({ target: m.target, minute: (m.minuteMs - START_MS) / 60_000, states: m.states.map((s) => (JSON.parse(s) as { errors: string }).errors), throughId: m.throughId }));
    };
    return { db, table, queue, forward };
  }

  it('sends each minute whole, with every row it has when read, in (target, minute) order', () => {
    const { table, queue, forward } = minuteStore();
    table.insert({ target: 'db2', minuteMs: minute(0), states: states('a') });
    table.insert({ target: 'db1', minuteMs: minute(1), states: states('b') });
    table.insert({ target: 'db1', minuteMs: minute(0), states: states('c') });
    table.insert({ target: 'db1', minuteMs: minute(1), states: states('d') });
    expect(queue.pending(START_MS).report_minutes).toBe(4);
    // Three rows read (batchRows): db1's minute 1 goes with its fourth row too.
    expect(forward()).toEqual([
      { target: 'db1', minute: 0, states: ['c'], throughId: 3 },
      { target: 'db1', minute: 1, states: ['b', 'd'], throughId: 4 },
      { target: 'db2', minute: 0, states: ['a'], throughId: 1 },
    ]);
    // Row 4 comes up again on its own: its minute is sent again, the same as it is centrally.
    expect(forward()).toEqual([{ target: 'db1', minute: 1, states: ['b', 'd'], throughId: 4 }]);
    expect(forward()).toEqual([]);
    expect(queue.pending(START_MS).report_minutes).toBe(0);
  });

  it('sends a minute again, through a higher row id, once it gains a late row or its rows are merged; hour rows stay home', () => {
    const { table, forward } = minuteStore();
    table.insert({ target: 'db1', minuteMs: minute(0), states: states('a') });
    expect(forward()).toEqual([{ target: 'db1', minute: 0, states: ['a'], throughId: 1 }]);

    table.insert({ target: 'db1', minuteMs: minute(0), states: states('late') });
    expect(forward()).toEqual([{ target: 'db1', minute: 0, states: ['a', 'late'], throughId: 2 }]);

    table.mergeMinute('db1', minute(0), (texts) => states(texts.map((t) => (JSON.parse(t) as { errors: string }).errors).join('+')));
    table.writeHour('db1', minute(0), (texts) => states(`hour of ${texts.length}`));
    expect(forward()).toEqual([{ target: 'db1', minute: 0, states: ['a+late'], throughId: 3 }]);
    expect(forward()).toEqual([]);
  });

  it('starts from the first stored row on a store that forwarded before minutes were forwarded', () => {
    const { db, table, queue, forward } = minuteStore();
    db.prepare(`DELETE FROM forward_cursors WHERE stream = 'report_minutes'`).run();
    table.insert({ target: 'db1', minuteMs: minute(0), states: states('a') });
    queue.init(START_MS);
    expect(forward()).toEqual([{ target: 'db1', minute: 0, states: ['a'], throughId: 1 }]);
  });
});
