/**
 * PG 19 REPACK (pg-messages.md §9, §13.2, §13.5): a REPACK (CONCURRENTLY) whose temporary slot
 * holds back vacuum of a busy table in another database, and one that loses everything at the
 * final swap because a reader holds its lock past lock_timeout.
 *
 * The long REPACK is made slow by an expression index whose function sleeps every 500th row,
 * only in sessions that set pgvigil.slow_key_ms: the index is built quickly at set-up and slowly
 * when REPACK rebuilds it (100000 rows: 200 sleeps of 50 ms, about 10 s).
 */
import { waitUntil } from '../pg-server.js';
import { autovacuumLogSettings, vacuumHeader } from './autovacuum.js';
import { completeReport } from './log-watcher.js';
import { PG19_ONLY, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

export const SLOW_KEY_FUNCTION = `
CREATE FUNCTION slow_key(i int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF i % 500 = 0 AND coalesce(current_setting('pgvigil.slow_key_ms', true), '') <> '' THEN
    PERFORM pg_sleep(current_setting('pgvigil.slow_key_ms')::int / 1000.0);
  END IF;
  RETURN i;
END $$`;

export const repackConcurrentlyHoldsBackVacuum: Scenario = {
  name: 'repack-concurrently-holds-back-vacuum',
  description:
    'REPACK (CONCURRENTLY) of a 100000-row table in database "shop" (slowed to about 10 s by a sleeping expression index) ' +
    'while every row of a table in database "other" is updated: that table\'s autovacuum reports dead tuples that are not yet ' +
    'removable, because REPACK\'s temporary logical slot (pg_repack_<pid>, plugin pgrepack) holds the horizon in every database.',
  versions: PG19_ONLY,
  logOf: 'primary',
  settings: (version) => ({ ...autovacuumLogSettings(version), log_statement: 'ddl' }),
  sessionSettings: { 'pgvigil.slow_key_ms': '50', max_parallel_maintenance_workers: 0 },
  async run({ primary, log }) {
    await primary.query('CREATE DATABASE shop');
    await primary.query('CREATE DATABASE other');
    await primary.query(SLOW_KEY_FUNCTION, [], 'shop');
    await primary.query('CREATE TABLE orders (id int PRIMARY KEY, customer int NOT NULL, note text NOT NULL)', [], 'shop');
    await primary.query('INSERT INTO orders SELECT g, g % 1000, md5(g::text) FROM generate_series(1, 100000) g', [], 'shop');
    await primary.query('CREATE INDEX orders_slow_key ON orders (slow_key(id))', [], 'shop');
    await primary.query('CREATE TABLE hot_counters (id int PRIMARY KEY, hits int NOT NULL)', [], 'other');
    await primary.query('INSERT INTO hot_counters SELECT g, 0 FROM generate_series(1, 1000) g', [], 'other');

    await withSessions(primary, { repacker: 'shop' }, async ({ repacker }) => {
      await repacker.query("SET pgvigil.slow_key_ms = '50'");
      await repacker.query('SET max_parallel_maintenance_workers = 0');
      const repack = repacker.query('REPACK (CONCURRENTLY) orders');
      await waitUntil(
        async () => (await primary.query("SELECT 1 FROM pg_replication_slots WHERE plugin = 'pgrepack' AND temporary")).length > 0,
        30_000,
        "REPACK's temporary pgrepack slot to appear",
      );
      await primary.query('UPDATE hot_counters SET hits = hits + 1', [], 'other');
      await log.waitFor(
        completeReport(vacuumHeader('other', 'hot_counters'), 'tuples: \\d+ removed, \\d+ remain, [1-9]\\d* are dead but not yet removable'),
        60_000,
      );
      await repack;
    });
  },
};

export const repackLockTimeoutAtSwap: Scenario = {
  name: 'repack-lock-timeout-at-swap',
  description:
    'A reader keeps a transaction open after SELECT on the table; REPACK (CONCURRENTLY) with lock_timeout = 1s copies the ' +
    'table, then waits for ACCESS EXCLUSIVE at the swap (logged after deadlock_timeout) and is cancelled by lock_timeout: ' +
    'the decoding worker is terminated and the whole run is rolled back.',
  versions: PG19_ONLY,
  logOf: 'primary',
  settings: () => ({ log_lock_waits: true, log_statement: 'ddl' }),
  sessionSettings: { lock_timeout: '1s' },
  async run({ primary, log }) {
    await primary.query('CREATE DATABASE repack_swap');
    await primary.query('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)', [], 'repack_swap');
    await primary.query('INSERT INTO accounts SELECT g, 100 FROM generate_series(1, 10000) g', [], 'repack_swap');
    await withSessions(primary, { reader: 'repack_swap', repacker: 'repack_swap' }, async ({ reader, repacker }) => {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM accounts');
      await repacker.query("SET lock_timeout = '1s'");
      await repacker.expectError('REPACK (CONCURRENTLY) accounts', '55P03');
      await reader.query('ROLLBACK');
      await log.waitFor(new RegExp(`\\[${repacker.pid}\\] [^\\n]*ERROR:  canceling statement due to lock timeout`));
    });
  },
};
