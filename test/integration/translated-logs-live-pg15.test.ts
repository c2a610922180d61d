/**
 * `pgvigil run` against a real PostgreSQL 15 whose lc_messages is German (issue #16): the target's
 * sources learn lc_messages and the major from the server at start, read the log with the
 * server's own catalog (Debian's /usr/share/locale) or the shipped one, and store English-
 * classified events (a checkpoint, a lock timeout) with language 'de' and the server's own text.
 * `pgvigil check` says in which language the log is read.
 */
import path from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runChecks } from '../../src/cli/check.js';
import { loadConfig } from '../../src/config/load-config.js';
import { systemClock } from '../../src/domain/clock.js';
import { TargetSources } from '../../src/sources/target-sources.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { freePort, waitUntil } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { describeWithTool } from '../helpers/tools.js';

const LOCALE = 'de_DE.UTF-8';

describeWithTool('pg15', 'a live PostgreSQL 15 logging in German', () => {
  let server: PgServer;
  const dir = suiteTempDir('lang-live');

  beforeAll(async () => {
    server = await startPrimary({ version: 15, name: 'lang-live', settings: { lc_messages: LOCALE, log_checkpoints: 'on' } });
    await server.query('CREATE TABLE lang_live (id int)');
  }, 120_000);
  afterAll(() => destroyAllServers(), 60_000);

  it('pgvigil check says the log is read in German', async () => {
    const config = loadConfig({ env: {}, flags: { name: 'default', dsn: server.dsn(), db: path.join(dir, 'check.db'), listen: `127.0.0.1:${await freePort()}` } });
    const result = (await runChecks(config)).find((r) => r.aspect === 'default: log language');
    expect(result).toEqual({ aspect: 'default: log language', state: 'ok', message: `lc_messages "${LOCALE}": the log is read in de with the PostgreSQL 15 message catalog` });
  });

  it('stores English-classified events read in German', async () => {
    const messages: Array<{ msg: string }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void messages.push(JSON.parse(line) as { msg: string }) });
    const config = loadConfig({ env: {}, flags: { dsn: server.dsn(), db: path.join(dir, 'run.db') } });
    const db = openStore(config.dbPath);
    const writer = new StoreWriter(db, systemClock, logger);
    const sources = new TargetSources(config.targets[0]!, { config, db, writer, clock: systemClock, log: logger });
    const holder = new pg.Client({ connectionString: server.dsn() });
    try {
      await sources.start();
      expect(messages.map((m) => m.msg)).toContain(`lc_messages "${LOCALE}": the log is read in de with the PostgreSQL 15 message catalog`);
      await server.query('CHECKPOINT');
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE lang_live');
      await expect(server.query("SET lock_timeout = '200ms'; LOCK TABLE lang_live")).rejects.toThrow();
      await holder.query('ROLLBACK');
      const stored = db.prepare<[], { kind: string; language: string | null; message: string }>(
        "SELECT kind, language, message FROM events WHERE kind IN ('checkpoint', 'lock_timeout') ORDER BY kind");
      await waitUntil(() => {
        writer.flush();
        return new Set(stored.all().map((row) => row.kind)).size === 2;
      }, 30_000, 'a checkpoint and a lock timeout in the store');
      const rows = stored.all();
      expect(rows.every((row) => row.language === 'de')).toBe(true);
      expect(rows.find((row) => row.kind === 'lock_timeout')?.message).toBe('storniere Anfrage wegen Zeitüberschreitung einer Sperre');
    } finally {
      await holder.end().catch(() => undefined);
      await sources.stop();
      await writer.stop();
      db.close();
    }
  }, 120_000);
});
