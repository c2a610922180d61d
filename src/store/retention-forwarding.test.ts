/**
 * Retention beside forwarding (#24 §5): age never deletes what the forwarder has not sent; the
 * size budget does, and says so. On a real store file whose cursors the forward queue moved.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { ForwardQueue } from '../forward/forward-queue.js';
import { openStore, type Db } from './open-store.js';
import { ReportMinutesTable } from './report-minutes.js';
import { applyRetention, RetentionJob, usedBytes } from './retention.js';

const DAY_MS = 86_400_000;
const NOW_MS = Date.UTC(2026, 10, 30);
const dir = mkdtempSync(join(tmpdir(), 'pgvigil-retention-forwarding-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A store file with an event and a sample every `everyMs` over `days` days up to now. */
function storeWithDays(days: number, everyMs: number): Db {
  const db = openStore(join(dir, `store-${++files}.db`));
  db.prepare("INSERT INTO series (id, target, name, labels, seen_ms) VALUES (1, 't', 'x', '[]', ?)").run(NOW_MS);
  const event = db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
    VALUES ('t', ?, 'generic', 'LOG', ?, '{}', 'f', 0)`);
  const sample = db.prepare('INSERT INTO samples (series_id, ts_ms, value) VALUES (1, ?, 1)');
  db.transaction(() => {
    for (let ts = NOW_MS - days * DAY_MS; ts < NOW_MS; ts += everyMs) {
      event.run(ts, 'x'.repeat(200));
      sample.run(ts);
    }
  })();
  return db;
}

/** Forwards one batch of `rows` per stream as the forwarder does (the central commit assumed done); returns the cursors. */
function forwardOneBatch(db: Db, rows: number): { eventId: number; samplesBeforeMs: number } {
  const queue = new ForwardQueue(db, { batchRows: rows, stepMs: 60_000, graceMs: 0 });
  queue.init(NOW_MS);
  const batch = queue.next(NOW_MS);
  queue.commit(batch, NOW_MS);
  return { eventId: batch.to.eventId, samplesBeforeMs: batch.to.samplesFromMs };
}

const reportRowIds = (db: Db): number[] => db.prepare('SELECT id FROM report_minutes ORDER BY id').pluck().all() as number[];
const ids = (db: Db): number[] => db.prepare('SELECT id FROM events ORDER BY id').pluck().all() as number[];
const sampleTimes = (db: Db): number[] => db.prepare('SELECT ts_ms FROM samples ORDER BY ts_ms').pluck().all() as number[];

describe('retention with forwarding configured', () => {
  it('keeps events and samples past the age limit until the forwarder has sent them', () => {
    const db = storeWithDays(10, 3_600_000);
    const sent = forwardOneBatch(db, 50);
    expect(sent.eventId).toBe(50);
    const cutoffMs = NOW_MS - 3 * DAY_MS;
    const before = { ids: ids(db), samples: sampleTimes(db) };

    const result = applyRetention(db, { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12, keepUnforwarded: true }, NOW_MS);

    // Sent and old: gone. Not sent: kept, old or not.
    expect(ids(db)).toEqual(before.ids.filter((id) => id > sent.eventId));
    expect(sampleTimes(db)).toEqual(before.samples.filter((ts) => ts >= Math.min(cutoffMs, sent.samplesBeforeMs)));
    expect(result.unforwardedDeleted).toEqual({ events: 0, samples: 0, report_minutes: 0 });

    // Once forwarding has caught up, the age limit applies to every row.
    for (let i = 0; i < 10; i++) forwardOneBatch(db, 1_000);
    applyRetention(db, { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12, keepUnforwarded: true }, NOW_MS);
    expect(sampleTimes(db)[0]).toBeGreaterThanOrEqual(cutoffMs);
    expect(db.prepare('SELECT count(*) FROM events WHERE ts_ms < ?').pluck().get(cutoffMs)).toBe(0);
    db.close();
  });

  it('keeps every row of a store whose forwarder has not started yet (no cursors)', () => {
    const db = storeWithDays(5, 3_600_000);
    const rows = ids(db).length;
    applyRetention(db, { maxAgeMs: DAY_MS, maxSizeBytes: 1e12, keepUnforwarded: true }, NOW_MS);
    expect(ids(db)).toHaveLength(rows);
    expect(sampleTimes(db)).toHaveLength(rows);
    db.close();
  });

  it('over the size budget deletes forwarded rows first, then unforwarded ones, and counts those', () => {
    const db = storeWithDays(10, 60_000);
    const sent = forwardOneBatch(db, 2_000);
    const budget = Math.round(usedBytes(db) * 0.5);
    const before = { ids: ids(db), samples: sampleTimes(db) };

    const result = applyRetention(db, { maxAgeMs: 365 * DAY_MS, maxSizeBytes: budget, keepUnforwarded: true }, NOW_MS);

    expect(usedBytes(db)).toBeLessThanOrEqual(budget);
    const kept = new Set(ids(db));
    const deletedUnsent = before.ids.filter((id) => id > sent.eventId && !kept.has(id));
    expect(before.ids.filter((id) => id <= sent.eventId && kept.has(id))).toEqual([]);
    expect(deletedUnsent.length).toBeGreaterThan(0);
    const keptSamples = new Set(sampleTimes(db));
    const deletedUnsentSamples = before.samples.filter((ts) => ts >= sent.samplesBeforeMs && !keptSamples.has(ts));
    expect(result.unforwardedDeleted).toEqual({ events: deletedUnsent.length, samples: deletedUnsentSamples.length, report_minutes: 0 });
    db.close();
  });

  it('RetentionJob counts the unforwarded rows it deleted and warns once per run that deleted any', async () => {
    const db = storeWithDays(10, 60_000);
    forwardOneBatch(db, 2_000);
    const lines: Array<Record<string, unknown>> = [];
    const log = pino({ level: 'info', base: null, timestamp: false }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const job = new RetentionJob(db, { maxAgeMs: 365 * DAY_MS, maxSizeBytes: Math.round(usedBytes(db) * 0.5), keepUnforwarded: true }, new ManualClock(NOW_MS), log);
    expect(job.stats.unforwardedDeleted).toEqual({ events: 0, samples: 0, report_minutes: 0 });

    job.runOnce();
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.events).toBe(job.stats.unforwardedDeleted.events);
    expect(job.stats.unforwardedDeleted.events).toBeGreaterThan(0);
    expect(job.stats.unforwardedDeleted.samples).toBeGreaterThan(0);

    // Within budget now: the next run deletes nothing unsent and does not warn again.
    job.runOnce();
    expect(lines.filter((l) => l.level === 40)).toHaveLength(1);
    db.close();
  });
});

describe('retention of the outbox', () => {
  it('deletes rejected notifications older than the age limit and keeps pending and recent ones', () => {
    const db = storeWithDays(1, DAY_MS);
    const insert = db.prepare(`INSERT INTO outbox (channel, dedup_key, payload, created_ms, next_attempt_ms, state)
      VALUES ('pagerduty', ?, '{}', ?, ?, ?)`);
    const old = NOW_MS - 20 * DAY_MS;
    insert.run('old-rejected', old, old, 'rejected');
    insert.run('old-pending', old, old, 'pending');
    insert.run('new-rejected', NOW_MS - DAY_MS, NOW_MS, 'rejected');

    const result = applyRetention(db, { maxAgeMs: 14 * DAY_MS, maxSizeBytes: 1e12 }, NOW_MS);

    expect(result.outboxPruned).toBe(1);
    expect(db.prepare('SELECT dedup_key FROM outbox ORDER BY id').pluck().all()).toEqual(['old-pending', 'new-rejected']);
    db.close();
  });

  it('keeps every row of a log report minute, and of the minutes after it, while one of its rows is not sent', () => {
    const db = storeWithDays(10, 3_600_000);
    const minutes = new ReportMinutesTable(db);
    const daysAgo = (days: number) => NOW_MS - days * DAY_MS;
    minutes.insert({ target: 't', minuteMs: daysAgo(9), states: '{}' });
    minutes.insert({ target: 't', minuteMs: daysAgo(8), states: '{}' });
    forwardOneBatch(db, 2);
    // A late row of the sent minute 9 days ago: sent alone, the minute would lose its first row centrally.
    minutes.insert({ target: 't', minuteMs: daysAgo(9), states: '{}' });
    minutes.insert({ target: 't', minuteMs: daysAgo(7), states: '{}' });
    const policy = { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12, keepUnforwarded: true };

    expect(applyRetention(db, policy, NOW_MS).reportMinutesDeleted).toBe(0);
    expect(reportRowIds(db)).toEqual([1, 2, 3, 4]);

    forwardOneBatch(db, 1_000);
    expect(applyRetention(db, policy, NOW_MS).reportMinutesDeleted).toBe(4);
    db.close();
  });

  it('over the size budget counts the log report rows it deleted before they were sent', () => {
    const db = storeWithDays(10, 60_000);
    const minutes = new ReportMinutesTable(db);
    for (let ts = NOW_MS - 10 * DAY_MS; ts < NOW_MS; ts += 3_600_000) minutes.insert({ target: 't', minuteMs: ts, states: '{}' });
    forwardOneBatch(db, 100);
    const before = reportRowIds(db);

    const result = applyRetention(db, { maxAgeMs: 365 * DAY_MS, maxSizeBytes: Math.round(usedBytes(db) * 0.5), keepUnforwarded: true }, NOW_MS);

    const kept = new Set(reportRowIds(db));
    const deletedUnsent = before.filter((id) => id > 100 && !kept.has(id));
    expect(deletedUnsent.length).toBeGreaterThan(0);
    expect(result.unforwardedDeleted.report_minutes).toBe(deletedUnsent.length);
    db.close();
  });
});
