import { describe, expect, it } from 'vitest';
import type { AnyLogEvent, EventDetailsByKind, EventKind, LogLevel } from '../domain/index.js';
import { fixtureEvents } from '../../test/helpers/report-section.js';
import { AnalyzeSummaryBuilder } from './analyze-summary.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);

/** An event with only the details fields a case needs (the rest are not read by the summary). */
function ev<K extends EventKind>(kind: K, details: Partial<EventDetailsByKind[K]>, at: { s?: number; pid?: number; level?: LogLevel; sqlstate?: string } = {}): AnyLogEvent {
  return {
    kind, target: 'offline', tsMs: T0 + (at.s ?? 0) * 1000, pid: at.pid ?? 100, database: 'shop', user: 'app',
    level: at.level ?? 'LOG', sqlstate: at.sqlstate ?? null, message: kind, details: details as EventDetailsByKind[K],
    source: { file: 'test.log', offset: 0, line: null },
  } as AnyLogEvent;
}

const vacuum = (table: string, elapsed: number | null, dead: number | null, extra: Partial<EventDetailsByKind['autovacuum']> = {}, s = 0) =>
  ev('autovacuum', {
    database: 'shop', schema: 'public', table, aggressive: false, wraparound: false, elapsed_s: elapsed,
    tuples_dead_not_removable: dead, removable_cutoff_age_xids: null, tuples_removed: 10, ...extra,
  }, { s });

/** A deadlock whose DETAIL listed no process (the summary's text cases need none). */
const NO_CYCLE: Partial<EventDetailsByKind['deadlock']> = { pid: 100, processes: [], statement: null, context: null };

function summarize(events: AnyLogEvent[], limits = {}) {
  const builder = new AnalyzeSummaryBuilder(limits);
  for (const event of events) builder.add(event);
  return builder.result();
}

describe('AnalyzeSummaryBuilder: autovacuum per table', () => {
  it.each([
    ['one run', [vacuum('orders', 2.5, 300)],
      [{ table: 'shop.public.orders', runs: 1, total_elapsed_s: 2.5, max_elapsed_s: 2.5, max_dead_not_removable: 300 }]],
    ['runs add up; maxima are maxima', [vacuum('orders', 2, 5), vacuum('orders', 3, 900), vacuum('orders', 1, 7)],
      [{ table: 'shop.public.orders', runs: 3, total_elapsed_s: 6, max_elapsed_s: 3, max_dead_not_removable: 900 }]],
    ['a figure PostgreSQL did not print stays null, not 0', [vacuum('orders', null, null)],
      [{ table: 'shop.public.orders', runs: 1, total_elapsed_s: 0, max_elapsed_s: null, max_dead_not_removable: null }]],
    ['tables ranked by total elapsed', [vacuum('small', 1, 0), vacuum('big', 10, 0), vacuum('small', 1, 0)],
      [{ table: 'shop.public.big', runs: 1 }, { table: 'shop.public.small', runs: 2 }]],
  ])('%s', (_title, events, expected) => {
    const summary = summarize(events);
    expect(summary.autovacuum.tables).toMatchObject(expected);
    expect(summary.autovacuum.runs).toBe(events.length);
    expect(summary.events_by_kind.autovacuum).toBe(events.length);
  });

  it('counts aggressive and wraparound runs and the oldest cutoff', () => {
    const summary = summarize([
      vacuum('t', 1, 0, { aggressive: true, removable_cutoff_age_xids: 50 }),
      vacuum('t', 1, 0, { aggressive: true, wraparound: true, removable_cutoff_age_xids: 7000 }),
    ]);
    expect(summary.autovacuum.tables[0]).toMatchObject({ aggressive_runs: 2, wraparound_runs: 1, max_removable_cutoff_age_xids: 7000, tuples_removed: 20 });
  });

  it('tells apart tables of one name in other schemas or databases', () => {
    const summary = summarize([
      vacuum('orders', 1, 0), vacuum('orders', 2, 0, { schema: 'archive' }), vacuum('orders', 4, 0, { database: 'shop2' }), vacuum('orders', 8, 0),
    ]);
    expect(summary.autovacuum.tables).toMatchObject([
      { table: 'shop.public.orders', runs: 2, total_elapsed_s: 9 },
      { table: 'shop2.public.orders', runs: 1, total_elapsed_s: 4 },
      { table: 'shop.archive.orders', runs: 1, total_elapsed_s: 2 },
    ]);
    expect(summary.autovacuum.tables_total).toBe(3);
  });

  it('caps distinct tables and counts the overflow instead of growing', () => {
    const events = Array.from({ length: 25 }, (_, i) => vacuum(`t${i}`, 1, 0));
    const summary = summarize(events, { maxKeys: 10, topN: 5 });
    expect(summary.autovacuum).toMatchObject({ runs: 25, tables_total: 10, other_tables_runs: 15 });
    expect(summary.autovacuum.tables).toHaveLength(5);
  });
});

