/**
 * The poll scheduler's connections to one target, all databases together: never more than
 * `maxConnections` open at once (collectors.max_connections, default 3), and none opened unless
 * at least `minFreeConnections` slots stay free for ordinary roles after it.
 *
 * Work asks for a connection to a database (acquire) and gets it through one FIFO queue. A
 * connection already open to that database is handed on first, so two collectors due in the same
 * database share one visit; otherwise one opens in a free slot, or in place of the idle
 * connection used least recently (closed first, so the server never sees more than the budget).
 * An idle connection closes after `idleTimeoutMs`, or at once when another database needs its
 * slot: over more databases than slots, a connection lasts one visit. One slot is kept for the
 * main database (the probe, the DROP DATABASE check, server-wide collectors): its last connection
 * is never taken for another database.
 *
 * Measured on a PostgreSQL 15 with max_connections = 60 and 250 databases before this budget: a
 * pool per database, all visited at once, held 59 of the 60 slots and the server refused 40 of 40
 * sessions of an application.
 *
 * It never decides when or where to query, nor when to let go of a database: the scheduler
 * (poll-scheduler.ts) does. How one connection is configured is database-pools.ts'.
 */
import pg from 'pg';
import { DEFAULT_TIMEOUT_MS, POLL_LOCK_TIMEOUT_MS, POLLER_APPLICATION_NAME } from '../collectors/collector.js';
import type { Clock } from '../domain/index.js';
import type { Logger } from '../lib/logger.js';
import { errorCode, errorMessage, isConnectionError } from '../lib/pg-errors.js';
import { databaseClientConfig, POLL_TYPES, statementName } from './database-pools.js';

/** Longer than the default intervals, so a database's connection lasts from one visit to the next. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_CONNECTIONS = 3;
export const DEFAULT_MIN_FREE_CONNECTIONS = 5;
/** The error code of a connection not opened because the server was near full (errorCode()). */
export const SERVER_NEAR_FULL = 'server_near_full';
/** A failed room check is trusted this long: a full server is not asked again for every database. */
const NO_ROOM_RECHECK_MS = 1_000;

/**
 * Slots an ordinary role can still take, as an SQL expression: superuser_reserved_connections
 * (and from 16 reserved_connections, for roles with pg_use_reserved_connections) are not theirs.
 * Walsenders and background workers have slots of their own: only client backends count.
 */
export const AVAILABLE_SLOTS = `current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
       - coalesce(current_setting('reserved_connections', true)::int, 0) -- PG 16+: reserved_connections
       - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int`;
const AVAILABLE_SLOTS_SQL = `SELECT ${AVAILABLE_SLOTS} AS available`;

export interface ConnectionBudgetOptions {
  target: string;
  /** A postgres:// URL or a node-postgres ClientConfig; its database is the main database. */
  connection: string | pg.ClientConfig;
  clock: Clock;
  logger: Logger;
  idleTimeoutMs?: number;
  /** At least 2: one for the main database, one for visits. */
  maxConnections?: number;
  minFreeConnections?: number;
}

/** A connection lent to one piece of work; release() it when the work is done. */
export interface Lease {
  readonly database: string;
  query(sql: string, params: readonly unknown[] | undefined, timeoutMs: number): Promise<Record<string, unknown>[]>;
  release(): void;
}

export interface ConnectionStats {
  open: number;
  /** The most ever open at once. */
  peakOpen: number;
  /** Connections opened (each a backend start on the server). */
  connects: number;
  /** Connections not opened because the server was near full. */
  skippedConnects: number;
  /** The last room check failed and none has succeeded since. */
  skipping: boolean;
  /** Slots ordinary roles could still take at the last check; null before one. */
  availableSlots: number | null;
}

interface Connection {
  readonly client: pg.Client;
  /** The database; MAIN before the DSN's database is known by name. */
  key: string;
  busy: boolean;
  broken: boolean;
  /** Closed at release: its database was let go (DROP DATABASE and its kin). */
  doomed: boolean;
  statementTimeoutMs: number;
  lastUsedMs: number;
  idle: AbortController | null;
}

