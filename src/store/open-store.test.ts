import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { LogJudgedTable } from './log-judged.js';
import { MIGRATIONS } from './migrations.js';
import { openStore, StoreError } from './open-store.js';
import { ReportMinutesTable } from './report-minutes.js';

const dir = suiteTempDir('open');

/** A store file at schema `version` (the migrations before it applied) holding the rows `sql` inserts. */
function storeOfSchema(name: string, version: number, sql: string): string {
  const file = join(dir, name);
  const old = new Database(file);
  for (const migration of MIGRATIONS.slice(0, version)) old.exec(migration);
  old.pragma(`user_version = ${version}`);
  old.exec(sql);
  old.close();
  return file;
}

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

  it('creates the store and its WAL and shared-memory files readable by their owner only', () => {
    const file = join(dir, 'private', 'store.db');
    const db = openStore(file);
    db.prepare('CREATE TABLE probe (x)').run(); // a write, so the -wal and -shm files exist
    const modes = ['', '-wal', '-shm'].map((suffix) => (statSync(file + suffix).mode & 0o777).toString(8));
    db.close();
    expect(modes).toEqual(['600', '600', '600']);
  });

  it('upgrades a store of schema 2: each series gets the time of its newest sample as seen_ms', () => {
    const file = storeOfSchema('v2.db', 2, `INSERT INTO series (id, target, name, labels) VALUES (1, 't', 'a', '[]'), (2, 't', 'b', '[]'), (3, 't', 'c', '[]');
      INSERT INTO samples (series_id, ts_ms, value) VALUES (1, 10, 1), (1, 30, 1), (1, 20, 1), (2, 5, NULL)`);
    const db = openStore(file);
    expect(db.prepare('SELECT id, seen_ms AS seenMs, info FROM series ORDER BY id').all())
      .toEqual([{ id: 1, seenMs: 30, info: null }, { id: 2, seenMs: 5, info: null }, { id: 3, seenMs: null, info: null }]);
    db.close();
  });

  it('upgrades a store of schema 5 with no judged positions: its newest event per target is what a start counts as judged', () => {
    const file = storeOfSchema('v5.db', 5, `INSERT INTO events (id, target, ts_ms, kind, level, message, details, source_file, source_offset)
      VALUES (1, 'a', 10, 'generic', 'LOG', 'm', '{}', 'f', 0), (2, 'b', 20, 'generic', 'LOG', 'm', '{}', 'f', 1), (3, 'a', 15, 'generic', 'LOG', 'm', '{}', 'f', 2)`);
    const db = openStore(file);
    const table = new LogJudgedTable(db);
    expect([table.get('a'), table.newestEvent('a'), table.newestEvent('b'), table.newestEvent('c')])
      .toEqual([null, { eventId: 3, atMs: 15 }, { eventId: 2, atMs: 20 }, null]);
    db.close();
  });

  it('upgrades a store of schema 9 with events: the log report per minute starts empty (its history is not folded) and takes rows', () => {
    const file = storeOfSchema('v9.db', 9, `INSERT INTO events (id, target, ts_ms, kind, level, message, details, source_file, source_offset)
      VALUES (1, 'a', 10, 'generic', 'LOG', 'm', '{}', 'f', 0)`);
    const db = openStore(file);
    const table = new ReportMinutesTable(db);
    expect([...table.inWindow({ fromMs: 0, toMs: 120_000 })]).toEqual([]);
    table.insert({ target: 'a', minuteMs: 60_000, states: '{}' });
    expect([...table.inWindow({ fromMs: 0, toMs: 120_000 })]).toEqual([{ target: 'a', minuteMs: 60_000, states: '{}' }]);
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

  it('read-only: names the path it looked at and how to point at a store, and creates nothing', () => {
    const file = join(dir, 'absent', 'pgvigil.db');
    const err = storeError(() => openStore(file, { readonly: true }));
    expect(err.code).toBe('STORE_MISSING');
    expect(err.message).toBe(`${file}: no pgvigil store here. Point at the store that ` +
      '`pgvigil run` or `npm start` printed when it started, with --db <file> or PGVIGIL_DB.');
    expect(existsSync(join(dir, 'absent'))).toBe(false);
  });
});
