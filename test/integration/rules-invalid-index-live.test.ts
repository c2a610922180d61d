/**
 * invalid-index-left, live on a PostgreSQL 18 primary seen by the daemon's own machinery (poll
 * scheduler with every collector as a pg_monitor role, store writer, rules engine writing
 * alerts). A CREATE INDEX CONCURRENTLY held in "waiting for writers" by an open transaction
 * that wrote to its table has an invalid index in the catalog for as long as it waits: quiet. A
 * CREATE UNIQUE INDEX CONCURRENTLY over duplicate keys fails and leaves its index invalid: the
 * alert names it; DROP INDEX CONCURRENTLY resolves it. The 5 min are shortened to 1.5 s;
 * everything else runs at its defaults.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 30_000;
const MIN_LEFT_MS = 1_500;
const ID = 'invalid-index-left';

describe('invalid-index-left on a live PostgreSQL 18: a failed CREATE UNIQUE INDEX CONCURRENTLY, and one still waiting', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-invalid-index' });
    await createMonitorRole(server);
    await server.query('CREATE TABLE orders (id int PRIMARY KEY, amount int NOT NULL, note text)');
    // Amounts repeat: a unique index on them cannot be built.
    await server.query('INSERT INTO orders SELECT g, g % 100, md5(g::text) FROM generate_series(1, 10000) g');
    rig = await startLiveRules(server, { [ID]: { minLeftMs: MIN_LEFT_MS } });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  /** pg_invalid_indexes_left_behind of one index as stored: how long it was sampled, and the values it had. */
  const sampled = (index: string): { spanMs: number; values: number[] } => {
    const rows = rig.db.prepare(`SELECT ts_ms, value FROM samples JOIN series ON series.id = series_id
      WHERE name = 'pg_invalid_indexes_left_behind' AND labels LIKE ? ORDER BY ts_ms`).all(`%"${index}"%`) as Array<{ ts_ms: number; value: number }>;
    return { spanMs: rows.length === 0 ? 0 : rows.at(-1)!.ts_ms - rows[0]!.ts_ms, values: [...new Set(rows.map((r) => r.value))] };
  };

  it('stays quiet while a CREATE INDEX CONCURRENTLY waits with its index invalid, however long', async () => {
    const writer = await openSession(server);
    await writer.client.query('BEGIN');
    await writer.client.query("INSERT INTO orders VALUES (20001, 1, 'open')");
    const builder = await openSession(server);
    const build = builder.client.query('CREATE INDEX CONCURRENTLY orders_note_idx ON orders (note)');
    try {
      // Three times the rule's 1.5 s: seen by the collector as invalid all along, and worked on.
      await waitUntil(() => sampled('orders_note_idx').spanMs >= 3 * MIN_LEFT_MS, WAIT_MS, 'the waiting build\'s index sampled for 4.5 s');
      const [waiting] = await server.query<{ phase: string; valid: boolean }>(`SELECT p.phase, i.indisvalid AS valid FROM pg_stat_progress_create_index p
        JOIN pg_index i ON i.indrelid = p.relid JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'orders_note_idx'`);
      expect(waiting).toEqual({ phase: 'waiting for writers before build', valid: false });
      expect(rig.alerts(ID)).toEqual([]);
      expect(sampled('orders_note_idx').values).toEqual([0]);
    } finally {
      await writer.client.query('COMMIT');
      await build;
      await writer.client.end();
      await builder.client.end();
    }
  });

  it('names the index a failed CREATE UNIQUE INDEX CONCURRENTLY left invalid, and resolves once it is dropped', async () => {
    await expect(server.query('CREATE UNIQUE INDEX CONCURRENTLY orders_amount_unique ON orders (amount)')).rejects.toThrow(/could not create unique index "orders_amount_unique"/);
    const alerts = () => rig.alerts(ID);
    await waitUntil(() => alerts()[0]?.state === 'firing', WAIT_MS, 'the invalid-index-left alert');
    const [fired] = alerts();
    expect(fired?.severity).toBe('warning');
    expect(fired?.summary).toMatch(new RegExp(
      '^Invalid index public\\.orders_amount_unique on postgres\\.public\\.orders for \\d+ s \\(since \\d\\d:\\d\\d:\\d\\d UTC\\), ' +
      'probably left by a CREATE INDEX CONCURRENTLY that failed or was cancelled: the planner never uses it \\(not maintained either: ' +
      'its build failed before it was ready\\); a CREATE INDEX CONCURRENTLY of the same name fails \\("already exists"\\), and with IF NOT EXISTS ' +
      'builds nothing\\. DROP INDEX CONCURRENTLY public\\.orders_amount_unique, then run the CREATE INDEX CONCURRENTLY again',
    ));
    // The index built while the writer waited is valid now: only the failed one is named.
    expect(alerts().map((a) => JSON.parse(a.labels) as Record<string, string>)).toEqual([
      { datname: 'postgres', schemaname: 'public', relname: 'orders', indexrelname: 'orders_amount_unique' },
    ]);

    await server.query('DROP INDEX CONCURRENTLY orders_amount_unique');
    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the index is dropped');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
    expect(alerts()).toHaveLength(1);
  });
});
