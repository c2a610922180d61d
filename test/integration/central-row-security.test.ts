/**
 * A sidecar whose central credentials leak cannot rewrite another sidecar's rows (#24 §5): two
 * sidecar roles set up as docs/fleet.md says, on a real PostgreSQL 18, each writing its own
 * target; A's inserts and updates of B's rows are refused, even through SET ROLE to the shared
 * forwarding role, and the reader role still reads both.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { centralDsnAs, prepareCentral } from '../helpers/fleet-central.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';

const STORE_A = '0000000000000000000000000000000a';
const STORE_B = '0000000000000000000000000000000b';

describe('central store: each sidecar role writes only its own targets', () => {
  let central: PgServer;
  const clients: pg.Client[] = [];

  async function connectAs(role: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: central.dsn().replace('//postgres@', `//${role}@`) });
    await client.connect();
    clients.push(client);
    return client;
  }

  const insertEvent = (client: pg.Client, target: string, storeId: string, localId: number) => client.query(
    `INSERT INTO pgvigil.events (target, store_id, local_id, ts, kind, level, message, details, source_file, source_offset)
     VALUES ($1, $2, $3, now(), 'generic', 'LOG', 'm', '{}', 'f', 0)`, [target, storeId, localId]);
  const upsertAlert = (client: pg.Client, target: string, storeId: string, summary: string) => client.query(
    `INSERT INTO pgvigil.alerts (target, store_id, local_id, rule_id, dedup_key, severity, state, labels, summary, evidence, started_at, updated_at)
     VALUES ($1, $2, 1, 'r', 'k', 'warning', 'firing', '{}', $3, '[]', date_trunc('day', now()), now())
     ON CONFLICT (target, store_id, local_id, started_at) DO UPDATE SET summary = excluded.summary`, [target, storeId, summary]);
  const upsertReportMinute = (client: pg.Client, target: string, storeId: string) => client.query(
    `INSERT INTO pgvigil.report_minutes (target, store_id, ts, through_local_id, states) VALUES ($1, $2, date_trunc('minute', now()), 1, ARRAY['{}'])
     ON CONFLICT (target, store_id, ts) DO UPDATE SET through_local_id = excluded.through_local_id, states = excluded.states`, [target, storeId]);

  beforeAll(async () => {
    central = await startPrimary({ version: 18, name: 'central-rls' });
    await prepareCentral(central);
    const admin = await connectAs('postgres');
    await admin.query(`
      CREATE ROLE sidecar_a LOGIN IN ROLE pgvigil_forward;
      CREATE ROLE sidecar_b LOGIN IN ROLE pgvigil_forward;
      INSERT INTO pgvigil.forward_roles (role_name, target) VALUES ('sidecar_a', 'db-a'), ('sidecar_b', 'db-b');
      DELETE FROM pgvigil.forward_roles WHERE target = '*';`);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()));
    await destroyAllServers();
  });

  it('lets A write its target and refuses its inserts and updates of B\'s rows; the reader reads both', async () => {
    const a = await connectAs('sidecar_a');
    const b = await connectAs('sidecar_b');
    await insertEvent(a, 'db-a', STORE_A, 1);
    await upsertAlert(a, 'db-a', STORE_A, 'a firing');
    await upsertReportMinute(a, 'db-a', STORE_A);
    await upsertReportMinute(a, 'db-a', STORE_A);
    await insertEvent(b, 'db-b', STORE_B, 1);
    await upsertAlert(b, 'db-b', STORE_B, 'b firing');

    const refused = { code: '42501', message: expect.stringMatching(/^role sidecar_a may not write rows of target db-b in pgvigil\./) };
    // A forges B's events and alert, with B's store id or its own.
    await expect(insertEvent(a, 'db-b', STORE_B, 2)).rejects.toMatchObject(refused);
    await expect(insertEvent(a, 'db-b', STORE_A, 2)).rejects.toMatchObject(refused);
    await expect(upsertAlert(a, 'db-b', STORE_B, 'forged by a')).rejects.toMatchObject(refused);
    await expect(upsertReportMinute(a, 'db-b', STORE_B)).rejects.toMatchObject(refused);
    await expect(a.query("INSERT INTO pgvigil.targets (target, store_id) VALUES ('db-b', $1)", [STORE_A])).rejects.toMatchObject(refused);
    // Nor update B's rows, nor move its own rows to B's target.
    await expect(a.query("UPDATE pgvigil.alerts SET summary = 'forged by a' WHERE target = 'db-b'")).rejects.toMatchObject(refused);
    await expect(a.query("UPDATE pgvigil.alerts SET target = 'db-b' WHERE target = 'db-a'")).rejects.toMatchObject(refused);
    // COPY, the forwarder's fast path, is checked too.
    const copyTransition = (target: string) => pipeline(
      Readable.from([`${target}\t${STORE_A}\t1\t1\t${new Date().toISOString()}\tfiring\n`]),
      a.query(copyFrom('COPY pgvigil.alert_transitions (target, store_id, local_id, alert_local_id, ts, to_state) FROM STDIN')),
    );
    await copyTransition('db-a');
    await expect(copyTransition('db-b')).rejects.toMatchObject(refused);
    // Partitions only through the bounded function (central migration 5), not the unbounded one it calls.
    await expect(a.query("SELECT pgvigil.create_day_partitions(ARRAY['2099-01-01']::date[])")).rejects.toMatchObject({ code: '42501' });
    await expect(a.query("SELECT pgvigil.ensure_day_partitions(ARRAY['2099-01-01']::date[])")).rejects.toMatchObject({ code: '22008' });
    // The shared group role's grants are A's, its targets are not.
    await a.query('SET ROLE pgvigil_forward');
    await expect(insertEvent(a, 'db-b', STORE_B, 3)).rejects.toMatchObject(refused);
    await a.query('RESET ROLE');

    const reader = new pg.Client({ connectionString: centralDsnAs(central, 'pgvigil_reader') });
    await reader.connect();
    clients.push(reader);
    expect((await reader.query('SELECT target, local_id::int AS id FROM pgvigil.events ORDER BY target')).rows)
      .toEqual([{ target: 'db-a', id: 1 }, { target: 'db-b', id: 1 }]);
    expect((await reader.query('SELECT target, summary FROM pgvigil.alerts ORDER BY target')).rows)
      .toEqual([{ target: 'db-a', summary: 'a firing' }, { target: 'db-b', summary: 'b firing' }]);
  });
});
