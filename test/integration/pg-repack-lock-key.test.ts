/**
 * pg_repack's advisory lock as the leftovers collector finds it in pg_locks, on a real server:
 * pg_repack takes pg_try_advisory_lock(16185446, CAST(-2147483648 + oid AS integer)) on each
 * table it works on, and a table whose lock is held is in use, not left behind. OIDs at and above
 * 2^31 (a server that has created two billion objects) give a non-negative key, which pg_locks
 * shows as OID - 2^31: the collector once looked for OID + 2^31 only, and called a running
 * pg_repack's objects leftovers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { repackLockObjid } from '../../src/collectors/pg-repack-leftovers.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';

const TABLE_OIDS = [16_384, 2_147_483_647, 2_147_483_648, 3_000_000_000, 4_294_967_295];

describe("pg_repack's advisory lock key in pg_locks, for every range of table OID", () => {
  let server: PgServer;
  let repack: pg.Client;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'repack-lock-key' });
    repack = new pg.Client({ connectionString: server.dsn() });
    await repack.connect();
    for (const oid of TABLE_OIDS) {
      const { rows } = await repack.query('SELECT pg_try_advisory_lock(16185446, CAST(-2147483648 + $1::bigint AS integer)) AS locked', [oid]);
      expect(rows[0].locked).toBe(true);
    }
  });

  afterAll(async () => {
    await repack?.end();
    await destroyAllServers();
  });

  it.each(TABLE_OIDS)('finds the lock pg_repack holds on table OID %d', async (oid) => {
    const [row] = await server.query<{ held: boolean }>(`SELECT EXISTS (SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.classid = 16185446 AND l.objid::bigint = ${repackLockObjid('$1::oid')}) AS held`, [oid]);
    expect(row?.held).toBe(true);
  });

  it('does not find a lock for a table pg_repack is not working on', async () => {
    const [row] = await server.query<{ held: boolean }>(`SELECT EXISTS (SELECT 1 FROM pg_locks l
      WHERE l.locktype = 'advisory' AND l.classid = 16185446 AND l.objid::bigint = ${repackLockObjid('$1::oid')}) AS held`, [16_385]);
    expect(row?.held).toBe(false);
  });
});
