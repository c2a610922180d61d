import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../../domain/index.js';
import { silentLogger } from '../../lib/logger.js';
import { openStore, type Db } from '../../store/open-store.js';
import { ReportMinutesTable } from '../../store/report-minutes.js';
import { applyRetention } from '../../store/retention.js';
import { StoreWriter } from '../../store/store-writer.js';
import { foldByMinute, type AnySection } from './minute-folds.js';
import { queriesSection, type QueriesResult, type QueriesState } from './queries.js';
import { ReportMinutesCompactor } from './report-minutes-compactor.js';
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

/** The store as `pgvigil run` keeps it: each commit of a log carries the report rows of what it read. */
function daemon(db: Db, clock = new ManualClock(T0), sections: readonly AnySection[] = [SEEN]) {
  const writer = new StoreWriter(db, clock, silentLogger());
  const compactor = new ReportMinutesCompactor(db, clock, silentLogger(), { sections, intervalMs: 30_000 });
  const commit = (...events: AnyLogEvent[]) => {
    writer.enqueue({ events: [], reportMinutes: foldByMinute(events, sections, DEFAULT_REPORT_LIMITS) });
    return writer.flush();
  };
  return { writer, compactor, clock, commit };
}

function stored(db: Db, window = { fromMs: 0, toMs: Number.MAX_SAFE_INTEGER }) {
  const report = mergeStoredMinutes(new ReportMinutesTable(db).inWindow(window), [SEEN], DEFAULT_REPORT_LIMITS);
  return { ...report, sections: report.sections as { seen: SeenState } };
}

const rowsPerMinute = (db: Db) => db.prepare('SELECT (minute_ms - ?) / 60000 AS minute, count(*) AS n FROM report_minutes WHERE span_ms = 60000 GROUP BY minute_ms ORDER BY minute_ms').all(T0);

