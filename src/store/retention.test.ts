import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { openStore, type Db } from './open-store.js';
import { applyRetention, RetentionJob, usedBytes } from './retention.js';
import { StoreWriter } from './store-writer.js';

const DAY_MS = 86_400_000;
const NOW_MS = Date.UTC(2026, 10, 30);

/** A store with one series seen now, so samples can be added. */
function seededStore(file = ':memory:'): Db {
  const db = openStore(file);
  db.prepare("INSERT INTO series (id, target, name, labels, seen_ms) VALUES (1, 't', 'x', '[]', ?)").run(NOW_MS);
  return db;
}

/** One event and one sample at each timestamp. */
function insertRows(db: Db, timestampsMs: number[]): void {
  const event = db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
    VALUES ('t', ?, 'generic', 'LOG', ?, '{}', 'f', 0)`);
  const sample = db.prepare('INSERT INTO samples (series_id, ts_ms, value) VALUES (1, ?, 1)');
  db.transaction(() => {
    for (const ts of timestampsMs) {
      event.run(ts, 'x'.repeat(200));
      sample.run(ts);
    }
  })();
}

function storeWithDays(days: number, rowsPerDay: number): Db {
  const db = seededStore();
  const timestampsMs: number[] = [];
  for (let d = 0; d < days; d++) {
    for (let i = 0; i < rowsPerDay; i++) timestampsMs.push(NOW_MS - d * DAY_MS + i * 1000);
  }
  // In time order, as a log is written: the newest event has the highest id.
  insertRows(db, timestampsMs.sort((a, b) => a - b));
  return db;
}

const count = (db: Db, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('applyRetention', () => {
  it('keeps the newest event even when it is past the age limit, so new events never reuse an id forwarding has passed', () => {
    const db = storeWithDays(10, 10);
    const newestId = db.prepare('SELECT max(id) FROM events').pluck().get() as number;
    applyRetention(db, { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12 }, NOW_MS + 30 * DAY_MS);
    expect(db.prepare('SELECT id FROM events').pluck().all()).toEqual([newestId]);
    const next = db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
      VALUES ('t', ?, 'generic', 'LOG', 'new', '{}', 'f', 0)`).run(NOW_MS + 30 * DAY_MS);
    expect(next.lastInsertRowid).toBe(newestId + 1);
    db.close();
  });

  it('deletes events and samples past the age limit and keeps the rest', () => {
    const db = storeWithDays(10, 10);
    const result = applyRetention(db, { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12 }, NOW_MS);
    expect(result).toEqual({ eventsDeleted: 60, samplesDeleted: 60, seriesRetired: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } });
    expect(count(db, 'events')).toBe(40);
    expect(count(db, 'samples')).toBe(40);
  });

  it('deletes the oldest data while the store is over its size budget', () => {
    const db = storeWithDays(10, 500);
    applyRetention(db, { maxAgeMs: 365 * DAY_MS, maxSizeBytes: 600_000 }, NOW_MS);
    const remaining = count(db, 'events');
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThan(5000);
    const oldest = (db.prepare('SELECT min(ts_ms) AS ts FROM events').get() as { ts: number }).ts;
    const newest = (db.prepare('SELECT max(ts_ms) AS ts FROM events').get() as { ts: number }).ts;
    expect(newest).toBe(NOW_MS + 499_000);
    expect(NOW_MS - oldest).toBeLessThan(9 * DAY_MS);
  });

  it('deletes only what it must from a store that filled its budget in hours: the oldest minutes, not the whole day', () => {
    const db = seededStore();
    // Two hours, one row a second, written up to now.
    const timestampsMs = Array.from({ length: 7_200 }, (_, i) => NOW_MS - 7_200_000 + i * 1000);
    insertRows(db, timestampsMs);
    const budget = Math.round(usedBytes(db) * 0.8);
    applyRetention(db, { maxAgeMs: 365 * DAY_MS, maxSizeBytes: budget }, NOW_MS);

    expect(usedBytes(db)).toBeLessThanOrEqual(budget);
    const remaining = count(db, 'events');
    // A fifth over budget: about a fifth goes, the oldest, and the newest row stays.
    expect(remaining).toBeGreaterThan(7_200 * 0.6);
    expect(remaining).toBeLessThan(7_200 * 0.8);
    expect(db.prepare('SELECT max(ts_ms) FROM events').pluck().get()).toBe(timestampsMs.at(-1));
    expect(db.prepare('SELECT min(ts_ms) FROM events').pluck().get()).toBe(timestampsMs[7_200 - remaining]);
  });
});

