/**
 * The poll scheduler: runs every collector (src/collectors/) against one target on its own
 * interval and hands their samples to the store writer in batches.
 *
 * It owns the connections (connection-budget.ts: at most collectors.max_connections to the
 * target, all databases together, and none opened while the server is near max_connections;
 * databases discovered from pg_database and refreshed, so databases created or dropped while
 * running are picked up, and picked by collectors.databases; statement_timeout per collector),
 * reconnecting with exponential backoff and jitter
 * (through the Clock) when the server goes away, and recognising it when it comes back, with its
 * role (a standby may have been promoted). While the server is away nothing is sampled: the gap
 * stays visible in the series, and `pg_up` reads 0. One failing collector never stops the others; errors are counted per
 * collector and code (`stats`). It keeps the latest sample of every series (`latest`) so
 * /metrics never has to query PostgreSQL.
 *
 * A per-database collector's run is one visit per database, each waiting in the budget's queue
 * for a connection: a visit holds one from its first query to its last, and visits of two
 * collectors due in one database share it. Connections are kept from one visit to the next
 * (idleTimeoutMs, 2 min) while the budget has room for every database: reconnecting on every
 * visit cost 2-3x the cycle's wall time (a backend start, authentication, and cold catalog caches
 * and plans for every query), and with log_connections on it fills the server log. Over more
 * databases than the budget, a connection lasts one visit. What a kept connection could break is DROP DATABASE, ALTER DATABASE ... RENAME or
 * SET TABLESPACE, and CREATE DATABASE ... TEMPLATE: each takes a lock on the database, waits 5 s
 * for every other session to leave it, then fails ("database ... is being accessed by other
 * users"); a connection opened to the database meanwhile counts too. So on a primary the poller
 * looks for those locks every second (WANTED_DATABASES_SQL), closes its connections to such a
 * database at once and stays away while the lock is there: the command goes through, a plain DROP
 * included. If it is the DSN's own database, the poller stays off the server for 6 s and then
 * reconnects (or says the database is gone). On a standby nothing of the kind runs: the replay of
 * a DROP ends the sessions in the database itself.
 *
 * It must never run SQL of its own beyond the probe, database discovery and the database lock
 * check below; catalogQuery lends its connections to the name cache (relation-names.ts).
 */
import type pg from 'pg';
import { connectionHint } from '../lib/pg-connection.js';
import type { Clock, Component, Sample } from '../domain/index.js';
import { labelsKey } from '../domain/index.js';
import type { Collector, MetricDef, ServerInfo } from '../collectors/collector.js';
import { DEFAULT_TIMEOUT_MS, serverRole } from '../collectors/collector.js';
import type { Logger } from '../lib/logger.js';
import { errorCode, errorMessage, isConnectionError, unreachableReason } from '../lib/pg-errors.js';
import { AVAILABLE_SLOTS, ConnectionBudget, SERVER_NEAR_FULL, type ConnectionStats, type Lease } from './connection-budget.js';
import { databaseMatcher, type DatabasePatterns } from './database-patterns.js';
import { describeRoleChange, roleChange, type RoleChange } from './role-change.js';

const UNDEFINED_OBJECT = '42704';

export interface SampleSink {
  /** `snapshot`: the run key (target, collector, database); `samples` are all that run's series. */
  enqueue(batch: { samples: Sample[]; snapshot?: string }): void;
}

export interface PollSchedulerOptions {
  target: string;
  /** A postgres:// URL or a node-postgres ClientConfig; its database is the main database. */
  connection: string | pg.ClientConfig;
  collectors: readonly Collector[];
  writer: SampleSink;
  clock: Clock;
  logger: Logger;
  /** Interval overrides in ms by collector name (config collectors.interval_ms). */
  intervals?: Readonly<Record<string, number>>;
  /** How often server role and the database list are re-read (default 10 s). */
  probeIntervalMs?: number;
  /**
   * Idle connections to a database close after this (default 2 min: longer than the default
   * intervals, so a database's connection lasts from one visit to the next). DROP DATABASE and
   * its kin do not wait for it: the database lock check releases their database at once.
   */
  idleTimeoutMs?: number;
  /** At most this many connections to the target, all databases together (default 3, at least 2). */
  maxConnections?: number;
  /** A connection is opened only if this many slots stay free for ordinary roles after it (default 5). */
  minFreeConnections?: number;
  /** Which databases per-database collectors visit (collectors.databases); default all. */
  databases?: DatabasePatterns;
  /** How often a primary is checked for sessions wanting a database to themselves (default 1 s). */
  databaseLockCheckMs?: number;
  reconnectInitialMs?: number;
  reconnectMaxMs?: number;
  /** For the jitter; tests pass a fixed one. */
  random?: () => number;
  /**
   * The role the previous run last stored for this target (in recovery or not), or null: a
   * failover while pgvigil was not running is then said, and notified, at the first connect.
   */
  storedInRecovery?: boolean | null;
}

