/**
 * `pgvigil central migrate` against real PostgreSQL 18 (and 15 and 19 when installed): the
 * schema is created once even by two runs racing, daily partitions exist around today, a row
 * sent twice is stored once, a day without a partition gets one on demand (also by two forwarders
 * at once), and prune drops whole old days only.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CENTRAL_MIGRATIONS } from '../../src/central/central-migrations.js';
import { daysAround, dropPartitionsBefore, ensureDayPartitions, migrateCentral, PARTITION_DAYS_AHEAD, requireCentralSchema, utcDay } from '../../src/central/migrate-central.js';
import { destroyAllServers, startPrimary, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool } from '../helpers/tools.js';

const DAY_MS = 86_400_000;
/** Noon UTC today: ensure_day_partitions takes days near the server's own clock only (central migration 5). */
const NOW_MS = Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS / 2;
const YESTERDAY = utcDay(NOW_MS - DAY_MS);
/** Two days a sidecar may still send (a drained store of old logs), before the window of partitions migrate creates. */
const OLD_DAYS = [utcDay(NOW_MS - 300 * DAY_MS), utcDay(NOW_MS - 200 * DAY_MS)] as const;
const partitionSuffix = (day: string) => day.replaceAll('-', '');

function migrationSuite(version: PgVersion): void {
  let server: PgServer;
  const clients: pg.Client[] = [];
  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: server.dsn() });
    await client.connect();
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startPrimary({ version, name: `central${version}` });
  });
  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    await destroyAllServers();
  });

  it('creates the schema once when two migrations race, then finds nothing to do', async () => {
    const [a, b] = [await connect(), await connect()];
    const results = await Promise.all([migrateCentral(a, NOW_MS), migrateCentral(b, NOW_MS)]);
    expect(results.map((r) => r.applied).flat()).toEqual(CENTRAL_MIGRATIONS.map((_, i) => i + 1));
    expect(results.map((r) => r.version)).toEqual([CENTRAL_MIGRATIONS.length, CENTRAL_MIGRATIONS.length]);
    // Five partitioned tables, one partition per day from yesterday to a week ahead.
    expect(results[0]!.partitionsCreated + results[1]!.partitionsCreated).toBe(5 * (PARTITION_DAYS_AHEAD + 2));
    const again = await migrateCentral(a, NOW_MS);
    expect(again).toEqual({ applied: [], version: CENTRAL_MIGRATIONS.length, partitionsCreated: 0 });
    await expect(requireCentralSchema(a)).resolves.toBeUndefined();
  });

  it('has a partition per UTC day, bounded at midnight UTC', async () => {
    const client = await connect();
    const { rows } = await client.query<{ name: string; bound: string }>(`
      SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'pgvigil.events'::regclass ORDER BY 1`);
    expect(rows.map((r) => r.name)).toEqual(daysAround(NOW_MS, 1, PARTITION_DAYS_AHEAD).map((d) => `events_${d.replaceAll('-', '')}`));
    await client.query(`SET TimeZone = 'UTC'`);
    const { rows: [first] } = await client.query<{ bound: string }>(
      `SELECT pg_get_expr(relpartbound, oid) AS bound FROM pg_class WHERE relname = $1`, [`events_${partitionSuffix(YESTERDAY)}`]);
    expect(first!.bound).toBe(`FOR VALUES FROM ('${YESTERDAY} 00:00:00+00') TO ('${utcDay(NOW_MS)} 00:00:00+00')`);
  });

  it('keeps event details as json, in every partition (migration 3: no jsonb conversion per forwarded row)', async () => {
    const client = await connect();
    const { rows } = await client.query<{ type: string; n: string }>(`
      SELECT format_type(a.atttypid, a.atttypmod) AS type, count(*) AS n FROM pg_attribute a
      WHERE a.attname = 'details' AND (a.attrelid = 'pgvigil.events'::regclass OR a.attrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'pgvigil.events'::regclass))
      GROUP BY 1`);
    expect(rows.map((r) => r.type)).toEqual(['json']);
    expect(Number(rows[0]!.n)).toBe(1 + daysAround(NOW_MS, 1, PARTITION_DAYS_AHEAD).length);
  });

  it('stores a row sent twice once, and takes a day far in the past once its partition is ensured', async () => {
    const client = await connect();
    const insert = `INSERT INTO pgvigil.events (target, store_id, local_id, ts, kind, level, message, details, source_file, source_offset)
      VALUES ('db1', '0123456789abcdef0123456789abcdef', 7, $1, 'generic', 'LOG', 'hello', '{}', 'postgresql.log', 0) ON CONFLICT DO NOTHING`;
    const today = new Date(NOW_MS);
    expect((await client.query(insert, [today])).rowCount).toBe(1);
    expect((await client.query(insert, [today])).rowCount).toBe(0);
    const longAgo = new Date(`${OLD_DAYS[0]}T03:00:00Z`);
    await expect(client.query(insert, [longAgo])).rejects.toThrow(/no partition of relation "events" found for row/);
    expect(await ensureDayPartitions(client, [OLD_DAYS[0]])).toBe(5);
    expect(await ensureDayPartitions(client, [OLD_DAYS[0]])).toBe(0);
    expect((await client.query(insert, [longAgo])).rowCount).toBe(1);
  });

  it('a forwarder that waited while another created the same day finds it made, and fails nothing', async () => {
    const [first, second] = [await connect(), await connect()];
    await first.query('BEGIN');
    expect(await ensureDayPartitions(first, [OLD_DAYS[1]])).toBe(5);
    // The second looks (nothing committed yet), then waits for the first's lock.
    const waiting = ensureDayPartitions(second, [OLD_DAYS[1]]);
    await waitUntil(async () => (await first.query(`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`)).rowCount === 1,
      10_000, 'the second forwarder waiting for the partition lock');
    await first.query('COMMIT');
    expect(await waiting).toBe(0);
  });

  it('refuses partitions for a day far from the central clock (a sidecar with a wrong clock), creating none of the batch', async () => {
    const client = await connect();
    const partitions = async () => Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'pgvigil.events'::regclass`)).rows[0]!.n);
    const before = await partitions();
    for (const wrong of ['2099-06-01', '1970-01-01', utcDay(NOW_MS + 8 * DAY_MS), utcDay(NOW_MS - 401 * DAY_MS)]) {
      await expect(ensureDayPartitions(client, [utcDay(NOW_MS + 2 * DAY_MS), wrong]))
        .rejects.toMatchObject({ code: '22008', message: expect.stringContaining(`day ${wrong} is outside`) });
    }
    expect(await partitions()).toBe(before);
    // The edges of the window are accepted.
    expect(await ensureDayPartitions(client, [utcDay(NOW_MS + 7 * DAY_MS), utcDay(NOW_MS - 400 * DAY_MS)])).toBe(5);
    await client.query('SELECT pgvigil.drop_partitions_before($1)', [new Date(NOW_MS - 399 * DAY_MS)]);
  });

  it('upgrades a schema at migration 5: the log report minutes get partitions, prune, and the grants of alerts (migration 6)', async () => {
    const admin = await connect();
    await admin.query('CREATE DATABASE upgrade_from_5');
    const client = new pg.Client({ connectionString: server.dsn('upgrade_from_5') });
    await client.connect();
    clients.push(client);
    await client.query('CREATE SCHEMA pgvigil; CREATE TABLE pgvigil.schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
    for (let version = 1; version <= 5; version++) {
      await client.query(CENTRAL_MIGRATIONS[version - 1]!);
      await client.query('INSERT INTO pgvigil.schema_migrations (version) VALUES ($1)', [version]);
    }
    await client.query(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'forwarder_of_5') THEN CREATE ROLE forwarder_of_5; END IF; END $$;
      GRANT SELECT, INSERT, UPDATE ON pgvigil.alerts TO forwarder_of_5`);

    expect((await migrateCentral(client, NOW_MS)).applied).toEqual([6]);
    const privileges = await client.query<{ p: string }>(`SELECT p FROM unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) AS p
      WHERE has_table_privilege('forwarder_of_5', 'pgvigil.report_minutes', p)`);
    expect(privileges.rows.map((r) => r.p)).toEqual(['SELECT', 'INSERT', 'UPDATE']);
    const partitions = async () => (await client.query<{ name: string }>(`SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'pgvigil.report_minutes'::regclass ORDER BY 1`)).rows.map((r) => r.name);
    expect(await partitions()).toEqual(daysAround(NOW_MS, 1, PARTITION_DAYS_AHEAD).map((d) => `report_minutes_${partitionSuffix(d)}`));
    expect(await dropPartitionsBefore(client, NOW_MS - DAY_MS / 4)).toContain(`report_minutes_${partitionSuffix(YESTERDAY)}`);
    expect(await partitions()).toHaveLength(PARTITION_DAYS_AHEAD + 1);
  });

  it('prune drops whole days older than the cutoff and nothing newer', async () => {
    const client = await connect();
    const dropped = await dropPartitionsBefore(client, NOW_MS - DAY_MS - DAY_MS / 4);
    expect(dropped).toEqual(['alert_transitions', 'alerts', 'events', 'report_minutes', 'samples'].flatMap((table) => OLD_DAYS.map((day) => `${table}_${partitionSuffix(day)}`)));
    const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pgvigil.events');
    expect(Number(rows[0]!.n)).toBe(1);
  });
}

describe('central migrate on PostgreSQL 18', () => migrationSuite(18));
describeWithTool('pg15', 'central migrate on PostgreSQL 15', () => migrationSuite(15));
describeWithTool('pg19', 'central migrate on PostgreSQL 19', () => migrationSuite(19));