describe('applyRetention retiring series', () => {
  const HOLDER = 'pg_xmin_horizon_holder_age_xids';
  const holder = (pid: number, tsMs: number): Sample =>
    ({ target: 't', name: HOLDER, labels: { kind: 'backend', pid: String(pid), query: `SELECT ${tsMs}` }, tsMs, value: 1 });
  const seriesPids = (db: Db) =>
    (db.prepare('SELECT labels FROM series ORDER BY id').pluck().all() as string[]).map((l) => new Map(JSON.parse(l) as Array<[string, string]>).get('pid'));

  it('deletes the series rows left without samples, keeps the others, and the writer goes on writing', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(NOW_MS), silentLogger());
    // pid 100: a session of 20 days ago; pid 200: one of 20 days ago that runs still.
    writer.enqueue({ samples: [holder(100, NOW_MS - 20 * DAY_MS), holder(100, NOW_MS - 19 * DAY_MS), holder(200, NOW_MS - 20 * DAY_MS)] });
    writer.enqueue({ samples: [holder(200, NOW_MS - DAY_MS)] });
    expect(writer.flush()).toBe(true);
    expect(seriesPids(db)).toEqual(['100', '200']);

    const result = applyRetention(db, { maxAgeMs: 14 * DAY_MS, maxSizeBytes: 1e12 }, NOW_MS);
    expect(result).toEqual({ eventsDeleted: 0, samplesDeleted: 3, seriesRetired: 1, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } });
    expect(seriesPids(db)).toEqual(['200']);
    expect(db.prepare('SELECT ts_ms FROM samples').pluck().all()).toEqual([NOW_MS - DAY_MS]);

    // pid 100 again (PostgreSQL reuses pids): the writer had its series id cached, and must not
    // write samples of a deleted series (the foreign key would fail the whole batch).
    writer.enqueue({ samples: [holder(100, NOW_MS), holder(200, NOW_MS)] });
    expect(writer.flush()).toBe(true);
    expect(seriesPids(db)).toEqual(['200', '100']);
    expect(db.prepare('SELECT count(*) FROM samples').pluck().get()).toBe(3);
    db.close();
  });
});

