/**
 * The pg_xmin_horizon collector against a real PostgreSQL 18: lazy VACUUMs (and their parallel
 * workers) hold nothing (PROC_IN_VACUUM), so they are left out before the oldest few holders per
 * kind are kept. Six slow VACUUMs older than a real holder once pushed it out of the five kept.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerInfo } from '../../src/collectors/collector.js';
import { HOLDERS_PER_KIND, pgXminHorizonCollector } from '../../src/collectors/pg-xmin-horizon.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { consumeXids, openSession } from './collectors-rig.js';

const WAIT_MS = 30_000;
const VACUUMS = HOLDERS_PER_KIND + 1;

describe('pg_xmin_horizon leaves lazy VACUUMs out before keeping the oldest holders (PG 18)', () => {
  let primary: PgServer;
  const sessions: pg.Client[] = [];
  const open = async () => {
    const session = await openSession(primary);
    sessions.push(session.client);
    return session;
  };
  /** The collector's samples, with the pids pg_stat_activity showed at the same instant (one transaction, one stats snapshot). */
  const collectWith = async (probeSql: string): Promise<{ pids: string[]; probed: string[] }> => {
    const { client } = await open();
    await client.query('BEGIN');
    try {
      const probed = (await client.query<{ pid: number }>(probeSql)).rows.map((r) => String(r.pid));
      const server: ServerInfo = { versionNum: 180000, version: '18', inRecovery: false, startedAtMs: 0 };
      const samples = await pgXminHorizonCollector().collect({
        target: 'primary', server, nowMs: Date.now(), query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
      });
      const pids = samples.filter((s) => s.name === 'pg_xmin_horizon_holder_age_xids').map((s) => s.labels.pid ?? '');
      return { pids, probed };
    } finally {
      await client.query('COMMIT');
    }
  };

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, name: 'xmin-horizon-vacuums', settings: { max_parallel_maintenance_workers: 2 } });
    for (let i = 0; i < VACUUMS; i++) {
      await primary.query(`CREATE TABLE slow_${i} AS SELECT g AS id, md5(g::text) AS pad FROM generate_series(1, 20000) g`);
    }
    // Two indexes past min_parallel_index_scan_size (512 kB), and dead rows, so VACUUM (PARALLEL 2) launches workers.
    await primary.query('CREATE TABLE parallel_me AS SELECT g AS id, g AS other FROM generate_series(1, 60000) g');
    await primary.query('CREATE INDEX ON parallel_me (id)');
    await primary.query('CREATE INDEX ON parallel_me (other)');
    await primary.query('DELETE FROM parallel_me WHERE id % 2 = 0');
  }, 60_000);

  afterAll(async () => {
    await Promise.all(sessions.map((c) => c.end().catch(() => undefined)));
    await destroyAllServers();
  });

  it('names a holder younger than six running VACUUMs, and no VACUUM', async () => {
    const vacuums: number[] = [];
    for (let i = 0; i < VACUUMS; i++) {
      const { client, pid } = await open();
      // About a minute per table: they run for the whole test and are cancelled at its end.
      await client.query("SET vacuum_cost_delay = '100ms'");
      await client.query('SET vacuum_cost_limit = 1');
      void client.query(`VACUUM slow_${i}`).catch(() => undefined);
      vacuums.push(pid);
    }
    await waitUntil(async () => (await primary.query(`SELECT 1 FROM pg_stat_activity WHERE pid = ANY($1) AND backend_xmin IS NOT NULL`, [vacuums])).length === VACUUMS,
      WAIT_MS, 'every VACUUM running with an xmin');
    // The real holder opens its snapshot after the VACUUMs took theirs: it is the youngest.
    await consumeXids(primary, 20);
    const holder = await open();
    await holder.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder.client.query('SELECT count(*) FROM slow_0');
    try {
      const { pids, probed } = await collectWith(`SELECT pid FROM pg_stat_activity WHERE pid = ANY('{${vacuums.join(',')}}') AND backend_xmin IS NOT NULL`);
      expect(probed).toHaveLength(VACUUMS);
      expect(pids).toContain(String(holder.pid));
      for (const pid of vacuums) expect(pids).not.toContain(String(pid));
    } finally {
      await holder.client.query('ROLLBACK');
      await primary.query('SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1)', [vacuums]);
    }
  }, 90_000);

  it('leaves out the parallel workers of a VACUUM (PARALLEL), judged by their leader', async () => {
    const { client, pid } = await open();
    await client.query("SET vacuum_cost_delay = '20ms'");
    await client.query('SET vacuum_cost_limit = 1');
    void client.query('VACUUM (PARALLEL 2) parallel_me').catch(() => undefined);
    const workers = `SELECT pid FROM pg_stat_activity WHERE backend_type = 'parallel worker' AND leader_pid = ${pid} AND backend_xmin IS NOT NULL`;
    try {
      await waitUntil(async () => (await primary.query(workers)).length > 0, 60_000, 'the VACUUM\'s parallel workers in its index pass');
      const { pids, probed } = await collectWith(workers);
      expect(probed.length).toBeGreaterThan(0);
      for (const worker of [...probed, String(pid)]) expect(pids).not.toContain(worker);
    } finally {
      await primary.query('SELECT pg_cancel_backend($1)', [pid]);
    }
  }, 90_000);
});