interface Waiter {
  key: string;
  urgent: boolean;
  resolve(connection: Connection): void;
  reject(err: Error): void;
}

const MAIN = '\u0000main';

class ServerNearFullError extends Error {
  readonly code = SERVER_NEAR_FULL;
}

export class ConnectionBudget {
  private readonly connections = new Set<Connection>();
  private waiters: Waiter[] = [];
  private mainDatabase = '';
  private readonly maxConnections: number;
  private readonly minFreeConnections: number;
  private lastNoRoomMs = -Infinity;
  private readonly counts: ConnectionStats = { open: 0, peakOpen: 0, connects: 0, skippedConnects: 0, skipping: false, availableSlots: null };

  constructor(private readonly options: ConnectionBudgetOptions) {
    this.maxConnections = Math.max(2, options.maxConnections ?? DEFAULT_MAX_CONNECTIONS);
    this.minFreeConnections = options.minFreeConnections ?? DEFAULT_MIN_FREE_CONNECTIONS;
  }

  get stats(): Readonly<ConnectionStats> {
    return { ...this.counts, open: this.connections.size };
  }

  /** The DSN's database, known by name once probed: its connections move to that name. */
  nameMain(datname: string): void {
    this.mainDatabase = datname;
    for (const c of this.connections) if (c.key === MAIN) c.key = datname;
    for (const w of this.waiters) if (w.key === MAIN) w.key = datname;
  }

  /**
   * A connection to db (null: the DSN's database), when the budget and the server allow one.
   * `urgent` work goes ahead of the rest, behind earlier urgent work: a lock wait sampled now must
   * not wait for a cycle over a thousand databases.
   */
  acquire(db: string | null, urgent = false): Promise<Lease> {
    const key = db ?? (this.mainDatabase || MAIN);
    return new Promise<Connection>((resolve, reject) => {
      const at = urgent ? this.waiters.findIndex((w) => !w.urgent) : -1;
      this.waiters.splice(at === -1 ? this.waiters.length : at, 0, { key, urgent, resolve, reject });
      this.dispatch();
    }).then((connection) => this.lease(connection));
  }

  /** One query on a connection to db, released after. */
  async query(db: string | null, sql: string, params: readonly unknown[] | undefined, timeoutMs: number): Promise<Record<string, unknown>[]> {
    const lease = await this.acquire(db);
    try {
      return await lease.query(sql, params, timeoutMs);
    } finally {
      lease.release();
    }
  }

  /** Closes a database's connections (a busy one when its work is done) and fails work waiting for it. */
  end(db: string): void {
    this.rejectWaiters((w) => w.key === db, `connection to database ${db} closed: the poller let go of it`);
    for (const c of this.connections) {
      if (c.key !== db) continue;
      if (c.busy) c.doomed = true;
      else void this.close(c);
    }
  }

  /**
   * Closes every connection, busy ones too (their work fails), and fails all waiting work: the
   * server went away, or the poller stops. They leave the budget at once, so reconnecting need
   * not wait for a socket stuck on a dead server.
   */
  async endAll(): Promise<void> {
    this.rejectWaiters(() => true, 'connection closed: the poller closed all its connections');
    await Promise.all([...this.connections].map((c) => this.close(c)));
  }

  // ------------------------------------------------------------ handing out

  private lease(connection: Connection): Lease {
    let released = false;
    return {
      database: connection.key,
      query: (sql, params, timeoutMs) => this.send(connection, sql, params, timeoutMs),
      release: () => {
        if (released) return;
        released = true;
        this.release(connection);
      },
    };
  }

  /**
   * Serves waiters in order: first every one a connection already open to its database can take
   * (two collectors due in one database share one visit), then opens for the rest while there is
   * room. A waiter whose database already has as many connections as it may have waits for one.
   */
  private dispatch(): void {
    for (const waiter of [...this.waiters]) {
      const idle = this.idleTo(waiter.key);
      if (idle) this.hand(waiter, idle);
    }
    for (const waiter of [...this.waiters]) {
      if (this.connectionsTo(waiter.key) >= this.perDatabaseMax(waiter.key)) continue;
      const room = this.roomFor(waiter.key);
      if (room) this.open(waiter, room);
    }
  }

