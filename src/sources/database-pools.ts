/**
 * The poll scheduler's connections to one target: a small pg.Pool per database, and how every
 * query goes out on them (the collector's statement_timeout, lock_timeout, a named prepared
 * statement, int8 as a number).
 *
 * It never decides when or where to query, nor when to let go of a database: the scheduler
 * (poll-scheduler.ts) does.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { DEFAULT_TIMEOUT_MS, POLL_LOCK_TIMEOUT_MS, POLLER_APPLICATION_NAME } from '../collectors/collector.js';
import type { Logger } from '../lib/logger.js';
import { errorCode, errorMessage, isConnectionError } from '../lib/pg-errors.js';
import { pgClientConfig } from '../lib/pg-connection.js';

/** Longer than the default intervals, so a database's connection lasts from one visit to the next. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;

export interface DatabasePoolsOptions {
  target: string;
  /** A postgres:// URL or a node-postgres ClientConfig; its database is the main database. */
  connection: string | pg.ClientConfig;
  idleTimeoutMs?: number;
  logger: Logger;
}

const MAIN_POOL = '\u0000main';

export class DatabasePools {
  private readonly pools = new Map<string, pg.Pool>();
  private readonly timeouts = new WeakMap<pg.PoolClient, number>();
  private mainDatabase = '';

  constructor(private readonly options: DatabasePoolsOptions) {}

  /** The pool of a database; null: the DSN's own database, before its name is known. */
  pool(db: string | null): pg.Pool {
    const key = db ?? MAIN_POOL;
    let pool = this.pools.get(key);
    if (pool) return pool;
    const main = db === null || db === this.mainDatabase;
    pool = new pg.Pool({
      ...this.clientConfig(db),
      application_name: POLLER_APPLICATION_NAME,
      // Sent at connect: collectors with the default timeout need no SET round trip.
      statement_timeout: DEFAULT_TIMEOUT_MS,
      lock_timeout: POLL_LOCK_TIMEOUT_MS,
      // Server-scope collectors and this database's own collectors share the main pool.
      max: main ? 2 : 1,
      idleTimeoutMillis: this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
      connectionTimeoutMillis: 5_000,
    });
    // An idle client's connection dying (server restart) is reported here; without a listener
    // it would crash the process. The next query or probe finds out what happened.
    const lost = (err: Error): void => {
      this.options.logger.debug({ target: this.options.target, database: db, err: errorMessage(err) }, 'connection lost');
    };
    pool.on('error', lost);
    // Also between queries of a checked-out client and after a broken one left the pool: a FATAL
    // (57P01 shutdown, 57P04 database dropped) arriving then is emitted on the client itself.
    pool.on('connect', (client) => {
      client.on('error', lost);
      this.timeouts.set(client, DEFAULT_TIMEOUT_MS);
    });
    this.pools.set(key, pool);
    return pool;
  }

  /** The DSN's database, known by name once probed: its pool moves to that name. */
  nameMain(datname: string): void {
    const pool = this.pool(null);
    this.mainDatabase = datname;
    this.pools.set(datname, pool);
    this.pools.delete(MAIN_POOL);
  }

  async query(pool: pg.Pool, sql: string, params: readonly unknown[] | undefined, timeoutMs: number): Promise<Record<string, unknown>[]> {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      if (this.timeouts.get(client) !== timeoutMs) {
        await client.query(`SET statement_timeout = ${Math.round(timeoutMs)}`);
        this.timeouts.set(client, timeoutMs);
      }
      // The client-side timeout only catches a server that stopped answering altogether.
      const config = { name: statementName(sql), text: sql, values: params as unknown[] | undefined, query_timeout: timeoutMs + 5_000, types: POLL_TYPES };
      const result = await client.query(config as pg.QueryConfig);
      return result.rows as Record<string, unknown>[];
    } catch (err) {
      if (isConnectionError(errorCode(err)) || errorCode(err) === 'client_timeout') broken = err as Error;
      throw err;
    } finally {
      client.release(broken);
    }
  }

  /** Closes a database's connections; the next pool(db) opens new ones. */
  async end(db: string): Promise<void> {
    const pool = this.pools.get(db);
    if (!pool) return;
    this.pools.delete(db);
    // pg-pool neither serves nor fails a request still queued when end() is called: let the
    // queued ones through first (on the connections already open: no new one is made).
    if (pool.waitingCount > 0) {
      await new Promise<void>((resolve) => {
        const drained = (): void => {
          if (pool.waitingCount > 0) return;
          for (const event of ['acquire', 'release', 'remove'] as const) pool.off(event, drained);
          resolve();
        };
        for (const event of ['acquire', 'release', 'remove'] as const) pool.on(event, drained);
      });
    }
    await pool.end().catch(() => undefined);
  }

  async endAll(): Promise<void> {
    await Promise.all([...this.pools.keys()].map((key) => this.end(key)));
  }

  private clientConfig(db: string | null): pg.ClientConfig {
    return databaseClientConfig(this.options.connection, db);
  }
}

/**
 * The target's connection, to database db (null: as configured). The database is a field of its
 * own, never put into a URL: names with any character (`:`, `/`, `?`, quotes, spaces) reach their
 * database. A dsn is read by pgClientConfig (which pins search_path); a config without one
 * already was (clientConfigFor).
 */
export function databaseClientConfig(connection: string | pg.ClientConfig, db: string | null): pg.ClientConfig {
  const { connectionString, ...fields } = typeof connection === 'string' ? { connectionString: connection } : connection;
  const config = connectionString === undefined ? fields : pgClientConfig(connectionString, fields);
  return db === null ? config : { ...config, database: db };
}

const INT8_OID = 20;

/** An int8 as a number when it is one exactly (every counter and size below 2^53), else its text. */
function parseInt8(text: string): number | string {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : text;
}

/**
 * node-postgres returns int8 as text, after a regex test of every value; a full poll cycle reads
 * ~40,000 of them, and the collectors turn them into numbers anyway (row.ts): this parser saves
 * about a fifth of the client's CPU for pg_stat_user_tables' rows.
 */
const POLL_TYPES = {
  getTypeParser: (oid: number, format?: 'text' | 'binary'): ((value: string) => unknown) =>
    oid === INT8_OID && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format),
};

const statementNames = new Map<string, string>();

/**
 * Every query runs as a named prepared statement (node-postgres prepares it once per
 * connection): planning the catalog joins cost more server CPU than executing them. The name is
 * a hash of the text, so one text always has one name. (Needs a direct connection or a pooler in
 * session mode.)
 */
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (!name) {
    name = `pgvigil_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`;
    statementNames.set(sql, name);
  }
  return name;
}
