/**
 * Brings a central PostgreSQL database's pgvigil schema up to date: each pending migration in
 * its own transaction, under an advisory lock so two `pgvigil central migrate` runs (or a deploy
 * racing a manual run) apply each migration once. Then creates the daily partitions around today.
 * Never: forwarding or reading rows.
 */
import type pg from 'pg';
import { errorCode } from '../lib/pg-errors.js';
import { CENTRAL_MIGRATIONS } from './central-migrations.js';

/** Days of partitions created ahead of today (and one behind, for late rows near midnight). */
export const PARTITION_DAYS_AHEAD = 7;

const MIGRATION_LOCK = "hashtext('pgvigil central migrate')";

export interface MigrateResult {
  /** Migration numbers applied by this run, oldest first. */
  applied: number[];
  /** Schema version after the run. */
  version: number;
  partitionsCreated: number;
}

export class CentralSchemaError extends Error {
  constructor(readonly code: 'CENTRAL_NEWER' | 'CENTRAL_MISSING' | 'CENTRAL_OLDER', message: string) {
    super(message);
    this.name = 'CentralSchemaError';
  }
}

type Queryable = Pick<pg.Client, 'query'>;

export async function migrateCentral(client: Queryable, nowMs: number): Promise<MigrateResult> {
  // A session lock, taken before CREATE ... IF NOT EXISTS: that is not safe against a concurrent
  // creation of the same name (a unique violation in the catalogs).
  await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    await client.query('CREATE SCHEMA IF NOT EXISTS pgvigil');
    await client.query(`CREATE TABLE IF NOT EXISTS pgvigil.schema_migrations (
      version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied: number[] = [];
    for (let version = 1; version <= CENTRAL_MIGRATIONS.length; version++) {
      const done = await client.query('SELECT 1 FROM pgvigil.schema_migrations WHERE version = $1', [version]);
      if (done.rowCount !== 0) continue;
      await client.query('BEGIN');
      try {
        await client.query(CENTRAL_MIGRATIONS[version - 1]!);
        await client.query('INSERT INTO pgvigil.schema_migrations (version) VALUES ($1)', [version]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw new Error(`central migration ${version} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(version);
    }
    const version = await centralSchemaVersion(client);
    if (version > CENTRAL_MIGRATIONS.length) {
      throw new CentralSchemaError('CENTRAL_NEWER', `the central schema is at version ${version}, newer than this pgvigil knows (${CENTRAL_MIGRATIONS.length}); upgrade pgvigil.`);
    }
    const partitionsCreated = await ensureDayPartitions(client, daysAround(nowMs, 1, PARTITION_DAYS_AHEAD));
    return { applied, version, partitionsCreated };
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}

/** The highest migration applied; 0 when the schema was never created. */
export async function centralSchemaVersion(client: Queryable): Promise<number> {
  const exists = await client.query<{ present: boolean }>(`SELECT to_regclass('pgvigil.schema_migrations') IS NOT NULL AS present`);
  if (!exists.rows[0]?.present) return 0;
  const result = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM pgvigil.schema_migrations');
  return result.rows[0]?.version ?? 0;
}

/** Fails unless the central schema is exactly what this pgvigil writes and reads. */
export async function requireCentralSchema(client: Queryable): Promise<void> {
  const version = await centralSchemaVersion(client);
  if (version === CENTRAL_MIGRATIONS.length) return;
  if (version === 0) throw new CentralSchemaError('CENTRAL_MISSING', 'the central database has no pgvigil schema: run `pgvigil central migrate --dsn ...` as its owner first.');
  if (version < CENTRAL_MIGRATIONS.length) {
    throw new CentralSchemaError('CENTRAL_OLDER', `the central schema is at version ${version}, this pgvigil needs ${CENTRAL_MIGRATIONS.length}: run \`pgvigil central migrate\`.`);
  }
  throw new CentralSchemaError('CENTRAL_NEWER', `the central schema is at version ${version}, newer than this pgvigil knows (${CENTRAL_MIGRATIONS.length}); upgrade pgvigil.`);
}

const DUPLICATE_TABLE = '42P07';
/** events, alerts, alert_transitions, samples, report_minutes: each has a partition per day. */
const PARTITIONED_TABLES = 5;

/**
 * Creates the missing daily partitions for these UTC days ('YYYY-MM-DD'); returns how many. Two
 * forwarders missing the same day race: the one that waited for the other's lock checks again,
 * but reads a catalog cache that has not seen the other's commit (an advisory lock, unlike a
 * relation lock, does not refresh it), and its CREATE TABLE fails with "already exists". The
 * failed call created nothing (one statement); called again, in a new transaction, it sees the
 * partition. Each such failure means another forwarder made one, so it ends within as many calls.
 */
export async function ensureDayPartitions(client: Queryable, days: readonly string[]): Promise<number> {
  if (days.length === 0) return 0;
  for (let attempt = 1; ; attempt++) {
    try {
      const result = await client.query<{ created: number }>('SELECT pgvigil.ensure_day_partitions($1::date[]) AS created', [days]);
      return result.rows[0]?.created ?? 0;
    } catch (err) {
      if (errorCode(err) !== DUPLICATE_TABLE || attempt > days.length * PARTITIONED_TABLES) throw err;
    }
  }
}

/** UTC days from `behind` days before nowMs to `ahead` days after it, as 'YYYY-MM-DD'. */
export function daysAround(nowMs: number, behind: number, ahead: number): string[] {
  const today = Math.floor(nowMs / 86_400_000);
  const days: string[] = [];
  for (let day = today - behind; day <= today + ahead; day++) days.push(utcDay(day * 86_400_000));
  return days;
}

/** The UTC day of a time, as 'YYYY-MM-DD'. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Drops the daily partitions older than the cutoff (whole days); returns their names. */
export async function dropPartitionsBefore(client: Queryable, cutoffMs: number): Promise<string[]> {
  const result = await client.query<{ name: string }>('SELECT pgvigil.drop_partitions_before($1) AS name', [new Date(cutoffMs)]);
  return result.rows.map((r) => r.name);
}
