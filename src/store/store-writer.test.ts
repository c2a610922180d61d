import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { testTempDir } from '../../test/helpers/temp-dir.js';
import { openStore } from './open-store.js';
import { SEEN_STEP_MS } from './series-identity.js';
import { StoreWriter, type FlushResult } from './store-writer.js';

function event(i: number): AnyLogEvent {
  return {
    kind: 'generic', target: 't', tsMs: 1000 + i, pid: 42, database: 'db', user: 'u', level: 'LOG', sqlstate: null,
    message: `line ${i} ${'x'.repeat(100)}`, details: { classified: false }, source: { file: '/log', offset: i * 10, line: null },
  };
}

const count = (db: ReturnType<typeof openStore>, sql: string) => (db.prepare(sql).get() as { n: number }).n;

/** One poll run's samples: `n` series of one collector at time tsMs. */
function pollRun(tsMs: number, n = 10): { samples: Sample[]; snapshot: string } {
  return { samples: Array.from({ length: n }, (_, i) => ({ target: 't', name: 'pg_x', labels: { i: String(i) }, tsMs, value: tsMs })), snapshot: 't\u0000pg_x' };
}

/** A store whose every write fails, as on a full disk (however little the batch), until `free()`. */
function fullDisk(db: ReturnType<typeof openStore>): { free(): void } {
  db.pragma('query_only = ON');
  return { free: () => db.pragma('query_only = OFF') };
}

function countingLog() {
  return { errors: 0, warns: 0, infos: [] as object[], error() { this.errors++; }, warn() { this.warns++; }, info(obj: object) { this.infos.push(obj); } };
}