describe('AnalyzeSummaryBuilder: conflicts, locks, errors', () => {
  it('counts recovery conflicts by reason', () => {
    const summary = summarize([
      ev('recovery_conflict', { reason: 'snapshot', fatal: false }),
      ev('recovery_conflict', { reason: 'snapshot', fatal: false }),
      ev('recovery_conflict', { reason: 'lock', fatal: true }),
      ev('recovery_conflict', { reason: null, fatal: false }),
    ]);
    expect(summary.recovery_conflicts).toEqual({
      total: 4, fatal: 1,
      by_reason: [{ key: 'snapshot', count: 2 }, { key: '(unknown)', count: 1 }, { key: 'lock', count: 1 }],
    });
  });

  const lockObject = (description: string) => ({ description });
  it.each([
    ['PG 19 names the lock in the timeout', [
      ev('lock_timeout', { lock_object: lockObject('relation 16402 of database 16384') as never }, { pid: 7 }),
    ], 'relation 16402 of database 16384'],
    ['a lock the daemon named reads by name, OIDs beside', [
      ev('lock_timeout', { lock_object: { ...lockObject('relation 16402 of database 16384'), database_name: 'shop', relation_name: 'public.orders' } as never }, { pid: 7 }),
    ], 'shop.public.orders (relation 16402 of database 16384)'],
    ['before 19 the lock the pid was logged waiting for is borrowed', [
      ev('lock_wait', { phase: 'waiting', waiting_pid: 7, wait_ms: 1000, lock_object: lockObject('relation 1 of database 2') as never }, { pid: 7 }),
      ev('lock_timeout', { lock_object: null }, { pid: 7, s: 2 }),
    ], 'relation 1 of database 2'],
    ['a wait that was acquired is not borrowed', [
      ev('lock_wait', { phase: 'waiting', waiting_pid: 7, wait_ms: 1000, lock_object: lockObject('relation 1 of database 2') as never }, { pid: 7 }),
      ev('lock_wait', { phase: 'acquired', waiting_pid: 7, wait_ms: 1500, lock_object: lockObject('relation 1 of database 2') as never }, { pid: 7, s: 1 }),
      ev('lock_timeout', { lock_object: null }, { pid: 7, s: 60 }),
    ], '(not logged: PostgreSQL < 19 names no lock in a lock timeout)'],
    ['another pid\'s wait is not borrowed', [
      ev('lock_wait', { phase: 'waiting', waiting_pid: 8, wait_ms: 1000, lock_object: lockObject('relation 1 of database 2') as never }, { pid: 8 }),
      ev('lock_timeout', { lock_object: null }, { pid: 7, s: 2 }),
    ], '(not logged: PostgreSQL < 19 names no lock in a lock timeout)'],
    ['a wait older than ten minutes is not borrowed', [
      ev('lock_wait', { phase: 'waiting', waiting_pid: 7, wait_ms: 1000, lock_object: lockObject('relation 1 of database 2') as never }, { pid: 7 }),
      ev('lock_timeout', { lock_object: null }, { pid: 7, s: 601 }),
    ], '(not logged: PostgreSQL < 19 names no lock in a lock timeout)'],
  ])('lock timeouts by relation: %s', (_title, events, relation) => {
    expect(summarize(events).lock_timeouts.by_relation).toEqual([{ key: relation, count: 1 }]);
  });

  it('counts errors by SQLSTATE and events by level', () => {
    const summary = summarize([
      ev('deadlock', NO_CYCLE, { level: 'ERROR', sqlstate: '40P01' }),
      ev('generic', { classified: false }, { level: 'ERROR', sqlstate: '23505' }),
      ev('generic', { classified: false }, { level: 'ERROR', sqlstate: '23505' }),
      ev('generic', { classified: false }, { level: 'LOG' }),
    ]);
    expect(summary.errors_by_sqlstate).toEqual([{ key: '23505', count: 2 }, { key: '40P01', count: 1 }]);
    expect(summary.events_by_level).toEqual({ ERROR: 3, LOG: 1 });
    expect(summary.deadlocks.count).toBe(1);
  });

  it('lists levels and kinds in the order they are first seen, LOG and generic included', () => {
    const events = [
      ev('deadlock', NO_CYCLE, { level: 'ERROR' }),
      ev('generic', { classified: false }, { level: 'LOG' }),
      ev('generic', { classified: false }, { level: 'WARNING' }),
      ev('generic', { classified: false }, { level: 'LOG' }),
    ];
    const summary = summarize(events);
    expect(Object.entries(summary.events_by_level)).toEqual([['ERROR', 1], ['LOG', 2], ['WARNING', 1]]);
    expect(summary.events_by_kind).toMatchObject({ deadlock: 1, generic: 3 });
    expect(Object.keys(summarize(events.slice(1)).events_by_level)).toEqual(['LOG', 'WARNING']);
    expect(summarize([events[0]!]).events_by_level).toEqual({ ERROR: 1 });
  });

  it('reports the ranked remainder as (other)', () => {
    const events = ['a', 'a', 'b', 'c', 'd'].map((reason) => ev('recovery_conflict', { reason: reason as never, fatal: false }));
    expect(summarize(events, { topN: 2 }).recovery_conflicts.by_reason).toEqual([
      { key: 'a', count: 2 }, { key: 'b', count: 1 }, { key: '(other)', count: 2 },
    ]);
  });
});