export interface PollStatus {
  connected: boolean;
  lastError: string | null;
  server: ServerInfo | null;
}

export interface CollectorStats {
  runs: number;
  lastRunMs: number | null;
  lastDurationMs: number | null;
  lastSamples: number;
  errorsByCode: Record<string, number>;
  lastError: string | null;
  lastErrorMs: number | null;
  /** Runs skipped because the previous one was still going. */
  skippedOverlaps: number;
  /** Queries sent to the server for the collector: its own, and its active-database checks. */
  queries: number;
}

/** The series the scheduler itself emits on every probe (for /metrics HELP and TYPE). */
export const SCHEDULER_METRICS: readonly MetricDef[] = [
  { name: 'pg_up', type: 'gauge', help: '1 when the last probe of the server succeeded, 0 while it cannot be reached.' },
  { name: 'pgvigil_poll_unreachable_reason', type: 'gauge', help: 'While pg_up is 0: 1 for why the last attempt failed (refused, timeout, dns, auth, no_database, too_many_clients, starting_up, shutting_down, other).' },
  { name: 'pg_in_recovery', type: 'gauge', help: 'pg_is_in_recovery(): 1 on a standby.' },
  { name: 'pg_postmaster_start_timestamp_seconds', type: 'gauge', help: 'pg_postmaster_start_time(), epoch seconds: a change means a restart.' },
  { name: 'pg_connections_available', type: 'gauge', help: 'Connections ordinary roles can still open: max_connections less the reserved slots and the client backends.' },
  { name: 'pgvigil_poll_connections_open', type: 'gauge', help: "pgvigil's own connections to the target (at most collectors.max_connections)." },
  { name: 'pgvigil_poll_connects_skipped_total', type: 'counter', help: 'Connections pgvigil did not open: fewer than collectors.min_free_connections slots would have stayed free.' },
  { name: 'pgvigil_poll_connects_skipping', type: 'gauge', help: '1 while pgvigil opens no connection because the server is near max_connections.' },
];

/** How long a disconnect waits for the old pools to close before reconnecting anyway. */
const END_CONNECTIONS_WAIT_MS = 2_000;
/** How long stop() waits for each of its steps: the runs in flight, the connections closing. */
const STOP_WAIT_MS = 5_000;

/**
 * `work`, or STOP_WAIT_MS at most: a real timer, not the scheduler's clock, since a stop must end
 * whatever the clock (a manual one in tests stands still); unref'd, so it never holds the process.
 */
async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => { timer = setTimeout(resolve, ms); timer.unref(); });
  try {
    await Promise.race([work.then(() => undefined, () => undefined), bound]);
  } finally {
    clearTimeout(timer);
  }
}
/** How long a dropped database's rows are kept out of server-wide runs: far longer than one runs. */
const DROPPED_DATABASE_MEMORY_MS = 10 * 60_000;

const PROBE_SQL = `
SELECT current_setting('server_version_num')::int AS version_num, current_setting('server_version') AS version,
       pg_is_in_recovery() AS in_recovery, current_database() AS datname,
       (extract(epoch FROM pg_postmaster_start_time()) * 1000)::float8 AS started_at_ms,
       -- A primary's timeline, from the name of the WAL file it writes (a standby has none of its own).
       CASE WHEN NOT pg_is_in_recovery() THEN ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int END AS timeline_id,
       (${AVAILABLE_SLOTS}) AS available_slots`;
/**
 * Databases someone wants to themselves: DROP DATABASE and ALTER DATABASE ... RENAME / SET
 * TABLESPACE hold (or wait for) AccessExclusiveLock on the database object, CREATE DATABASE ...
 * TEMPLATE holds ShareLock on its template; then they wait up to 5 s for every other session to
 * leave. A session's own connect takes only RowExclusiveLock, for its first transaction.
 */
