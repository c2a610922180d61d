/**
 * The daemon names what a lock event locks: on a live PostgreSQL 18, DROP TABLE orders in database
 * appdb queues behind an open reader with two readers behind it. The stored lock_wait events carry
 * `database_name` appdb and `relation_name` public.orders beside the OIDs the log printed, and the
 * drop-blocks-lock-queue alert reads `on appdb.public.orders (relation <oid> of database <oid>)`.
 * The cache is warmed when the poller connects, so the first lock event is named as well.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules, waitForLockWaiters, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 15_000;

describe('lock events named from the catalog on a live PostgreSQL 18', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'lock-names', settings: { log_lock_waits: true, deadlock_timeout: '100ms' } });
    await server.query('CREATE DATABASE appdb');
    await server.query('CREATE TABLE orders (id int PRIMARY KEY, total numeric NOT NULL)', [], 'appdb');
    await server.query('INSERT INTO orders SELECT g, g FROM generate_series(1, 100) g', [], 'appdb');
    await createMonitorRole(server);
    rig = await startLiveRules(server, {}, undefined, { nameLocks: true });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('stores the names beside the OIDs and the DROP\'s alert names appdb.public.orders', async () => {
    const [ids] = await server.query<{ database_oid: number; relation_oid: number }>(
      "SELECT (SELECT oid::int FROM pg_database WHERE datname = 'appdb') AS database_oid, 'public.orders'::regclass::oid::int AS relation_oid", [], 'appdb');
    const { database_oid: databaseOid, relation_oid: relationOid } = ids!;
    // Warmed when the poller connected: no miss needed, so the DROP's first line is named too.
    await rig.names!.settled();

    const [reader, dropper, queued1, queued2] = await Promise.all([1, 2, 3, 4].map(() => openSession(server, 'appdb')));
    const pending: Array<Promise<unknown>> = [];
    try {
      await reader!.client.query('BEGIN');
      await reader!.client.query('SELECT count(*) FROM orders');
      pending.push(dropper!.client.query('DROP TABLE orders'));
      await waitForLockWaiters(server, [dropper!.pid]);
      pending.push(...[queued1!, queued2!].map((s) => s.client.query('SELECT count(*) FROM orders').catch(() => undefined)));
      await waitForLockWaiters(server, [dropper!.pid, queued1!.pid, queued2!.pid]);

      const alert = () => rig.alerts('drop-blocks-lock-queue')[0];
      await waitUntil(() => alert()?.summary.includes('blocks 2 queries') === true, WAIT_MS, 'the drop-blocks-lock-queue alert for both queued readers');
      const printed = `relation ${relationOid} of database ${databaseOid}`;
      expect(alert()!.summary).toMatch(new RegExp(
        `^DROP TABLE orders has waited \\d+ s for AccessExclusiveLock on appdb\\.public\\.orders \\(${printed}\\) behind pid ${reader!.pid} and blocks 2 queries`,
      ));
      expect(JSON.parse(alert()!.evidence).facts.lock).toBe(`appdb.public.orders (${printed})`);

      const stored = rig.db.prepare("SELECT json_extract(details, '$.lock_object') AS lock FROM events WHERE kind = 'lock_wait' AND pid = ?")
        .pluck().all(dropper!.pid) as string[];
      expect(stored.length).toBeGreaterThan(0);
      for (const lock of stored) expect(JSON.parse(lock)).toMatchObject({
        type: 'relation', description: printed, relation_oid: relationOid, database_oid: databaseOid,
        database_name: 'appdb', relation_name: 'public.orders',
      });
    } finally {
      await reader!.client.end().catch(() => undefined);
      await Promise.allSettled(pending);
      await Promise.all([dropper!, queued1!, queued2!].map((s) => s.client.end().catch(() => undefined)));
    }
  });
});