describe('StoreWriter', () => {
  it('commits events, samples and the tailer offset together and reports them with ids', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    const flushed: FlushResult[] = [];
    writer.onFlush((r) => flushed.push(r));
    writer.enqueue({
      events: [event(1), event(2)],
      samples: [{ target: 't', name: 'pg_up', labels: { b: '2', a: '1' }, tsMs: 5, value: 1 }, { target: 't', name: 'pg_up', labels: { a: '1', b: '2' }, tsMs: 6, value: null }],
      offsets: [{ target: 't', source: '/log', filePath: '/log/a', fileId: '1:2', offset: 20 }],
    });
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(0);
    expect(writer.flush()).toBe(true);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(2);
    expect(count(db, 'SELECT count(*) n FROM series')).toBe(1);
    expect(db.prepare('SELECT value FROM samples ORDER BY ts_ms').pluck().all()).toEqual([1, null]);
    expect(db.prepare('SELECT offset FROM tailer_offsets').pluck().get()).toBe(20);
    expect(flushed[0]?.events.map((e) => e.id)).toEqual([1, 2]);
  });

  it('keeps the batch when the disk is full, refuses more past its backlog cap, and commits once space returns', () => {
    const db = openStore(':memory:');
    const log = { errors: 0, error() { this.errors++; }, warn() {}, info() {} };
    const writer = new StoreWriter(db, new ManualClock(), log, { batchRows: 1_000_000, maxBacklogRows: 2000 });
    writer.flush();
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 2}`); // SQLITE_FULL after a few KB: a full disk.
    for (let i = 0; i < 3000; i++) writer.enqueue({ events: [event(i)] });
    expect(writer.flush()).toBe(false);
    expect(writer.flush()).toBe(false);
    expect(log.errors).toBe(1); // said once, not per retry
    expect(writer.stats.failing).toBe(true);
    expect(writer.accepting).toBe(false);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(0);
    db.pragma('max_page_count = 1073741823');
    expect(writer.flush()).toBe(true);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(3000);
    expect(writer.accepting).toBe(true);
  });

  it('keeps descriptive labels out of the series identity, as the latest info, and moves seen_ms in SEEN_STEP_MS steps', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    const name = 'pg_xmin_horizon_holder_age_xids';
    const holder = (tsMs: number, query: string, state = 'active'): Sample =>
      ({ target: 't', name, labels: { kind: 'backend', pid: '42', state, query }, tsMs, value: tsMs });
    const t0 = 1_000_000;
    writer.enqueue({ samples: [holder(t0, 'SELECT 1'), holder(t0 + 5_000, 'SELECT 2', 'idle in transaction')] });
    // A late sample of an earlier time: stored, but the newer description stays.
    writer.enqueue({ samples: [holder(t0 + 1_000, 'SELECT late')] });
    expect(writer.flush()).toBe(true);
    const row = () => db.prepare('SELECT labels, info, seen_ms AS seenMs FROM series').all();
    expect(row()).toEqual([{
      labels: '[["kind","backend"],["pid","42"]]', info: '[["query","SELECT 2"],["state","idle in transaction"]]', seenMs: t0,
    }]);
    writer.enqueue({ samples: [holder(t0 + SEEN_STEP_MS - 1, 'SELECT 3')] });
    writer.flush();
    expect(row()).toMatchObject([{ info: '[["query","SELECT 3"],["state","active"]]', seenMs: t0 }]);
    writer.enqueue({ samples: [holder(t0 + SEEN_STEP_MS, 'SELECT 3')] });
    writer.flush();
    expect(row()).toMatchObject([{ seenMs: t0 + SEEN_STEP_MS }]);
    expect(count(db, 'SELECT count(*) n FROM samples')).toBe(5);
    // Names without descriptive labels keep them all in the identity.
    writer.enqueue({ samples: [{ target: 't', name: 'pg_standby_startup_wait_event', labels: { wait_event: 'RecoveryPause', query: 'x' }, tsMs: t0, value: 1 }] });
    writer.flush();
    expect(db.prepare(`SELECT labels, info FROM series WHERE name = 'pg_standby_startup_wait_event'`).get())
      .toEqual({ labels: '[["query","x"],["wait_event","RecoveryPause"]]', info: null });
  });

  it('flushes on its interval and on stop', async () => {
    const db = openStore(':memory:');
    const clock = new ManualClock();
    const writer = new StoreWriter(db, clock, silentLogger(), { flushIntervalMs: 100 });
    await writer.start();
    writer.enqueue({ events: [event(1)] });
    await clock.advance(99);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(0);
    await clock.advance(1);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(1);
    writer.enqueue({ events: [event(2)] });
    await writer.stop();
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(2);
  });

  it('while commits fail, holds at most maxHeldSamples samples, drops the oldest poll runs first, never an event, counts and says it once a streak; recovery stores what was kept once', () => {
    const db = openStore(':memory:');
    const log = countingLog();
    const writer = new StoreWriter(db, new ManualClock(), log, { batchRows: 1_000_000, maxHeldSamples: 100 });
    const flushed: FlushResult[] = [];
    writer.onFlush((r) => flushed.push(r));
    writer.flush();
    const disk = fullDisk(db);
    // 30 runs of 10 samples, a tailer batch (events with their offset) after every third.
    for (let run = 0; run < 30; run++) {
      writer.enqueue(pollRun(run * 1000));
      if (run % 3 === 2) writer.enqueue({ events: [event(run)], offsets: [{ target: 't', source: '/log', filePath: '/log/a', fileId: '1:2', offset: run * 10 }] });
      if (run === 0) expect(writer.flush()).toBe(false);
    }
    expect(writer.stats).toMatchObject({ failing: true, droppedSamples: 200 });
    expect(writer.backlogRows).toBe(100 + 10 * 2);
    expect(writer.accepting).toBe(true); // samples do not stop the tailer
    expect(log.warns).toBe(1);

    disk.free();
    expect(writer.flush()).toBe(true);
    const storedTimes = db.prepare('SELECT DISTINCT ts_ms FROM samples ORDER BY ts_ms').pluck().all();
    expect(storedTimes).toEqual(Array.from({ length: 10 }, (_, i) => (20 + i) * 1000)); // the newest 10 runs
    expect(flushed.flatMap((r) => r.samples)).toHaveLength(100); // each kept sample committed once
    expect(db.prepare('SELECT source_offset FROM events ORDER BY id').pluck().all()).toEqual([2, 5, 8, 11, 14, 17, 20, 23, 26, 29].map((i) => i * 10));
    expect(db.prepare('SELECT offset FROM tailer_offsets').pluck().get()).toBe(290);
    expect(log.infos).toContainEqual(expect.objectContaining({ droppedSamples: 200 }));
    expect(writer.flush()).toBe(true);
    expect(count(db, 'SELECT count(*) n FROM samples')).toBe(100);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(10);

    // A new streak says it again; the counter goes on.
    const again = fullDisk(db);
    writer.enqueue(pollRun(100_000));
    expect(writer.flush()).toBe(false);
    for (let run = 101; run < 112; run++) writer.enqueue(pollRun(run * 1000));
    expect(log.warns).toBe(2);
    expect(writer.stats.droppedSamples).toBe(220);
    again.free();
    expect(writer.flush()).toBe(true);
  });

  it('drops empty poll runs too (each weighs one sample), and never the run just enqueued, however large', () => {
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, new ManualClock(), silentLogger(), { batchRows: 1_000_000, maxHeldSamples: 100 });
    writer.flush();
    const disk = fullDisk(db);
    writer.enqueue(pollRun(1000));
    expect(writer.flush()).toBe(false);
    for (let run = 2; run < 500; run++) writer.enqueue({ samples: [], snapshot: 't\u0000empty' });
    expect(writer.stats.droppedSamples).toBe(10);
    writer.enqueue(pollRun(9000, 150));
    expect(writer.backlogRows).toBe(150);
    disk.free();
    expect(writer.flush()).toBe(true);
    expect(count(db, 'SELECT count(*) n FROM samples')).toBe(150);
  });

  it('backs off while commits fail: over a minute of full disk a few attempts, not one every 250 ms, and commits soon after space returns', async () => {
    const db = openStore(':memory:');
    const clock = new ManualClock();
    const writer = new StoreWriter(db, clock, silentLogger(), { flushIntervalMs: 250, maxRetryDelayMs: 4_000 });
    let attempts = 0;
    const transaction = db.transaction.bind(db);
    db.transaction = ((fn: Parameters<typeof transaction>[0]) => { attempts++; return transaction(fn); }) as typeof db.transaction;
    await writer.start();
    const disk = fullDisk(db);
    writer.enqueue({ events: [event(1)] });
    await clock.advance(60_000);
    // 250, 500, 1000, 2000 ms, then every 4 s: 5 attempts in the first ~8 s, 13 more in the next 52 s.
    expect(attempts).toBeGreaterThanOrEqual(15);
    expect(attempts).toBeLessThanOrEqual(20);
    disk.free();
    await clock.advance(4_000);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(1);
    const afterRecovery = attempts;
    writer.enqueue({ events: [event(2)] });
    await clock.advance(250);
    expect(attempts).toBe(afterRecovery + 1); // back to every flush interval
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(2);
    await writer.stop();
  });

  it('does not hold the event loop for the busy timeout when another process holds the write lock', () => {
    const file = join(testTempDir('store-busy'), 'store.db');
    const db = openStore(file);
    const other = openStore(file);
    const writer = new StoreWriter(db, new ManualClock(), silentLogger());
    other.exec('BEGIN IMMEDIATE');
    writer.enqueue({ events: [event(1)] });
    const started = performance.now();
    expect(writer.flush()).toBe(false);
    // The connection's busy_timeout is 5 s; a flush that waited for it would take that long.
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    other.exec('COMMIT');
    expect(writer.flush()).toBe(true);
    expect(count(db, 'SELECT count(*) n FROM events')).toBe(1);
    other.close();
    db.close();
  });
});
