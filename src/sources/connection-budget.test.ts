/**
 * The connection budget's queue against a real PostgreSQL 18, with room for one connection beside
 * the main database's: who is served next when that one is released.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { destroyAllServers, startPrimary, type PgServer } from '../../test/helpers/pg-harness.js';
import { ConnectionBudget, type Lease } from './connection-budget.js';

describe('ConnectionBudget against PostgreSQL 18', () => {
  let server: PgServer;
  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'connection-budget' });
    for (const db of ['db_a', 'db_b', 'db_c']) await server.query(`CREATE DATABASE ${db}`);
  });
  afterAll(() => destroyAllServers());

  /**
   * A budget of 2 (the main database's and one more), the main one open, and db_a lent out. ask()
   * queues work that notes its database in `served` once served, and releases at once.
   */
  async function budgetWithALent(): Promise<{ budget: ConnectionBudget; a: Lease; served: string[]; ask: (db: string, urgent?: boolean) => Promise<void> }> {
    const budget = new ConnectionBudget({ target: 't', connection: server.dsn(), clock: systemClock, logger: silentLogger(), maxConnections: 2, minFreeConnections: 0 });
    await budget.query(null, 'SELECT 1', undefined, 1_000);
    budget.nameMain('postgres');
    const a = await budget.acquire('db_a');
    const served: string[] = [];
    const ask = (db: string, urgent = false): Promise<void> => budget.acquire(db, urgent).then((lease) => {
      served.push(lease.database);
      lease.release();
    });
    return { budget, a, served, ask };
  }

  it('hands a released connection to work waiting for its database before opening one for earlier work elsewhere', async () => {
    const { budget, a, served, ask } = await budgetWithALent();
    try {
      const b = ask('db_b');
      const a2 = ask('db_a');
      a.release();
      await Promise.all([a2, b]);
      expect(served).toEqual(['db_a', 'db_b']);
      expect(budget.stats).toMatchObject({ connects: 3, peakOpen: 2 });
    } finally {
      await budget.endAll();
    }
  });

  it('serves urgent work before the queue', async () => {
    const { budget, a, served, ask } = await budgetWithALent();
    try {
      const b = ask('db_b');
      const c = ask('db_c', true);
      a.release();
      await Promise.all([b, c]);
      expect(served).toEqual(['db_c', 'db_b']);
      expect(budget.stats.peakOpen).toBe(2);
    } finally {
      await budget.endAll();
    }
  });

  it('fails work waiting for a database it lets go of, and serves the rest', async () => {
    const { budget, a, ask } = await budgetWithALent();
    try {
      const b = ask('db_b');
      const a2 = ask('db_a');
      budget.end('db_a');
      await expect(a2).rejects.toThrow(/connection to database db_a closed/);
      a.release();
      await b;
      expect(budget.stats.open).toBeLessThanOrEqual(2);
    } finally {
      await budget.endAll();
    }
  });
});