const WANTED_DATABASES_SQL = `
SELECT DISTINCT d.datname FROM pg_locks l JOIN pg_database d ON d.oid = l.objid
WHERE l.locktype = 'object' AND l.classid = 'pg_database'::regclass
  AND l.mode IN ('ShareLock', 'AccessExclusiveLock') AND l.pid <> pg_backend_pid()`;
/** Longer than the 5 s DROP DATABASE and its kin wait for the other sessions to leave. */
const MAIN_DATABASE_RELEASE_MS = 6_000;

// datconnlimit -2 marks a database left invalid by an interrupted DROP DATABASE (15.4+, 16+).
const DATABASES_SQL = `
SELECT datname FROM pg_database
WHERE datallowconn AND NOT datistemplate AND datconnlimit <> -2 AND has_database_privilege(datname, 'CONNECT')
ORDER BY datname`;

export class PollScheduler implements Component {
  readonly name: string;
  private readonly options: PollSchedulerOptions;
  private running = false;
  private abort = new AbortController();
  private generation = 0;
  private mainDatabase = '';
  private databases: string[] = [];
  private readonly connections: ConnectionBudget;
  private readonly visitsDatabase: (datname: string) => boolean;
  private timers: Array<{ cancel(): void }> = [];
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly collectorStats = new Map<string, CollectorStats>();
  /** The samples of each collector's last run per database: replacing a run's array is O(1). */
  private readonly runSamples = new Map<string, Sample[]>();
  /**
   * Databases seen dropped, with when: a server-wide run that was in flight during the drop still
   * returns their rows, which must not bring them back. Forgotten when one of the name is created
   * again, or after DROPPED_DATABASE_MEMORY_MS, longer than any run lasts (a server that creates
   * and drops databases all day must not grow this).
   */
  private readonly droppedDatabases = new Map<string, number>();
  private latestView: Map<string, Sample> | null = null;
  private readonly lastErrorCode = new Map<string, string>();
  private readonly statusListeners: Array<(status: PollStatus) => void> = [];
  private readonly roleListeners: Array<(change: RoleChange) => void> = [];
  private currentStatus: PollStatus = { connected: false, lastError: null, server: null };
  private reconnecting: Promise<void> | null = null;
  private probing: Promise<void> | null = null;
  private checkingLocks: Promise<void> | null = null;
  /** Databases a session wants to itself (WANTED_DATABASES_SQL): not visited meanwhile. */
  private wanted = new Set<string>();
  /** While the DSN's own database is wanted, nothing at all runs until then. */
  private mainReleasedUntilMs = -Infinity;

  constructor(options: PollSchedulerOptions) {
    this.options = options;
    this.connections = new ConnectionBudget(options);
    this.visitsDatabase = databaseMatcher(options.databases ?? { include: [], exclude: [] });
    this.name = `poll-scheduler:${options.target}`;
    for (const c of options.collectors) this.collectorStats.set(c.name, emptyStats());
  }

  get status(): PollStatus {
    return this.currentStatus;
  }

  /** Called on every connect, disconnect and role change; returns an unsubscribe function. */
  onStatus(listener: (status: PollStatus) => void): () => void {
    this.statusListeners.push(listener);
    return () => {
      const i = this.statusListeners.indexOf(listener);
      if (i >= 0) this.statusListeners.splice(i, 1);
    };
  }

  get stats(): ReadonlyMap<string, Readonly<CollectorStats>> {
    return this.collectorStats;
  }

  /**
   * The latest sample of every series, keyed by name + labelsKey. Built when asked (and kept
   * until the next run lands), so polling costs nothing per sample for it.
   */
  get latest(): ReadonlyMap<string, Sample> {
    if (!this.latestView) {
      this.latestView = new Map();
      for (const samples of this.runSamples.values()) {
        for (const s of samples) this.latestView.set(`${s.name}\u0000${labelsKey(s.labels)}`, s);
      }
    }
    return this.latestView;
  }

  get knownDatabases(): readonly string[] {
    return this.databases;
  }

  /**
   * Catalog SQL for relation-names.ts on the poller's own connections (no extra backends), in a
   * database by name (null: the DSN's). Refused while disconnected, and for a database that is
   * gone or that a session wants to itself (DROP DATABASE): like the collectors, it stays away.
   */
  async catalogQuery(db: string | null, sql: string, params: readonly unknown[]): Promise<Record<string, unknown>[]> {
    const database = db ?? this.mainDatabase;
    if (!this.currentStatus.connected || !this.databases.includes(database) || !this.visitable(database)) {
      throw new Error(`${this.options.target}: database ${database || '(main)'} is not being polled now`);
    }
    return this.connections.query(database, sql, params, DEFAULT_TIMEOUT_MS);
  }

