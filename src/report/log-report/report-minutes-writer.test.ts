import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../../domain/index.js';
import { silentLogger } from '../../lib/logger.js';
import { openStore, type Db } from '../../store/open-store.js';
import { ReportMinutesTable } from '../../store/report-minutes.js';
import { applyRetention } from '../../store/retention.js';
import { StoreWriter } from '../../store/store-writer.js';
import { ReportMinutesWriter } from './report-minutes-writer.js';
import { DEFAULT_REPORT_LIMITS, type ReportSection } from './section.js';
import { mergeStoredMinutes } from './stored-log-report.js';

/**
 * A section for these tests only (the registry's sections are tested on real logs): events per
 * kind, and the messages in the order they were folded, so a merge out of order shows.
 */
interface SeenState { perKind: Record<string, number>; messages: string[] }
const SEEN: ReportSection<SeenState, SeenState> = {
  key: 'seen',
  empty: () => ({ perKind: {}, messages: [] }),
  add: (state, event) => {
    state.perKind[event.kind] = (state.perKind[event.kind] ?? 0) + 1;
    state.messages.push(event.message);
  },
  merge: (earlier, later) => {
    for (const [kind, n] of Object.entries(later.perKind)) earlier.perKind[kind] = (earlier.perKind[kind] ?? 0) + n;
    earlier.messages.push(...later.messages);
    return earlier;
  },
  result: (state) => state,
};

const T0 = Date.UTC(2026, 10, 30, 2, 0);

function event(tsMs: number, message: string, target = 'db1'): AnyLogEvent {
  return {
    kind: message.startsWith('checkpoint') ? 'checkpoint' : 'generic', target, tsMs, pid: 7, database: 'app', user: 'u', level: 'LOG', sqlstate: null,
    message, details: { classified: false }, source: { file: '/log', offset: 0, line: null },
  } as AnyLogEvent;
}

function daemon(db: Db, clock = new ManualClock(T0)) {
  const writer = new StoreWriter(db, clock, silentLogger());
  const minutes = new ReportMinutesWriter(db, writer, clock, silentLogger(), { sections: [SEEN], tickMs: 10_000, idleMs: 120_000 });
  const store = (...events: AnyLogEvent[]) => {
    writer.enqueue({ events });
    writer.flush();
  };
  return { writer, minutes, clock, store };
}

function stored(db: Db, window = { fromMs: 0, toMs: Number.MAX_SAFE_INTEGER }) {
  const report = mergeStoredMinutes(new ReportMinutesTable(db).inWindow(window), [SEEN], DEFAULT_REPORT_LIMITS);
  return { ...report, sections: report.sections as { seen: SeenState } };
}

const rows = (db: Db) => db.prepare('SELECT target, minute_ms AS minuteMs FROM report_minutes ORDER BY id').all();