  private hand(waiter: Waiter, connection: Connection): void {
    this.waiters.splice(this.waiters.indexOf(waiter), 1);
    connection.busy = true;
    connection.idle?.abort();
    connection.idle = null;
    waiter.resolve(connection);
  }

  private release(connection: Connection): void {
    connection.busy = false;
    connection.lastUsedMs = this.options.clock.monotonicMs();
    // Closed while lent (endAll): nothing to keep.
    if (!this.connections.has(connection)) return;
    if (connection.broken || connection.doomed) void this.close(connection);
    else this.closeWhenIdle(connection);
    this.dispatch();
  }

  private closeWhenIdle(connection: Connection): void {
    const idle = new AbortController();
    connection.idle = idle;
    void this.options.clock.sleep(this.options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS, idle.signal).then(() => {
      if (!idle.signal.aborted && !connection.busy) void this.close(connection);
    });
  }

  private idleTo(key: string): Connection | undefined {
    for (const c of this.connections) if (c.key === key && !c.busy) return c;
    return undefined;
  }

  private connectionsTo(key: string): number {
    let n = 0;
    for (const c of this.connections) if (c.key === key) n += 1;
    return n;
  }

  /** The main database may have two (the probe beside a server-wide collector); any other one. */
  private perDatabaseMax(key: string): number {
    return this.isMain(key) ? 2 : 1;
  }

  private isMain(key: string): boolean {
    return key === MAIN || key === this.mainDatabase;
  }

  /**
   * Where a new connection for key may go: a free slot (with an idle connection to check the
   * server's room on, when there is one), or an idle connection to evict (least recently used;
   * never the main database's last). Null: none now; the waiter waits for a release.
   */
  private roomFor(key: string): { evict: Connection | null; checkOn: Connection | null } | null {
    const mainOpen = [...this.connections].filter((c) => this.isMain(c.key)).length;
    // Without a connection to the main database, one slot stays free for it.
    const slots = this.isMain(key) || mainOpen > 0 ? this.maxConnections : this.maxConnections - 1;
    const idle = [...this.connections].filter((c) => !c.busy).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    if (this.connections.size < slots) {
      // The first connection has nothing to check on; any later one waits for an idle one to check on.
      if (this.connections.size === 0) return { evict: null, checkOn: null };
      const checkOn = idle[0];
      return checkOn ? { evict: null, checkOn } : null;
    }
    const evict = idle.find((c) => !(this.isMain(c.key) && mainOpen === 1));
    return evict ? { evict, checkOn: evict } : null;
  }

  /**
   * Opens a connection for waiter: the room check first (on checkOn), then the evicted one is
   * closed, then the new one connects. The new one takes its slot at once, so nothing else is
   * opened into it meanwhile.
   */
  private open(waiter: Waiter, room: { evict: Connection | null; checkOn: Connection | null }): void {
    this.waiters.splice(this.waiters.indexOf(waiter), 1);
    const { checkOn } = room;
    let { evict } = room;
    if (checkOn) {
      checkOn.busy = true;
      checkOn.idle?.abort();
    }
    if (evict) this.connections.delete(evict);
    const connection = this.newConnection(waiter.key);
    let checking = checkOn !== null && evict === null;
    const doneChecking = (): void => {
      if (!checking) return;
      checking = false;
      this.release(checkOn!);
    };
    void (async () => {
      try {
        if (checkOn) await this.checkRoom(checkOn, evict !== null);
        doneChecking();
        if (evict) await this.close(evict);
        evict = null;
        await connection.client.connect();
        this.counts.connects += 1;
        waiter.resolve(connection);
      } catch (err) {
        doneChecking();
        if (evict) void this.close(evict);
        void this.close(connection);
        waiter.reject(err as Error);
        this.dispatch();
      }
    })();
  }