describe('RetentionJob', () => {
  const MINUTE_MS = 60_000;
  const HOUR_MS = 60 * MINUTE_MS;
  const INTERVAL_MS = 10 * MINUTE_MS;
  const policy = { maxAgeMs: HOUR_MS, maxSizeBytes: 1e12 };
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-retention-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A real pino logger (as app.ts passes) whose JSON lines the test reads back. */
  function recordingLog() {
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info', base: null, timestamp: false }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    return { log, lines };
  }

  /** Timestamps still stored, checked to be the same in events and samples. */
  function storedMs(db: Db): number[] {
    const events = db.prepare('SELECT ts_ms FROM events ORDER BY ts_ms').pluck().all() as number[];
    expect(db.prepare('SELECT ts_ms FROM samples ORDER BY ts_ms').pluck().all()).toEqual(events);
    return events;
  }

  it('runs when started, then every intervalMs and not before, deleting what is older than maxAgeMs at that moment', async () => {
    const clock = new ManualClock(NOW_MS);
    const db = seededStore();
    const agesOutAt = (runMs: number) => runMs - HOUR_MS;
    insertRows(db, [NOW_MS - 2 * HOUR_MS, agesOutAt(NOW_MS + MINUTE_MS), agesOutAt(NOW_MS + INTERVAL_MS), agesOutAt(NOW_MS + 15 * MINUTE_MS), NOW_MS]);
    const { log, lines } = recordingLog();
    const job = new RetentionJob(db, policy, clock, log, INTERVAL_MS);

    await job.start();
    expect(storedMs(db)).toEqual([agesOutAt(NOW_MS + MINUTE_MS), agesOutAt(NOW_MS + INTERVAL_MS), agesOutAt(NOW_MS + 15 * MINUTE_MS), NOW_MS]);

    // Past its age for 9 minutes, but no run is due yet.
    await clock.advance(INTERVAL_MS - 1);
    expect(storedMs(db)).toHaveLength(4);

    await clock.advance(1);
    // A row exactly maxAgeMs old is not yet older than the policy.
    expect(storedMs(db)).toEqual([agesOutAt(NOW_MS + INTERVAL_MS), agesOutAt(NOW_MS + 15 * MINUTE_MS), NOW_MS]);

    await clock.advance(INTERVAL_MS);
    expect(storedMs(db)).toEqual([NOW_MS]);
    await job.stop();

    expect(lines).toEqual([
      { level: 30, eventsDeleted: 1, samplesDeleted: 1, seriesRetired: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 }, msg: 'retention removed old data' },
      { level: 30, eventsDeleted: 1, samplesDeleted: 1, seriesRetired: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 }, msg: 'retention removed old data' },
      { level: 30, eventsDeleted: 2, samplesDeleted: 2, seriesRetired: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 }, msg: 'retention removed old data' },
    ]);
    db.close();
  });

  it('runs no more after stop()', async () => {
    const clock = new ManualClock(NOW_MS);
    const db = seededStore();
    insertRows(db, [NOW_MS - HOUR_MS + MINUTE_MS]);
    const { log, lines } = recordingLog();
    const job = new RetentionJob(db, policy, clock, log, INTERVAL_MS);

    await job.start();
    await job.stop();
    await clock.advance(3 * INTERVAL_MS);

    expect(storedMs(db)).toEqual([NOW_MS - HOUR_MS + MINUTE_MS]);
    expect(lines).toEqual([]);
    db.close();
  });

  it('logs a run that fails with the store file and the error, and deletes at the next run', async () => {
    const clock = new ManualClock(NOW_MS);
    const file = join(dir, 'locked.db');
    const db = seededStore(file);
    // Fail at once rather than after the store's busy wait: the test is about what follows.
    db.pragma('busy_timeout = 0');
    insertRows(db, [NOW_MS - 2 * HOUR_MS, NOW_MS]);
    // Another process holding the write lock (an operator's sqlite3 shell, a second pgvigil).
    const other = openStore(file);
    other.exec('BEGIN IMMEDIATE');
    const { log, lines } = recordingLog();
    const job = new RetentionJob(db, policy, clock, log, INTERVAL_MS);

    await expect(job.start()).resolves.toBeUndefined();
    expect(lines).toEqual([{
      level: 50,
      file,
      err: expect.objectContaining({ type: 'SqliteError', code: 'SQLITE_BUSY', message: 'database is locked' }),
      msg: 'retention failed; will retry',
    }]);
    expect(storedMs(db)).toEqual([NOW_MS - 2 * HOUR_MS, NOW_MS]);

    other.exec('ROLLBACK');
    other.close();
    await clock.advance(INTERVAL_MS);
    expect(storedMs(db)).toEqual([NOW_MS]);
    expect(lines.slice(1)).toEqual([{ level: 30, eventsDeleted: 1, samplesDeleted: 1, seriesRetired: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 }, msg: 'retention removed old data' }]);
    // Counted for pgvigil_retention_failures_total / _deleted_rows_total.
    expect(job.stats).toEqual({ failures: 1, rowsDeleted: 2, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } });
    await job.stop();
    db.close();
  });

  it('keeps its timer on a closed store: every run logs the error, none throws', async () => {
    const clock = new ManualClock(NOW_MS);
    const db = seededStore();
    const { log, lines } = recordingLog();
    const job = new RetentionJob(db, policy, clock, log, INTERVAL_MS);
    await job.start();
    db.close();

    // ManualClock rethrows what a timer throws, so a run that threw would reject here.
    await expect(clock.advance(2 * INTERVAL_MS)).resolves.toBeUndefined();
    await job.stop();

    const failure = {
      level: 50,
      file: ':memory:',
      err: expect.objectContaining({ type: 'TypeError', message: 'The database connection is not open' }),
      msg: 'retention failed; will retry',
    };
    expect(lines).toEqual([failure, failure]);
    expect(job.stats.failures).toBe(2);
  });
});

