import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { parseLockObject } from '../parsers/classify/lock-object.js';
import { RelationNames, type CatalogQuery } from './relation-names.js';

/** A fake catalog: databases by OID, and per database name its relations by OID. */
function fakeCatalog(databases: Record<number, string>, relations: Record<string, Record<number, string>>) {
  const calls: Array<string | null> = [];
  let failing = false;
  const query: CatalogQuery = async (database, sql, params) => {
    calls.push(database);
    if (failing) throw new Error('connection refused');
    if (sql.includes('pg_database')) return Object.entries(databases).map(([oid, datname]) => ({ oid: Number(oid), datname }));
    const limit = Number(params[0]);
    return Object.entries(relations[database!] ?? {}).slice(0, limit).map(([oid, name]) => {
      const [nspname, relname] = name.split('.');
      return { oid: Number(oid), nspname, relname };
    });
  };
  return { query, calls, databases, relations, fail: (on: boolean) => (failing = on) };
}

function cache(catalog: ReturnType<typeof fakeCatalog>, clock: ManualClock, maxRelationsPerDatabase?: number) {
  return new RelationNames({ query: catalog.query, clock, logger: silentLogger(), ...(maxRelationsPerDatabase ? { maxRelationsPerDatabase } : {}) });
}

/** Two lookups, each waited for: the database list, then that database's relations. */
async function warm(names: RelationNames, relationOid = 16394): Promise<void> {
  for (let i = 0; i < 2; i++) {
    names.nameOf(5, relationOid);
    await names.settled();
  }
}

describe('RelationNames', () => {
  it('misses first, loads in the background, then answers from memory with no query', async () => {
    const catalog = fakeCatalog({ 5: 'appdb' }, { appdb: { 16394: 'public.orders' } });
    const names = cache(catalog, new ManualClock());
    expect(names.nameOf(5, 16394)).toBeNull();
    await names.settled();
    // The database is known now; its relations load on this first lookup in it.
    expect(names.nameOf(5, 16394)).toEqual({ database: 'appdb', relation: null });
    await names.settled();
    expect(names.nameOf(5, 16394)).toEqual({ database: 'appdb', relation: 'public.orders' });
    expect(names.nameOf(5, null)).toEqual({ database: 'appdb', relation: null });
    expect(catalog.calls).toEqual([null, 'appdb']);
  });

  it('reloads on a miss no more often than once a minute, however many lines miss', async () => {
    const clock = new ManualClock();
    const catalog = fakeCatalog({ 5: 'appdb' }, { appdb: { 16394: 'public.orders' } });
    const names = cache(catalog, clock);
    await warm(names);
    for (let i = 0; i < 1000; i++) names.nameOf(5, 20000 + i);
    await names.settled();
    expect(catalog.calls).toEqual([null, 'appdb']);
    // A table created since: found after the next reload.
    catalog.relations.appdb![16500] = 'public.invoices';
    await clock.advance(60_000);
    expect(names.nameOf(5, 16500)).toEqual({ database: 'appdb', relation: null });
    await names.settled();
    expect(names.nameOf(5, 16500)).toEqual({ database: 'appdb', relation: 'public.invoices' });
    expect(catalog.calls).toEqual([null, 'appdb', 'appdb']);
  });

  it('serves old names while reloading them after ten minutes (a rename shows up then)', async () => {
    const clock = new ManualClock();
    const catalog = fakeCatalog({ 5: 'appdb' }, { appdb: { 16394: 'public.orders' } });
    const names = cache(catalog, clock);
    await warm(names);
    catalog.relations.appdb![16394] = 'public.orders_old';
    await clock.advance(9 * 60_000);
    expect(names.nameOf(5, 16394)?.relation).toBe('public.orders');
    await names.settled();
    await clock.advance(60_000);
    expect(names.nameOf(5, 16394)?.relation).toBe('public.orders');
    await names.settled();
    expect(names.nameOf(5, 16394)?.relation).toBe('public.orders_old');
  });

  it('keeps at most maxRelationsPerDatabase names per database', async () => {
    const catalog = fakeCatalog({ 5: 'appdb' }, { appdb: { 1: 'public.a', 2: 'public.b', 3: 'public.c' } });
    const names = cache(catalog, new ManualClock(), 2);
    await warm(names, 1);
    expect([1, 2, 3].map((oid) => names.nameOf(5, oid)?.relation)).toEqual(['public.a', 'public.b', null]);
  });

  it('warm() loads every database until the cap, so even the first lock event is named', async () => {
    const catalog = fakeCatalog({ 5: 'appdb', 6: 'shop', 7: 'late' }, { appdb: { 16394: 'public.orders' }, shop: { 1: 'public.a', 2: 'public.b' }, late: { 3: 'public.c' } });
    const names = new RelationNames({ query: catalog.query, clock: new ManualClock(), logger: silentLogger(), maxWarmRelations: 3 });
    await names.warm();
    expect(catalog.calls).toEqual([null, 'appdb', 'shop']);
    expect(names.nameOf(5, 16394)).toEqual({ database: 'appdb', relation: 'public.orders' });
    expect(names.nameOf(6, 2)).toEqual({ database: 'shop', relation: 'public.b' });
    expect(names.nameOf(7, 3)).toEqual({ database: 'late', relation: null });
  });

  it('a failed load leaves the OIDs alone and is tried again a minute later', async () => {
    const clock = new ManualClock();
    const catalog = fakeCatalog({ 5: 'appdb' }, {});
    const names = cache(catalog, clock);
    catalog.fail(true);
    names.nameOf(5, null);
    await names.settled();
    catalog.fail(false);
    names.nameOf(5, null);
    await names.settled();
    expect(names.nameOf(5, null)).toBeNull();
    await clock.advance(60_000);
    names.nameOf(5, null);
    await names.settled();
    expect(names.nameOf(5, null)).toEqual({ database: 'appdb', relation: null });
  });

  it('annotates the lock objects of lock waits, lock timeouts and deadlocks in place, keeping the OIDs', async () => {
    const catalog = fakeCatalog({ 5: 'appdb' }, { appdb: { 16394: 'public.orders' } });
    const names = cache(catalog, new ManualClock());
    await warm(names);
    const lock = () => parseLockObject('relation 16394 of database 5');
    const events = [
      { kind: 'lock_wait', details: { lock_object: lock() } },
      { kind: 'lock_timeout', details: { lock_object: lock() } },
      { kind: 'deadlock', details: { processes: [{ lock_object: lock() }, { lock_object: null }] } },
      { kind: 'lock_wait', details: { lock_object: parseLockObject('transaction 7') } },
    ] as unknown as AnyLogEvent[];
    names.annotate(events);
    const named = { database_name: 'appdb', relation_name: 'public.orders', relation_oid: 16394, database_oid: 5 };
    expect(events[0]).toMatchObject({ details: { lock_object: named } });
    expect(events[1]).toMatchObject({ details: { lock_object: named } });
    expect(events[2]).toMatchObject({ details: { processes: [{ lock_object: named }, { lock_object: null }] } });
    expect(events[3]).toMatchObject({ details: { lock_object: { type: 'transactionid' } } });
    expect('database_name' in (events[3] as { details: { lock_object: object } }).details.lock_object).toBe(false);
  });
});
