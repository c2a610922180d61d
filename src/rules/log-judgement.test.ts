import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { LogJudgedTable } from '../store/log-judged.js';
import { openStore, type Db } from '../store/open-store.js';
import { LogJudgement } from './log-judgement.js';

const T0 = Date.UTC(2026, 10, 3, 2, 0, 0);

const dbs: Db[] = [];
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

function store(): Db {
  const db = openStore(':memory:');
  dbs.push(db);
  return db;
}

/** Stores a log event of `target` at `tsMs`; returns its id. */
function storeEvent(db: Db, target: string, tsMs: number): number {
  return Number(db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
    VALUES (?, ?, 'generic', 'LOG', 'checkpoint starting: time', '{}', 'postgresql.log', 0)`).run(target, tsMs).lastInsertRowid);
}

function savedRows(db: Db) {
  return db.prepare('SELECT target, event_id AS eventId, at_ms AS atMs FROM log_judged ORDER BY target').all();
}

describe('LogJudgement', () => {
  it('counts the newest stored event as judged for a target that has no position yet (a store from before positions), and saves that', () => {
    const db = store();
    storeEvent(db, 'a', T0);
    const newestOfA = storeEvent(db, 'a', T0 + 1_000);
    storeEvent(db, 'b', T0 + 2_000);
    const judgement = new LogJudgement(new LogJudgedTable(db), new ManualClock(T0 + 60_000), ['a', 'c']);
    expect(judgement.position('a')).toEqual({ eventId: newestOfA, atMs: T0 + 1_000 });
    expect(judgement.position('c')).toEqual({ eventId: 0, atMs: 0 });
    expect(savedRows(db)).toEqual([{ target: 'a', eventId: newestOfA, atMs: T0 + 1_000 }, { target: 'c', eventId: 0, atMs: 0 }]);
    expect([...judgement.unjudgedEvents('a')]).toEqual([]);
  });

  it('gives the events stored after a position, of that target only, in commit order', () => {
    const db = store();
    const table = new LogJudgedTable(db);
    const judged = storeEvent(db, 'a', T0);
    table.save('a', { eventId: judged, atMs: T0 }, T0);
    const later = [storeEvent(db, 'a', T0 + 2_000), storeEvent(db, 'b', T0 + 1_000), storeEvent(db, 'a', T0 + 1_500)];
    const judgement = new LogJudgement(table, new ManualClock(T0), ['a', 'b']);
    expect([...judgement.unjudgedEvents('a')].flat()).toEqual([{ id: later[0], tsMs: T0 + 2_000 }, { id: later[2], tsMs: T0 + 1_500 }]);
  });

  it('moves a live evaluation\'s targets to the newest event committed and the evaluation\'s time, leaving those catching up where they were', () => {
    const db = store();
    const judgement = new LogJudgement(new LogJudgedTable(db), new ManualClock(T0), ['a', 'b']);
    judgement.committedEvent('a', 5, true);
    judgement.committedEvent('b', 6, false);
    judgement.live(() => undefined, T0 + 5_000, (target) => target === 'b');
    expect(judgement.position('a')).toEqual({ eventId: 5, atMs: T0 + 5_000 });
    expect(judgement.position('b')).toEqual({ eventId: 0, atMs: 0 });
    expect(savedRows(db)).toEqual([{ target: 'a', eventId: 5, atMs: T0 + 5_000 }, { target: 'b', eventId: 0, atMs: 0 }]);
  });

  it('holds a catch-up step\'s position below a live event no live evaluation has seen, until one has', () => {
    const db = store();
    const judgement = new LogJudgement(new LogJudgedTable(db), new ManualClock(T0), ['a']);
    judgement.committedEvent('a', 7, true);
    judgement.committedEvent('a', 8, false);
    judgement.committedEvent('a', 9, false);
    judgement.stepped('a', 9, T0 + 5_000, () => undefined);
    expect(judgement.position('a')).toEqual({ eventId: 6, atMs: T0 + 5_000 });
    judgement.live(() => undefined, T0 + 10_000, () => false);
    expect(judgement.position('a')).toEqual({ eventId: 9, atMs: T0 + 10_000 });
  });

  it('never moves a position back (a wall clock stepped back, a step before the last live evaluation)', () => {
    const db = store();
    const judgement = new LogJudgement(new LogJudgedTable(db), new ManualClock(T0), ['a']);
    judgement.committedEvent('a', 4, true);
    judgement.live(() => undefined, T0 + 10_000, () => false);
    judgement.stepped('a', 3, T0 + 2_000, () => undefined);
    expect(judgement.position('a')).toEqual({ eventId: 4, atMs: T0 + 10_000 });
  });

  it('moves the position in the transaction of the evaluation: one that fails keeps neither its writes nor a new position', () => {
    const db = store();
    db.exec('CREATE TABLE transitions_probe (n INTEGER)');
    const judgement = new LogJudgement(new LogJudgedTable(db), new ManualClock(T0), ['a']);
    expect(judgement.position('a')).toEqual({ eventId: 0, atMs: 0 });
    judgement.committedEvent('a', 3, false);
    expect(() => judgement.stepped('a', 3, T0 + 5_000, () => {
      db.prepare('INSERT INTO transitions_probe (n) VALUES (1)').run();
      throw new Error('disk I/O error');
    })).toThrow('disk I/O error');
    expect(db.prepare('SELECT count(*) FROM transitions_probe').pluck().get()).toBe(0);
    expect(savedRows(db)).toEqual([{ target: 'a', eventId: 0, atMs: 0 }]);
    expect(judgement.position('a')).toEqual({ eventId: 0, atMs: 0 });

    judgement.stepped('a', 3, T0 + 5_000, () => db.prepare('INSERT INTO transitions_probe (n) VALUES (2)').run());
    expect(db.prepare('SELECT n FROM transitions_probe').pluck().all()).toEqual([2]);
    expect(savedRows(db)).toEqual([{ target: 'a', eventId: 3, atMs: T0 + 5_000 }]);
  });
});