describe('the log report per minute in the store', () => {
  it('writes a minute once an event 2 minutes past its end arrives, and the rest at stop', async () => {
    const db = openStore(':memory:');
    const { minutes, store } = daemon(db);
    await minutes.start();
    store(event(T0 + 1_000, 'a'), event(T0 + 59_000, 'b'), event(T0 + 60_000, 'c'));
    store(event(T0 + 170_000, 'd'));
    expect(rows(db)).toEqual([]);
    store(event(T0 + 180_000, 'e'));
    expect(rows(db)).toEqual([{ target: 'db1', minuteMs: T0 }]);
    await minutes.stop();
    expect(rows(db)).toEqual([{ target: 'db1', minuteMs: T0 }, { target: 'db1', minuteMs: T0 + 60_000 }, { target: 'db1', minuteMs: T0 + 120_000 }, { target: 'db1', minuteMs: T0 + 180_000 }]);
    expect(stored(db).sections.seen).toEqual({ perKind: { generic: 5 }, messages: ['a', 'b', 'c', 'd', 'e'] });
  });

  it('folds a late event of a written minute into a second row of that minute, which the reader merges', async () => {
    const db = openStore(':memory:');
    const { minutes, store } = daemon(db);
    await minutes.start();
    store(event(T0 + 5_000, 'early'), event(T0 + 200_000, 'later'));
    store(event(T0 + 30_000, 'late'));
    await minutes.stop();
    expect(rows(db)).toEqual([{ target: 'db1', minuteMs: T0 }, { target: 'db1', minuteMs: T0 }, { target: 'db1', minuteMs: T0 + 180_000 }]);
    expect(stored(db).sections.seen).toEqual({ perKind: { generic: 3 }, messages: ['early', 'late', 'later'] });
    expect(stored(db, { fromMs: T0, toMs: T0 + 60_000 }).sections.seen).toEqual({ perKind: { generic: 2 }, messages: ['early', 'late'] });
  });

  it('closes a quiet minute on its timer', async () => {
    const db = openStore(':memory:');
    const { minutes, clock, store } = daemon(db);
    await minutes.start();
    store(event(T0 + 5_000, 'alone'));
    await clock.advance(110_000);
    expect(rows(db)).toEqual([]);
    await clock.advance(30_000);
    expect(rows(db)).toEqual([{ target: 'db1', minuteMs: T0 }]);
  });

  it('after a kill, a start folds the stored events no row holds, once each', async () => {
    const db = openStore(':memory:');
    const first = daemon(db);
    await first.minutes.start();
    first.store(event(T0 + 1_000, 'a'), event(T0 + 61_000, 'b'));
    first.store(event(T0 + 190_000, 'c'));
    // Minute 0 is written; minutes 1 and 3 were open when the process died (no stop).
    expect(rows(db)).toHaveLength(1);
    const second = daemon(db);
    await second.minutes.start();
    expect(second.minutes.stats.eventsRefolded).toBe(2);
    second.store(event(T0 + 65_000, 'b2'));
    await second.minutes.stop();
    expect(stored(db).sections.seen).toEqual({ perKind: { generic: 4 }, messages: ['a', 'b', 'b2', 'c'] });
    // And once more: nothing is folded twice.
    const third = daemon(db);
    await third.minutes.start();
    await third.minutes.stop();
    expect(third.minutes.stats.eventsRefolded).toBe(0);
    expect(stored(db).sections.seen.messages).toEqual(['a', 'b', 'b2', 'c']);
  });

  it('keeps the minutes of a failed write and writes them when the store takes writes again', async () => {
    const db = openStore(':memory:');
    const { minutes, clock, store } = daemon(db);
    await minutes.start();
    db.exec('CREATE TRIGGER full BEFORE INSERT ON report_minutes BEGIN SELECT RAISE(FAIL, \'database or disk is full\'); END');
    store(event(T0 + 1_000, 'a'), event(T0 + 200_000, 'b'));
    expect(minutes.stats.writeFailures).toBe(1);
    db.exec('DROP TRIGGER full');
    await clock.advance(10_000);
    expect(rows(db)).toEqual([{ target: 'db1', minuteMs: T0 }]);
    await minutes.stop();
    expect(stored(db).sections.seen.messages).toEqual(['a', 'b']);
  });

  it('whatever the batches, the late events and the targets, the stored minutes merge to the fold of every event in time order', async () => {
    const eventArb = fc.record({ offsetMs: fc.integer({ min: 0, max: 15 * 60_000 }), target: fc.constantFrom('a', 'b'), checkpoint: fc.boolean() });
    await fc.assert(fc.asyncProperty(fc.array(eventArb, { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1 }), async (specs, cuts) => {
      const events = specs.map((s, i) => event(T0 + s.offsetMs, `${s.checkpoint ? 'checkpoint' : 'statement'} ${i}`, s.target));
      const db = openStore(':memory:');
      const { minutes, store } = daemon(db);
      await minutes.start();
      for (let at = 0, cut = 0; at < events.length; cut++) {
        const size = cuts[cut % cuts.length]!;
        store(...events.slice(at, at + size));
        at += size;
      }
      await minutes.stop();
      const expected = SEEN.empty();
      const minuteOf = (e: AnyLogEvent) => Math.floor(e.tsMs / 60_000);
      // Time order by minute, then target, then arrival: the order the reader merges rows in.
      const ordered = events.map((e, i) => ({ e, i })).sort((x, y) => minuteOf(x.e) - minuteOf(y.e) || x.e.target.localeCompare(y.e.target) || x.i - y.i);
      for (const { e } of ordered) SEEN.add(expected, e, DEFAULT_REPORT_LIMITS);
      expect(stored(db).sections.seen).toEqual(expected);
      db.close();
    }), { numRuns: 60 });
  });

  it('retention deletes the minutes older than the events it keeps', async () => {
    const db = openStore(':memory:');
    const { minutes, store } = daemon(db);
    await minutes.start();
    store(event(T0 + 1_000, 'old'), event(T0 + 3 * 86_400_000, 'new'));
    await minutes.stop();
    const result = applyRetention(db, { maxAgeMs: 86_400_000, maxSizeBytes: 1e12 }, T0 + 3 * 86_400_000 + 60_000);
    expect(result.reportMinutesDeleted).toBe(1);
    expect(stored(db).sections.seen.messages).toEqual(['new']);
  });
});
