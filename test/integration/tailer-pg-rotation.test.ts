/**
 * The tailer on a real PostgreSQL log directory (logging_collector on), once per major the npm
 * packages bring (13, 14, 16, 17, 18; 15 and 19 tail in the daemon and live-scenario tests):
 * statements logged by the server are stored once each, in order, across pg_rotate_logfile() and a
 * restart of the tailer; a lock wait and an autovacuum run come out classified.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/clock.js';
import { silentLogger } from '../../src/lib/logger.js';
import { LogTailer, readSavedOffset } from '../../src/sources/log-tailer.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { startPrimary, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { tempDir, waitFor } from './tailer-rig.js';

const VERSIONS: PgVersion[] = [13, 14, 16, 17, 18];
const log = silentLogger();

describe.each(VERSIONS)('tailer on a real PostgreSQL %i log directory', (version) => {
  let server: PgServer;
  let db: Db;
  let writer: StoreWriter;
  let storeDir: string;
  const target = `pg${version}`;

  beforeAll(async () => {
    server = await startPrimary({
      version,
      name: 'tailer',
      settings: { log_min_duration_statement: 0, log_autovacuum_min_duration: 0, log_lock_waits: true, deadlock_timeout: '100ms', autovacuum_naptime: '1s' },
    });
    storeDir = tempDir('tailer-pg');
    db = openStore(path.join(storeDir, 'store.db'));
    writer = new StoreWriter(db, systemClock, log, { flushIntervalMs: 50 });
    await writer.start();
  });

  afterAll(async () => {
    await writer?.stop();
    db?.close();
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
    await server?.destroy();
  });

  function newTailer(): LogTailer {
    return new LogTailer({
      target, source: server.logDir, logFilename: 'postgresql-%Y-%m-%d_%H%M%S.log', format: 'auto', timezone: 'UTC',
      startAt: 'end', savedOffset: readSavedOffset(db, target, server.logDir), writer, clock: systemClock, log,
      pollIntervalMs: 100, idleFlushMs: 200,
    });
  }

  /** Markers stored so far, in store order. */
  function markers(): number[] {
    const messages = db.prepare(`SELECT message FROM events WHERE message LIKE '%marker-%' ORDER BY id`).pluck().all() as string[];
    return messages.map((m) => Number(/'marker-(\d+)'/.exec(m)?.[1]));
  }

  async function mark(from: number, to: number): Promise<void> {
    for (let i = from; i < to; i++) await server.query(`SELECT 'marker-${i}'`);
  }

    it('stores each logged statement once across pg_rotate_logfile() and a tailer restart', async () => {
      let tailer = newTailer();
      await tailer.start();
      await waitFor(() => tailer.stats().currentFile !== null, 'the tailer to open the current log file');
      await mark(0, 20);
      await waitFor(() => markers().length === 20, 'markers 0..19');

      // log_filename has one-second resolution: rotate once the second has changed.
      const firstFile = tailer.stats().currentFile;
      const second = Math.floor(Date.now() / 1000);
      await waitFor(() => Math.floor(Date.now() / 1000) > second, 'the next second');
      await server.query('SELECT pg_rotate_logfile()');
      await mark(20, 40);
      await waitFor(() => markers().length === 40, 'markers 20..39 after rotation');
      expect(tailer.stats().currentFile).not.toBe(firstFile);
      expect(tailer.stats().filesRotated).toBe(1);

      await tailer.stop();
      await mark(40, 60); // logged while pgvigil is down
      tailer = newTailer();
      await tailer.start();
      await mark(60, 70);
      await waitFor(() => markers().length === 70, 'markers 40..69 after the restart');
      await tailer.stop();
      expect(markers()).toEqual(Array.from({ length: 70 }, (_, i) => i));
    });

    it('classifies what the server logs: a lock wait and autovacuum runs', async () => {
      const tailer = newTailer();
      await tailer.start();
      await server.query('CREATE TABLE tailer_t (id int PRIMARY KEY, v text)');
      await server.query(`INSERT INTO tailer_t SELECT g, 'x' FROM generate_series(1, 2000) g`);
      await server.query('DELETE FROM tailer_t WHERE id % 2 = 0');
      const pg = await import('pg');
      const holder = new pg.default.Client({ connectionString: server.dsn() });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE tailer_t IN ACCESS EXCLUSIVE MODE');
        await expect(server.query(`SET lock_timeout = '300ms'; SELECT * FROM tailer_t`)).rejects.toThrow(/lock timeout/);
        await holder.query('COMMIT');
      } finally {
        await holder.end();
      }
      const kinds = (): string[] => db.prepare('SELECT DISTINCT kind FROM events').pluck().all() as string[];
      const vacuumedTables = (): string[] => (db.prepare(`SELECT details FROM events WHERE kind = 'autovacuum'`).pluck().all() as string[])
        .map((d) => (JSON.parse(d) as { table: string }).table);
      await waitFor(() => vacuumedTables().includes('tailer_t') && kinds().includes('lock_wait'), 'autovacuum of tailer_t and a lock_wait event', undefined, 30_000);
      await tailer.stop();
    });
});
