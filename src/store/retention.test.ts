import { describe, expect, it } from 'vitest';
import { openStore } from './open-store.js';
import { applyRetention } from './retention.js';

const DAY_MS = 86_400_000;
const NOW_MS = Date.UTC(2026, 10, 30);

function storeWithDays(days: number, rowsPerDay: number) {
  const db = openStore(':memory:');
  db.prepare("INSERT INTO series (id, target, name, labels) VALUES (1, 't', 'x', '[]')").run();
  const event = db.prepare(`INSERT INTO events (target, ts_ms, kind, level, message, details, source_file, source_offset)
    VALUES ('t', ?, 'generic', 'LOG', ?, '{}', 'f', 0)`);
  const sample = db.prepare('INSERT INTO samples (series_id, ts_ms, value) VALUES (1, ?, 1)');
  db.transaction(() => {
    for (let d = 0; d < days; d++) {
      for (let i = 0; i < rowsPerDay; i++) {
        const ts = NOW_MS - d * DAY_MS + i * 1000;
        event.run(ts, 'x'.repeat(200));
        sample.run(ts);
      }
    }
  })();
  return db;
}

const count = (db: ReturnType<typeof openStore>, table: string) =>
  (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('applyRetention', () => {
  it('deletes events and samples past the age limit and keeps the rest', () => {
    const db = storeWithDays(10, 10);
    const result = applyRetention(db, { maxAgeMs: 3 * DAY_MS, maxSizeBytes: 1e12 }, NOW_MS);
    expect(result).toEqual({ eventsDeleted: 60, samplesDeleted: 60 });
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
});