describe('the log report per minute in the store', () => {
  it('each commit adds a row per target and minute it read; a minute 2 minutes behind its target\'s newest rows is merged into one', async () => {
    const db = openStore(':memory:');
    const { compactor, commit } = daemon(db);
    await compactor.start();
    commit(event(T0 + 1_000, 'a'), event(T0 + 59_000, 'b'), event(T0 + 60_000, 'c'), event(T0 + 5_000, 'c', 'db2'));
    commit(event(T0 + 61_000, 'd'));
    commit(event(T0 + 62_000, 'e'), event(T0 + 179_000, 'f'));
    commit(event(T0 + 180_000, 'g'));
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 2 }, { minute: 1, n: 3 }, { minute: 2, n: 1 }, { minute: 3, n: 1 }]);
    compactor.runOnce();
    // db1's minute 0 closes (its rows reach minute 3); minute 1 stays open; db2 had one row already.
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 2 }, { minute: 1, n: 3 }, { minute: 2, n: 1 }, { minute: 3, n: 1 }]);
    commit(event(T0 + 240_000, 'h'));
    compactor.runOnce();
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 2 }, { minute: 1, n: 1 }, { minute: 2, n: 1 }, { minute: 3, n: 1 }, { minute: 4, n: 1 }]);
    expect(stored(db).sections.seen.messages).toEqual(['a', 'b', 'c', 'c', 'd', 'e', 'f', 'g', 'h']);
    expect(stored(db, { fromMs: T0 + 60_000, toMs: T0 + 60_000 }).sections.seen).toEqual({ perKind: { generic: 3 }, messages: ['c', 'd', 'e'] });
    await compactor.stop();
  });

  it('merges a quiet minute once the wall clock is 2 minutes past it, a late row of it again, and every minute at stop', async () => {
    const db = openStore(':memory:');
    const { compactor, clock, commit } = daemon(db);
    await compactor.start();
    commit(event(T0 + 1_000, 'a'));
    commit(event(T0 + 2_000, 'b'));
    await clock.advance(150_000);
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 2 }]);
    await clock.advance(30_000);
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 1 }]);
    commit(event(T0 + 3_000, 'late'));
    commit(event(T0 + 200_000, 'x'));
    commit(event(T0 + 201_000, 'y'));
    await clock.advance(30_000);
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 1 }, { minute: 3, n: 2 }]);
    await compactor.stop();
    expect(rowsPerMinute(db)).toEqual([{ minute: 0, n: 1 }, { minute: 3, n: 1 }]);
    expect(stored(db).sections.seen.messages).toEqual(['a', 'b', 'late', 'x', 'y']);
  });

  it('a closed hour gets an hour row that a whole-hour window reads instead of its minutes; a late minute makes it stale until it is written again', async () => {
    const db = openStore(':memory:');
    const { compactor, commit } = daemon(db);
    commit(event(T0 + 1_000, 'a'), event(T0 + 30 * 60_000, 'b'));
    commit(event(T0 + 63 * 60_000, 'c'));
    compactor.runOnce();
    const spans = () => db.prepare('SELECT span_ms / 60000 AS minutes, count(*) AS n FROM report_minutes GROUP BY span_ms ORDER BY span_ms').all();
    expect(spans()).toEqual([{ minutes: 1, n: 3 }, { minutes: 60, n: 1 }]);
    const hour = { fromMs: T0, toMs: T0 + 3_600_000 - 1 };
    expect(stored(db, hour)).toMatchObject({ minuteRows: 1, sections: { seen: { messages: ['a', 'b'] } } });
    expect(stored(db, { fromMs: T0 + 60_000, toMs: T0 + 3_600_000 - 1 })).toMatchObject({ minuteRows: 1, sections: { seen: { messages: ['b'] } } });
    commit(event(T0 + 10 * 60_000, 'late'));
    expect(stored(db, hour)).toMatchObject({ minuteRows: 3, sections: { seen: { messages: ['a', 'late', 'b'] } } });
    compactor.runOnce();
    expect(stored(db, hour)).toMatchObject({ minuteRows: 1, sections: { seen: { messages: ['a', 'late', 'b'] } } });
    expect(stored(db).sections.seen.messages).toEqual(['a', 'late', 'b', 'c']);
  });

  it('a commit that fails keeps its report rows with its events and offset, and they are stored once when it succeeds', async () => {
    const db = openStore(':memory:');
    const { writer, commit } = daemon(db);
    db.exec('CREATE TRIGGER full BEFORE INSERT ON report_minutes BEGIN SELECT RAISE(FAIL, \'database or disk is full\'); END');
    expect(commit(event(T0 + 1_000, 'a'))).toBe(false);
    db.exec('DROP TRIGGER full');
    expect(writer.flush()).toBe(true);
    expect(stored(db).sections.seen.messages).toEqual(['a']);
  });

  it('whatever the commits, the late events, the targets and when merges run, the stored minutes and hours give each target\'s events in time order', async () => {
    const eventArb = fc.record({ offsetMs: fc.integer({ min: 0, max: 15 * 60_000 }), target: fc.constantFrom('a', 'b'), checkpoint: fc.boolean() });
    await fc.assert(fc.asyncProperty(
      fc.array(eventArb, { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1 }), fc.array(fc.boolean(), { minLength: 1 }),
      async (specs, cuts, mergeAfter) => {
        const events = specs.map((s, i) => event(T0 + s.offsetMs, `${s.checkpoint ? 'checkpoint' : 'statement'} ${s.target}${i}`, s.target));
        const db = openStore(':memory:');
        const { compactor, commit } = daemon(db);
        for (let at = 0, cut = 0; at < events.length; cut++) {
          const size = cuts[cut % cuts.length]!;
          commit(...events.slice(at, at + size));
          if (mergeAfter[cut % mergeAfter.length]) compactor.runOnce();
          at += size;
        }
        const expected = SEEN.empty();
        const minuteOf = (e: AnyLogEvent) => Math.floor(e.tsMs / 60_000);
        // Each target's events by minute, then in the order read; targets interleave as hours and minutes fall.
        const ordered = events.map((e, i) => ({ e, i })).sort((x, y) => minuteOf(x.e) - minuteOf(y.e) || x.i - y.i);
        for (const { e } of ordered) SEEN.add(expected, e, DEFAULT_REPORT_LIMITS);
        const perTarget = (seen: SeenState) => ({ perKind: seen.perKind, a: seen.messages.filter((m) => m.includes(' a')), b: seen.messages.filter((m) => m.includes(' b')) });
        expect(perTarget(stored(db).sections.seen)).toEqual(perTarget(expected));
        await compactor.stop();
        expect(perTarget(stored(db).sections.seen)).toEqual(perTarget(expected));
        expect(db.prepare('SELECT count(*) FROM report_minutes WHERE span_ms = 3600000').pluck().get()).toBe(new Set(events.map((e) => e.target)).size);
        db.close();
      },
    ), { numRuns: 60 });
  });

  it('keeps the queries\' per-minute percentiles through split commits, merged minutes and the hour row; a row stored without them still reads', () => {
    const db = openStore(':memory:');
    const { compactor, commit } = daemon(db, new ManualClock(T0), [queriesSection]);
    // Four statements a minute for an hour, durations 1 to 100 ms, committed 7 at a time so that minutes span rows.
    const hour = Array.from({ length: 240 }, (_, i) => event(T0 + i * 15_000, `duration: ${((i * 37) % 100) + 1}.250 ms  statement: SELECT ${i % 3}`));
    for (let at = 0; at < hour.length; at += 7) commit(...hour.slice(at, at + 7));
    commit(event(T0 + 63 * 60_000, 'duration: 2.000 ms  statement: SELECT 1'));
    compactor.runOnce();
    const queriesOf = (window: { fromMs: number; toMs: number }) => {
      const report = mergeStoredMinutes(new ReportMinutesTable(db).inWindow(window), [queriesSection], DEFAULT_REPORT_LIMITS);
      return { minuteRows: report.minuteRows, queries: report.sections.queries as QueriesResult };
    };
    const fromHourRow = queriesOf({ fromMs: T0, toMs: T0 + 3_600_000 - 1 });
    const folded = queriesSection.empty();
    for (const e of hour) queriesSection.add(folded, e, DEFAULT_REPORT_LIMITS);
    expect(fromHourRow.minuteRows).toBe(1);
    expect(fromHourRow.queries.per_minute).toHaveLength(60);
    expect(fromHourRow.queries.per_minute.every((m) => typeof m.p95_ms === 'number' && typeof m.max_ms === 'number')).toBe(true);
    expect(fromHourRow.queries.per_minute).toEqual(queriesSection.result(folded, DEFAULT_REPORT_LIMITS).per_minute);

    // As schema 10's first pgvigil wrote it: the queries state without minute durations.
    const older = foldByMinute([event(T0 + 70 * 60_000, 'duration: 5.000 ms  statement: SELECT 1')], [queriesSection], DEFAULT_REPORT_LIMITS)[0]!;
    const states = JSON.parse(older.states) as { queries: QueriesState };
    delete states.queries.minute_durations;
    new ReportMinutesTable(db).insert({ ...older, states: JSON.stringify(states) });
    const all = queriesOf({ fromMs: T0, toMs: T0 + 71 * 60_000 });
    expect(all.queries.per_minute.map((m) => [m.minute, m.queries, m.p50_ms]).slice(-2)).toEqual([['2026-11-30T03:03:00.000Z', 1, 2], ['2026-11-30T03:10:00.000Z', 1, null]]);
    expect(all.queries.minutes_without_percentiles).toBe(1);
  });

  it('retention deletes the minutes older than the events it keeps', () => {
    const db = openStore(':memory:');
    const { commit } = daemon(db);
    commit(event(T0 + 1_000, 'old'), event(T0 + 3 * 86_400_000, 'new'));
    const result = applyRetention(db, { maxAgeMs: 86_400_000, maxSizeBytes: 1e12 }, T0 + 3 * 86_400_000 + 60_000);
    expect(result.reportMinutesDeleted).toBe(1);
    expect(stored(db).sections.seen.messages).toEqual(['new']);
  });
});
