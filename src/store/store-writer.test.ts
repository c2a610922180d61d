import { describe, expect, it } from 'vitest';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
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
    const log = { errors: 0, error() { this.errors++; }, info() {} };
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
});