describe('thinning old samples', () => {
  const MINUTE_MS = 60_000;
  const HOUR_MS = 60 * MINUTE_MS;
  const STEP_MS = 5 * MINUTE_MS;
  const thinning = { maxAgeMs: 14 * DAY_MS, maxSizeBytes: 1e12, fullResolutionMs: 48 * HOUR_MS, thinnedStepMs: STEP_MS };
  const dir = mkdtempSync(join(tmpdir(), 'pgvigil-thinning-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Writes a counter of `target`/`name` every 15 s over [fromMs, toMs) through the StoreWriter; value = seconds since fromMs. */
  function writeCounter(db: Db, clock: ManualClock, fromMs: number, toMs: number): void {
    const writer = new StoreWriter(db, clock, silentLogger());
    for (let ts = fromMs; ts < toMs; ts += 15_000) {
      writer.enqueue({ samples: [{ target: 't', name: 'pg_stat_user_tables_n_dead_tup', labels: { datname: 'shop', schemaname: 'public', relname: 'orders' }, tsMs: ts, value: (ts - fromMs) / 1000 }] });
    }
    expect(writer.flush()).toBe(true);
  }
  const samples = (db: Db) => db.prepare('SELECT ts_ms AS tsMs, value FROM samples ORDER BY ts_ms').all() as Array<{ tsMs: number; value: number }>;

  it('keeps the latest sample of each step past the full-resolution age and every sample within it, step after step as the clock moves', async () => {
    const clock = new ManualClock(NOW_MS);
    const db = openStore(join(dir, 'thin.db'));
    const startMs = NOW_MS - 50 * HOUR_MS;
    writeCounter(db, clock, startMs, NOW_MS);
    const job = new RetentionJob(db, thinning, clock, silentLogger(), 10 * MINUTE_MS);
    await job.start();

    const thinnedBefore = Math.floor((NOW_MS - 48 * HOUR_MS) / STEP_MS) * STEP_MS;
    const old = samples(db).filter((s) => s.tsMs < thinnedBefore);
    // Two hours at one per 5 minutes: each the step's last (its counter value at the step's end).
    expect(old).toHaveLength((thinnedBefore - startMs) / STEP_MS);
    for (const s of old) {
      expect(s.tsMs % STEP_MS).toBe(STEP_MS - 15_000);
      expect(s.value).toBe((s.tsMs - startMs) / 1000);
    }
    expect(samples(db).filter((s) => s.tsMs >= thinnedBefore)).toHaveLength((NOW_MS - thinnedBefore) / 15_000);

    // Ten minutes later: two more steps thinned, nothing thinned twice, the full-resolution part intact.
    writeCounter(db, clock, NOW_MS, NOW_MS + 10 * MINUTE_MS);
    const before = samples(db).length;
    await clock.advance(10 * MINUTE_MS);
    expect(before - samples(db).length).toBe(2 * (STEP_MS / 15_000 - 1));
    expect(samples(db).filter((s) => s.tsMs < thinnedBefore + 2 * STEP_MS).every((s) => s.tsMs % STEP_MS === STEP_MS - 15_000)).toBe(true);
    await job.stop();
    db.close();
  });

  it('thins per-table series only: server-wide series (lag, horizon, slots) keep every sample for reviews', () => {
    const db = openStore(':memory:');
    const clock = new ManualClock(NOW_MS);
    const writer = new StoreWriter(db, clock, silentLogger());
    for (let ts = NOW_MS - 3 * DAY_MS; ts < NOW_MS - 3 * DAY_MS + HOUR_MS; ts += 15_000) {
      writer.enqueue({ samples: [{ target: 't', name: 'pg_standby_replay_delay_seconds', labels: {}, tsMs: ts, value: 1 }] });
    }
    expect(writer.flush()).toBe(true);
    expect(applyRetention(db, thinning, NOW_MS)).toMatchObject({ samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } });
    expect(samples(db)).toHaveLength(240);
    db.close();
  });

  it('thins at most six hours of data per run, so a store never thinned before costs runs, not one long stall', () => {
    const db = openStore(':memory:');
    writeCounter(db, new ManualClock(NOW_MS), NOW_MS - 4 * DAY_MS, NOW_MS - 3 * DAY_MS);
    const mark = { thinnedBeforeMs: null };
    applyRetention(db, thinning, NOW_MS, mark);
    expect(mark.thinnedBeforeMs).toBe(NOW_MS - 4 * DAY_MS + 6 * HOUR_MS);
    expect(samples(db).filter((s) => s.tsMs >= mark.thinnedBeforeMs!)).toHaveLength(18 * 240);
    for (let run = 0; run < 3; run++) applyRetention(db, thinning, NOW_MS, mark);
    expect(samples(db)).toHaveLength(24 * 12);
    db.close();
  });

  it('keeps every sample when series_full_resolution_hours is null', () => {
    const db = openStore(':memory:');
    writeCounter(db, new ManualClock(NOW_MS), NOW_MS - 3 * DAY_MS, NOW_MS - 3 * DAY_MS + HOUR_MS);
    expect(applyRetention(db, { ...thinning, fullResolutionMs: null }, NOW_MS)).toMatchObject({ samplesDeleted: 0, samplesThinned: 0, reportMinutesDeleted: 0, outboxPruned: 0, unforwardedDeleted: { events: 0, samples: 0, report_minutes: 0 } });
    expect(samples(db)).toHaveLength(240);
    expect(applyRetention(db, thinning, NOW_MS)).toMatchObject({ samplesDeleted: 228, samplesThinned: 228 });
    db.close();
  });
});