  /**
   * Throws ServerNearFullError unless minFreeConnections slots stay free for ordinary roles once
   * the new connection is open (replacing one of pgvigil's, it takes the slot that one leaves).
   */
  private async checkRoom(on: Connection, replacing: boolean): Promise<void> {
    const nowMs = this.options.clock.monotonicMs();
    if (nowMs - this.lastNoRoomMs < NO_ROOM_RECHECK_MS) throw this.noRoom(this.counts.availableSlots ?? 0);
    const [row] = await this.send(on, AVAILABLE_SLOTS_SQL, undefined, DEFAULT_TIMEOUT_MS);
    const available = Number(row?.available);
    this.counts.availableSlots = available;
    if (available - (replacing ? 0 : 1) < this.minFreeConnections) {
      this.lastNoRoomMs = nowMs;
      throw this.noRoom(available);
    }
    if (this.counts.skipping) {
      this.counts.skipping = false;
      this.options.logger.info({ target: this.options.target, available, skipped: this.counts.skippedConnects },
        'the server has room again: opening connections for database visits');
    }
  }

  /** Counted, said once per streak; the idle connections to databases other than the main one are given back. */
  private noRoom(available: number): ServerNearFullError {
    this.counts.skippedConnects += 1;
    if (!this.counts.skipping) {
      this.counts.skipping = true;
      this.options.logger.warn({ target: this.options.target, available, min_free_connections: this.minFreeConnections },
        'the server is near max_connections: opening no connection, database visits are skipped until there is room');
    }
    for (const c of this.connections) if (!c.busy && !this.isMain(c.key)) void this.close(c);
    return new ServerNearFullError(`${this.options.target}: only ${available} connections are free for ordinary roles (collectors.min_free_connections is ${this.minFreeConnections}): no connection opened`);
  }

  private newConnection(key: string): Connection {
    const client = new pg.Client({
      ...databaseClientConfig(this.options.connection, key === MAIN ? null : key),
      application_name: POLLER_APPLICATION_NAME,
      // Sent at connect: collectors with the default timeout need no SET round trip.
      statement_timeout: DEFAULT_TIMEOUT_MS,
      lock_timeout: POLL_LOCK_TIMEOUT_MS,
      connectionTimeoutMillis: 5_000,
    });
    const connection: Connection = {
      client, key, busy: true, broken: false, doomed: false,
      statementTimeoutMs: DEFAULT_TIMEOUT_MS, lastUsedMs: this.options.clock.monotonicMs(), idle: null,
    };
    // An idle connection dying (server restart) is reported here; without a listener it would
    // crash the process. The next query or probe finds out what happened.
    client.on('error', (err) => {
      connection.broken = true;
      this.options.logger.debug({ target: this.options.target, database: key, err: errorMessage(err) }, 'connection lost');
      if (!connection.busy) void this.close(connection);
    });
    this.connections.add(connection);
    this.counts.peakOpen = Math.max(this.counts.peakOpen, this.connections.size);
    return connection;
  }

  private async send(connection: Connection, sql: string, params: readonly unknown[] | undefined, timeoutMs: number): Promise<Record<string, unknown>[]> {
    const { client } = connection;
    try {
      if (connection.statementTimeoutMs !== timeoutMs) {
        await client.query(`SET statement_timeout = ${Math.round(timeoutMs)}`);
        connection.statementTimeoutMs = timeoutMs;
      }
      // The client-side timeout only catches a server that stopped answering altogether.
      const config = { name: statementName(sql), text: sql, values: params as unknown[] | undefined, query_timeout: timeoutMs + 5_000, types: POLL_TYPES };
      const result = await client.query(config as pg.QueryConfig);
      return result.rows as Record<string, unknown>[];
    } catch (err) {
      const code = errorCode(err);
      if (isConnectionError(code) || code === 'client_timeout') connection.broken = true;
      throw err;
    }
  }

  private close(connection: Connection): Promise<void> {
    this.connections.delete(connection);
    connection.idle?.abort();
    connection.idle = null;
    return connection.client.end().catch(() => undefined);
  }

  private rejectWaiters(which: (w: Waiter) => boolean, message: string): void {
    const rejected = this.waiters.filter(which);
    this.waiters = this.waiters.filter((w) => !which(w));
    for (const w of rejected) w.reject(new Error(message));
  }
}
