import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from './migrations.js';
import { openStore, StoreError } from './open-store.js';

const dir = mkdtempSync(join(tmpdir(), 'pgvigil-open-'));

function storeError(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error('expected a StoreError');
}

describe('openStore', () => {
  it('creates the file in WAL mode with every migration applied, and reopens it', () => {
    const file = join(dir, 'new', 'store.db');
    const db = openStore(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    db.close();
    openStore(file).close();
  });

  it('upgrades a store of schema 2: each series gets the time of its newest sample as seen_ms', () => {
    const file = join(dir, 'v2.db');
    const old = new Database(file);
    for (const migration of MIGRATIONS.slice(0, 2)) old.exec(migration);
    old.pragma('user_version = 2');
    old.exec(`INSERT INTO series (id, target, name, labels) VALUES (1, 't', 'a', '[]'), (2, 't', 'b', '[]'), (3, 't', 'c', '[]');
      INSERT INTO samples (series_id, ts_ms, value) VALUES (1, 10, 1), (1, 30, 1), (1, 20, 1), (2, 5, NULL)`);
    old.close();
    const db = openStore(file);
    expect(db.prepare('SELECT id, seen_ms AS seenMs, info FROM series ORDER BY id').all())
      .toEqual([{ id: 1, seenMs: 30, info: null }, { id: 2, seenMs: 5, info: null }, { id: 3, seenMs: null, info: null }]);
    db.close();
  });

  it('names the file and says what to do when it is not a store', () => {
    const file = join(dir, 'garbage.db');
    writeFileSync(file, 'this is not an SQLite database, it is a text file '.repeat(100));
    const err = storeError(() => openStore(file));
    expect(err.code).toBe('STORE_CORRUPT');
    expect(err.message).toContain(file);
    expect(err.message).toMatch(/Move it aside/);
  });

  it('names the file when it cannot be created', () => {
    const file = join(dir, 'garbage.db', 'inside-a-file.db');
    const err = storeError(() => openStore(file));
    expect(err.code).toBe('STORE_OPEN');
    expect(err.message).toContain(file);
  });
});