describe('AnalyzeSummaryBuilder: busiest minutes', () => {
  const at = (minute: number, n: number, kind: EventKind = 'generic') =>
    Array.from({ length: n }, (_, i) => ev(kind, { classified: false } as never, { s: minute * 60 + (i % 60) }));

  it('ranks minutes by events, with notable and error counts', () => {
    const summary = summarize([...at(0, 3), ...at(1, 5), ...at(1, 2, 'server_crash'), ...at(2, 1)], { topN: 2 });
    expect(summary.busiest_minutes).toEqual([
      { minute: '2026-10-14T03:01:00.000Z', events: 7, notable: 2, errors: 0 },
      { minute: '2026-10-14T03:00:00.000Z', events: 3, notable: 0, errors: 0 },
    ]);
  });

  it('gives the same answer when minutes leave the open window, and merges a late event', () => {
    const events = [...at(0, 4), ...at(1, 1), ...at(30, 2), ...at(61, 3), ...at(0, 1), ...at(90, 1)];
    const windowed = summarize(events, { topN: 3, openMinutes: 2 });
    const unbounded = summarize(events, { topN: 3, openMinutes: 1_000_000 });
    expect(windowed.busiest_minutes).toEqual(unbounded.busiest_minutes);
    expect(windowed.busiest_minutes[0]).toEqual({ minute: '2026-10-14T03:00:00.000Z', events: 5, notable: 0, errors: 0 });
  });
});

describe('AnalyzeSummaryBuilder: others', () => {
  it('summarises checkpoints, temp files, crashes and the time span', () => {
    const summary = summarize([
      ev('checkpoint', { phase: 'starting', total_s: null }, { s: 5 }),
      ev('checkpoint', { phase: 'complete', total_s: 2.5 }, { s: 7 }),
      ev('checkpoint', { phase: 'complete', total_s: 30.1 }, { s: 1 }),
      ev('checkpoint', { phase: 'too_frequent', total_s: null }, { s: 9 }),
      ev('temp_file', { size_bytes: 1000 }), ev('temp_file', { size_bytes: 5000 }),
      ev('server_crash', {}),
    ]);
    expect(summary.checkpoints).toEqual({ completed: 2, max_total_s: 30.1, too_frequent: 1 });
    expect(summary.temp_files).toEqual({ count: 2, total_bytes: 6000, max_bytes: 5000 });
    expect(summary.server_crashes).toBe(1);
    expect(summary.first_ts).toBe('2026-10-14T03:00:00.000Z');
    expect(summary.last_ts).toBe('2026-10-14T03:00:09.000Z');
    expect(summary.events).toBe(7);
  });

  it('is empty but well formed with no events', () => {
    const summary = summarize([]);
    expect(summary).toMatchObject({ events: 0, first_ts: null, busiest_minutes: [], autovacuum: { runs: 0, tables: [] } });
    expect(summary.events_by_kind.generic).toBe(0);
  });
});

describe('AnalyzeSummaryBuilder on real logs: what the lines of a story add up to', () => {
  it('keeps a deadlock with its whole cycle, not a bare count', async () => {
    const { deadlocks } = summarize(await fixtureEvents('pg18-stderr-deadlock'));
    expect(deadlocks.count).toBe(1);
    expect(deadlocks.cycles).toEqual([expect.objectContaining({
      pid: 25327, relations: ['dl_accounts'],
      processes: [
        expect.objectContaining({ pid: 25327, lock: 'transaction 785', blocked_by_pid: 25321, statement: 'UPDATE dl_accounts SET balance = balance + 10 WHERE id = 1' }),
        expect.objectContaining({ pid: 25321, lock: 'transaction 786', blocked_by_pid: 25327, statement: 'UPDATE dl_accounts SET balance = balance + 10 WHERE id = 2' }),
      ],
    })]);
  });

  it('counts a checkpoint once, though it logs two lines', async () => {
    const summary = summarize(await fixtureEvents('pg18-stderr-checkpoint-requested'));
    expect(summary.events_by_kind.checkpoint).toBe(2);
    expect(summary.checkpoints.completed).toBe(1);
  });

  it('tells a normal start from a restart after a crash', async () => {
    expect(summarize(await fixtureEvents('pg15-stderr-multixact-members-run-short')).server_starts).toMatchObject({ after_crash: 0, normal: 1, clean_shutdowns: 1 });
    expect(summarize(await fixtureEvents('pg18-stderr-backend-killed-crash-restart')).server_starts).toMatchObject({ after_crash: 1, normal: 0 });
  });
});