  /** Resolves after the first connection attempt; retries go on in the background. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.abort = new AbortController();
    this.reconnecting = this.reconnectLoop();
    await Promise.race([this.reconnecting, this.firstAttempt]);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    this.cancelTimers();
    // Runs in flight end by their statement_timeout; one still waiting for a connection the budget
    // will not hand out again (CI saw a stop hang 3 min) ends once the connections close under it.
    const settled = Promise.all([this.reconnecting, this.whenIdle()]);
    await settledWithin(settled, STOP_WAIT_MS);
    await settledWithin(this.connections.endAll(), STOP_WAIT_MS);
    await settledWithin(settled, STOP_WAIT_MS);
  }

  /** Resolves when no collector run is in flight. */
  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight.values());
  }

  /** Runs every collector the server supports (or those `only` picks) once, now (tests, benchmarks). */
  async runOnce(only: (c: Collector) => boolean = () => true): Promise<void> {
    await Promise.all(this.activeCollectors().filter(only).map((c) => this.runCollector(c)));
  }

  // ---------------------------------------------------------------- connecting

  private resolveFirstAttempt: () => void = () => {};
  private readonly firstAttempt = new Promise<void>((resolve) => { this.resolveFirstAttempt = resolve; });

  private async reconnectLoop(): Promise<void> {
    for (let attempt = 0; this.running; attempt++) {
      try {
        await this.connect();
        this.resolveFirstAttempt();
        return;
      } catch (err) {
        const message = `${errorCode(err)}: ${errorMessage(err)}`;
        const retryInMs = Math.round(this.backoffMs(attempt));
        // Said again when the error changes, and every 10th attempt, so a long outage stays visible without flooding.
        if (attempt % 10 === 0 || message !== this.currentStatus.lastError) {
          this.options.logger.warn({ target: this.options.target, err: message, attempt: attempt + 1, retryInMs, hint: connectionHint(err) }, 'cannot connect; retrying with backoff');
        }
        await this.endAllConnections();
        // Status, then the sleep, in one tick: whoever hears of the failed attempt finds the
        // retry already scheduled on the clock.
        this.emitUp(0, err);
        this.setStatus({ connected: false, lastError: message, server: this.currentStatus.server });
        this.resolveFirstAttempt();
        await this.options.clock.sleep(retryInMs, this.abort.signal);
      }
    }
  }

  /**
   * Closes every connection, but never waits long: one stuck on a dead socket must not keep the
   * poller from reconnecting (seen with pg-pool: no reconnect 20 s after a restart of the server).
   * They leave the budget at once, so reconnecting opens new ones while the old end in the background.
   */
  private endAllConnections(): Promise<void> {
    return Promise.race([this.connections.endAll(), this.options.clock.sleep(END_CONNECTIONS_WAIT_MS, this.abort.signal)]);
  }

  private backoffMs(attempt: number): number {
    const initial = this.options.reconnectInitialMs ?? 500;
    const max = this.options.reconnectMaxMs ?? 30_000;
    const base = Math.min(max, initial * 2 ** Math.min(attempt, 20));
    return base * (0.5 + (this.options.random ?? Math.random)() / 2);
  }

  private async connect(): Promise<void> {
    const previous = this.currentStatus.server;
    // The DSN's database is known by name only once the probe has run: its pool moves there.
    const { server, datname, timelineId, availableSlots } = await this.probe(null);
    this.mainDatabase = datname;
    this.connections.nameMain(datname);
    await this.refreshDatabases();
    this.generation += 1;
    // The first connect compares with what the previous run stored; a reconnect with this run's probe.
    const stored = this.options.storedInRecovery ?? null;
    this.sayRoleChange(previous ?? (stored === null ? null : { inRecovery: stored }), server, timelineId, previous === null);
    this.logConnected(server, previous !== null && previous.startedAtMs !== server.startedAtMs);
    this.setStatus({ connected: true, lastError: null, server });
    this.emitServer(server, availableSlots);
    this.schedule();
  }

  /** The line the daemon's operators look for: "connected to db1 (PostgreSQL 18.4, primary)". */
  private logConnected(server: ServerInfo, restarted: boolean): void {
    this.options.logger.info(
      { target: this.options.target, restarted, databases: this.databases.length },
      `connected to ${this.options.target} (PostgreSQL ${server.version.split(' ')[0]}, ${serverRole(server)})`,
    );
  }

  /** Promoted, or back as a standby: said once, as a warning (the change a failover makes), and told to the listeners. */
  private sayRoleChange(before: Pick<ServerInfo, 'inRecovery'> | null, after: ServerInfo, timelineId: number | null, sinceLastRun = false): void {
    const change = roleChange(before, after, timelineId, sinceLastRun);
    if (!change) return;
    this.options.logger.warn({ target: this.options.target, ...change }, describeRoleChange(this.options.target, change));
    for (const listener of this.roleListeners) listener(change);
  }

  /** Called when a probe finds the server's role changed (not on the first connect). */
  onRoleChange(listener: (change: RoleChange) => void): void {
    this.roleListeners.push(listener);
  }

  private async probe(db: string | null): Promise<{ server: ServerInfo; datname: string; timelineId: number | null; availableSlots: number }> {
    const [row] = await this.connections.query(db, PROBE_SQL, undefined, DEFAULT_TIMEOUT_MS);
    if (!row) throw new Error('the probe query returned no row');
    return {
      datname: String(row.datname),
      timelineId: row.timeline_id === null || row.timeline_id === undefined ? null : Number(row.timeline_id),
      availableSlots: Number(row.available_slots),
      server: {
        versionNum: Number(row.version_num),
        version: String(row.version),
        inRecovery: row.in_recovery === true,
        startedAtMs: Number(row.started_at_ms),
      },
    };
  }

  /** Re-reads role and databases; a changed role reschedules, a failure starts reconnecting. */
  private probeNow(): Promise<void> {
    // Returned before the IIFE: one that ends without awaiting would reset `probing` before
    // `??=` assigns it, leaving a settled promise there for good.
    if (this.mainReleased()) return Promise.resolve();
    this.probing ??= (async () => {
      try {
        const { server, timelineId, availableSlots } = await this.probe(this.mainDatabase);
        await this.refreshDatabases();
        // Compared with the server as known now, not when the probe began: a reconnect may have
        // found the restarted server meanwhile (a probe can wait for a connection of the budget),
        // and it has said so; saying it again is a second "connected" for one restart.
        const before = this.currentStatus.server;
        this.emitServer(server, availableSlots);
        if (before && (before.inRecovery !== server.inRecovery || before.startedAtMs !== server.startedAtMs)) {
          this.logConnected(server, before.startedAtMs !== server.startedAtMs);
          this.sayRoleChange(before, server, timelineId);
          // Runs still in flight were for the old role: their samples are dropped.
          this.generation += 1;
          this.setStatus({ connected: true, lastError: null, server });
          this.schedule();
        }
      } catch (err) {
        // 3D000 here: the DSN's own database is gone (dropped or renamed).
        const code = errorCode(err);
        if ((isConnectionError(code) || code === '3D000') && this.running) this.disconnected(err);
      } finally {
        this.probing = null;
      }
    })();
    return this.probing;
  }

  /** Closes connections to databases a session wants to itself; see WANTED_DATABASES_SQL. */
  private checkDatabaseLocks(): Promise<void> {
    if (this.mainReleased()) return Promise.resolve();
    this.checkingLocks ??= (async () => {
      try {
        const rows = await this.connections.query(this.mainDatabase, WANTED_DATABASES_SQL, undefined, DEFAULT_TIMEOUT_MS);
        const wanted = new Set(rows.map((r) => String(r.datname)));
        for (const db of wanted) if (!this.wanted.has(db)) this.release(db);
        const freed = [...this.wanted].some((db) => !wanted.has(db));
        this.wanted = wanted;
        // Dropped, renamed, or still there: the database list says which.
        if (freed) void this.probeNow();
      } catch (err) {
        // A missed check is retried next time; a lost server is the probe's to notice.
        const code = errorCode(err);
        if (isConnectionError(code) || code === '3D000') void this.probeNow();
      } finally {
        this.checkingLocks = null;
      }
    })();
    return this.checkingLocks;
  }

  private release(db: string): void {
    this.options.logger.info({ target: this.options.target, database: db },
      'a session wants the database to itself (DROP, RENAME, SET TABLESPACE or TEMPLATE of it); closing connections to it');
    if (db === this.mainDatabase) this.mainReleasedUntilMs = this.options.clock.monotonicMs() + MAIN_DATABASE_RELEASE_MS;
    this.connections.end(db);
  }

  private mainReleased(): boolean {
    return this.options.clock.monotonicMs() < this.mainReleasedUntilMs;
  }

  /** Whether a database may be visited now. */
  private visitable(db: string): boolean {
    return !this.wanted.has(db) && !this.mainReleased();
  }

  private disconnected(err: unknown): void {
    if (!this.currentStatus.connected) return;
    const message = `${errorCode(err)}: ${errorMessage(err)}`;
    this.options.logger.warn({ target: this.options.target, err: message }, `lost ${this.options.target}; reconnecting`);
    this.cancelTimers();
    this.generation += 1;
    // Stale values must not be served as current: only pg_up survives the gap.
    for (const c of this.options.collectors) this.forgetRuns(`${c.name}\u0000`);
    this.setStatus({ connected: false, lastError: message, server: this.currentStatus.server });
    this.emitUp(0, err);
    void this.endAllConnections().then(() => {
      if (this.running) this.reconnecting = this.reconnectLoop();
    });
  }

  private async refreshDatabases(): Promise<void> {
    const rows = await this.connections.query(this.mainDatabase || null, DATABASES_SQL, undefined, DEFAULT_TIMEOUT_MS);
    const found = rows.map((r) => String(r.datname));
    const nowMs = this.options.clock.nowMs();
    for (const [name, droppedMs] of this.droppedDatabases) {
      if (found.includes(name) || nowMs - droppedMs > DROPPED_DATABASE_MEMORY_MS) this.droppedDatabases.delete(name);
    }
    for (const gone of this.databases.filter((d) => !found.includes(d))) {
      this.options.logger.info({ target: this.options.target, database: gone }, 'database gone; no longer polled');
      this.droppedDatabases.set(gone, nowMs);
      for (const c of this.options.collectors) {
        c.forget?.(gone);
        // An empty run: its series leave latest and, through the sink, /metrics.
        this.accept(`${c.name}\u0000${gone}`, []);
      }
      this.forgetDatabaseSeries(gone);
      if (gone !== this.mainDatabase) this.connections.end(gone);
    }
    for (const added of found.filter((d) => !this.databases.includes(d))) {
      if (this.databases.length > 0) this.options.logger.info({ target: this.options.target, database: added }, 'new database; polling it');
    }
    this.databases = found;
  }

  // ---------------------------------------------------------------- scheduling

  private activeCollectors(): Collector[] {
    const server = this.currentStatus.server;
    if (!server || !this.currentStatus.connected) return [];
    return this.options.collectors.filter((c) => c.supports(server));
  }

  private schedule(): void {
    this.cancelTimers();
    const { clock } = this.options;
    const active = this.activeCollectors();
    // Series of collectors the server no longer supports (a promoted standby's) leave latest and
    // /metrics: an empty run wherever they ran.
    for (const c of this.options.collectors.filter((c) => !active.includes(c))) {
      this.forgetRuns(`${c.name}\u0000`);
      for (const db of c.scope === 'server' ? [this.mainDatabase] : this.databases) this.accept(`${c.name}\u0000${db}`, []);
    }
    for (const c of active) {
      const intervalMs = this.options.intervals?.[c.name] ?? c.intervalMs;
      this.timers.push(clock.setInterval(() => void this.runCollector(c), intervalMs));
      void this.runCollector(c);
    }
    this.timers.push(clock.setInterval(() => void this.probeNow(), this.options.probeIntervalMs ?? 10_000));
    // A standby needs no check: replaying a DROP ends the sessions in the database itself.
    if (this.currentStatus.server?.inRecovery === false) {
      this.timers.push(clock.setInterval(() => void this.checkDatabaseLocks(), this.options.databaseLockCheckMs ?? 1_000));
    }
  }

  private cancelTimers(): void {
    for (const t of this.timers) t.cancel();
    this.timers = [];
  }

  private runCollector(c: Collector): Promise<void> {
    const running = this.inFlight.get(c.name);
    if (running) {
      this.statsOf(c.name).skippedOverlaps += 1;
      return running;
    }
    const run = this.runEverywhere(c).finally(() => this.inFlight.delete(c.name));
    this.inFlight.set(c.name, run);
    return run;
  }

  private async runEverywhere(c: Collector): Promise<void> {
    const server = this.currentStatus.server;
    if (!server) return;
    const generation = this.generation;
    const started = performance.now();
    const databases = (c.scope === 'server' ? [this.mainDatabase] : this.databases.filter(this.visitsDatabase)).filter((db) => this.visitable(db));
    const active = await this.activeDatabases(c, server);
    const counts = await Promise.all(databases.map((db) => this.runIn(c, db, server, generation, active?.has(db) ?? true)));
    const stats = this.statsOf(c.name);
    stats.runs += 1;
    stats.lastRunMs = this.options.clock.nowMs();
    stats.lastDurationMs = performance.now() - started;
    stats.lastSamples = counts.reduce((a, b) => a + b, 0);
  }

  /**
   * Where a collector with activeDatabasesSql has anything to report; null: ask every database
   * (no such SQL, or the check failed: counted like a failed run).
   */
  private async activeDatabases(c: Collector, server: ServerInfo): Promise<Set<string> | null> {
    if (c.scope !== 'per-database' || !c.activeDatabasesSql) return null;
    try {
      this.statsOf(c.name).queries += 1;
      const rows = await this.connections.query(this.mainDatabase, c.activeDatabasesSql(server), undefined, c.timeoutMs);
      return new Set(rows.map((r) => String(r.datname)));
    } catch (err) {
      this.failed(c, this.mainDatabase, `${c.name}\u0000\u0000active`, err);
      return null;
    }
  }

  /**
   * One visit: the connection is asked for at the first query and kept to the last, so a
   * collector's queries never queue behind other databases' visits. `active` false: the
   * cluster-wide check saw nothing here, so the collector maps no rows and no connection is asked for.
   */
  private async runIn(c: Collector, db: string, server: ServerInfo, generation: number, active: boolean): Promise<number> {
    const runKey = `${c.name}\u0000${db}`;
    const stats = this.statsOf(c.name);
    let lease: Promise<Lease> | null = null;
    try {
      const collectOnce = (): Promise<Sample[]> => c.collect({
        target: this.options.target,
        server,
        ...(c.scope === 'per-database' ? { database: db } : {}),
        nowMs: this.options.clock.nowMs(),
        query: async (sql, params) => {
          if (!active) return [];
          stats.queries += 1;
          // Collectors of what is happening now (lock waits, progress) go ahead of the table statistics.
          lease ??= this.connections.acquire(db, c.activeDatabasesSql !== undefined);
          return (await lease).query(sql, params, c.timeoutMs);
        },
      });
      // 42704: an object (a database for pg_database_size) dropped between the statement's
      // catalog snapshot and a function's lookup of it. A new statement no longer lists it.
      const samples = await collectOnce().catch((err: unknown) => {
        if (errorCode(err) !== UNDEFINED_OBJECT) throw err;
        return collectOnce();
      });
      // Rows from before a disconnect or role change are dropped, not stored late; so are those
      // of a per-database run that ended after its database was dropped and forgotten.
      if (generation !== this.generation || !this.running) return 0;
      if (c.scope === 'per-database' && !this.databases.includes(db)) return 0;
      this.accept(runKey, this.droppedDatabases.size === 0 ? samples : samples.filter((s) => !this.droppedDatabases.has(s.labels.datname ?? '')));
      if (this.lastErrorCode.delete(runKey)) {
        this.options.logger.info({ target: this.options.target, collector: c.name, database: db }, 'collector recovered');
      }
      return samples.length;
    } catch (err) {
      this.failed(c, db, runKey, err);
      return 0;
    } finally {
      void (lease as Promise<Lease> | null)?.then((l) => l.release(), () => undefined);
    }
  }

  private failed(c: Collector, db: string, runKey: string, err: unknown): void {
    const code = errorCode(err);
    const stats = this.statsOf(c.name);
    stats.errorsByCode[code] = (stats.errorsByCode[code] ?? 0) + 1;
    stats.lastError = `${db}: ${errorMessage(err)}`;
    stats.lastErrorMs = this.options.clock.nowMs();
    // A server near full is said once per streak, by the budget, not once per database.
    if (this.lastErrorCode.get(runKey) !== code && code !== SERVER_NEAR_FULL) {
      this.options.logger.warn({ target: this.options.target, collector: c.name, database: db, code, err: errorMessage(err) }, 'collector failed');
    }
    this.lastErrorCode.set(runKey, code);
    // What the run said before it failed is no longer current (this run only: a prefix would
    // also take database shop2's runs with shop's).
    this.runSamples.delete(runKey);
    this.latestView = null;
    // The server, or just this database (dropped: 3D000, or 55000 while being dropped, or
    // terminated by DROP ... FORCE)? The probe, which also refreshes the databases, says.
    if (isConnectionError(code) || code === '3D000' || code === '55000') void this.probeNow();
  }

  /**
   * A run's samples replace that run's previous ones: a series it no longer emits leaves latest,
   * and /metrics too (the batch is marked a snapshot; empty ones are sent for that). A failed or
   * skipped run never gets here, so it changes nothing there.
   */
  private accept(runKey: string, samples: Sample[]): void {
    if (samples.length > 0) this.runSamples.set(runKey, samples);
    else this.runSamples.delete(runKey);
    this.latestView = null;
    this.options.writer.enqueue({ samples, snapshot: `${this.options.target}\u0000${runKey}` });
  }

  /**
   * Removes a dropped database's series that server-wide collectors reported (pg_database_size
   * runs every 5 minutes: its last sample must not outlive the database that long).
   */
  /**
   * Removes a dropped database's series from the other runs (server-wide collectors report every
   * database) and resends those runs without them, so /metrics loses them at once. The store
   * keeps one row per series and time, so the resent samples replace themselves.
   */
  private forgetDatabaseSeries(datname: string): void {
    for (const [runKey, samples] of [...this.runSamples]) {
      if (samples.some((s) => s.labels.datname === datname)) this.accept(runKey, samples.filter((s) => s.labels.datname !== datname));
    }
  }

  /** Removes from latest the series of the runs whose key starts with prefix. */
  private forgetRuns(prefix: string): void {
    for (const runKey of this.runSamples.keys()) if (runKey.startsWith(prefix)) this.runSamples.delete(runKey);
    this.latestView = null;
  }

  private emitServer(server: ServerInfo, availableSlots: number): void {
    const tsMs = this.options.clock.nowMs();
    const target = this.options.target;
    const connections = this.connections.stats;
    this.accept(PROBE_RUN, [
      { target, name: 'pg_up', labels: {}, tsMs, value: 1 },
      { target, name: 'pg_in_recovery', labels: {}, tsMs, value: server.inRecovery ? 1 : 0 },
      { target, name: 'pg_postmaster_start_timestamp_seconds', labels: {}, tsMs, value: server.startedAtMs / 1000 },
      { target, name: 'pg_connections_available', labels: {}, tsMs, value: availableSlots },
      { target, name: 'pgvigil_poll_connections_open', labels: {}, tsMs, value: connections.open },
      { target, name: 'pgvigil_poll_connects_skipped_total', labels: {}, tsMs, value: connections.skippedConnects },
      { target, name: 'pgvigil_poll_connects_skipping', labels: {}, tsMs, value: connections.skipping ? 1 : 0 },
    ]);
  }

  /** pgvigil's connections to the target: how many, the peak, how many were opened or skipped. */
  get connectionStats(): Readonly<ConnectionStats> {
    return this.connections.stats;
  }

  /** `failure`: why the server could not be reached, said beside pg_up = 0 (the server-unreachable rule names it). */
  private emitUp(value: 0 | 1, failure?: unknown): void {
    const tsMs = this.options.clock.nowMs();
    const target = this.options.target;
    // While down, pg_in_recovery and the start time are unknown: only pg_up and the reason are said.
    const reason = failure === undefined ? [] : [{ target, name: 'pgvigil_poll_unreachable_reason', labels: { reason: unreachableReason(errorCode(failure)) }, tsMs, value: 1 }];
    this.accept(PROBE_RUN, [{ target, name: 'pg_up', labels: {}, tsMs, value }, ...reason]);
  }

  private statsOf(name: string): CollectorStats {
    let stats = this.collectorStats.get(name);
    if (!stats) {
      stats = emptyStats();
      this.collectorStats.set(name, stats);
    }
    return stats;
  }

  private setStatus(status: PollStatus): void {
    this.currentStatus = status;
    for (const listener of this.statusListeners) listener(status);
  }
}

const PROBE_RUN = '\u0000probe';

function emptyStats(): CollectorStats {
  return {
    runs: 0, lastRunMs: null, lastDurationMs: null, lastSamples: 0,
    errorsByCode: {}, lastError: null, lastErrorMs: null, skippedOverlaps: 0, queries: 0,
  };
}
