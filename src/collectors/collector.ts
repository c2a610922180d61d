/**
 * Collectors: one per statistics view or concern, each turning the rows of its query into Samples.
 *
 * A collector owns its SQL (at the top of its file, version gates inline, `// PG 17+: ...`), a
 * pure row -> Sample mapping tested on recorded rows (test/fixtures/collector-rows/pg13..19), and
 * nothing else: it never connects, retries, schedules or writes to the store (the poll scheduler,
 * src/sources/poll-scheduler.ts, does), and it never needs more than `pg_monitor`
 * (docs/monitoring-role.md).
 *
 * Glossary
 * - target: a configured server, by name; becomes the `target` label on output.
 * - scope: `server` collectors run once per interval on the target's main database (their views
 *   are cluster-wide); `per-database` collectors run once per interval in every connectable
 *   database (pg_stat_user_tables and pg_class are per database), or, with
 *   `activeDatabasesSql`, only in those where a cluster-wide view shows something to report.
 * - version gate: `supports(server)` decides whether a collector runs at all; inside, the SQL is
 *   chosen by `server.versionNum` so every query only names columns that version has.
 */
import type { Sample } from '../domain/index.js';

/** What the poll scheduler learned about the server when it (re)connected. */
export interface ServerInfo {
  /** server_version_num, e.g. 180004 for 18.4 and 190000 for 19rc1. */
  versionNum: number;
  /** server_version as the server prints it, e.g. "18.4" or "19rc1". */
  version: string;
  /** pg_is_in_recovery(): a standby (or a server in archive recovery). */
  inRecovery: boolean;
  /** pg_postmaster_start_time() in epoch ms: a change means the server restarted. */
  startedAtMs: number;
}

/** One row as node-postgres returns it; collectors validate it through src/collectors/row.ts. */
export type Row = Record<string, unknown>;

export interface CollectContext {
  target: string;
  server: ServerInfo;
  /** The database the query runs in; set for per-database collectors. */
  database?: string;
  /** The instant samples are stamped with (taken when the collector run started). */
  nowMs: number;
  query(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** What a pure row -> Sample mapping needs: the context without the connection. */
export type MapContext = Omit<CollectContext, 'query'>;

export type MetricType = 'counter' | 'gauge';

/** Describes one series name a collector emits, for /metrics HELP/TYPE and the docs. */
export interface MetricDef {
  name: string;
  type: MetricType;
  help: string;
}

export interface Collector {
  /** snake_case; also its config key (`collectors.interval_ms.<name>`) and metric prefix. */
  name: string;
  intervalMs: number;
  /** Becomes statement_timeout for the collector's queries. */
  timeoutMs: number;
  scope: 'server' | 'per-database';
  /**
   * For a per-database collector of a cluster-wide view (pg_stat_activity, pg_locks, the
   * progress views) that needs its own database only to name tables: SQL returning the
   * `datname`s where it has anything to report, run once per interval on the main database.
   * Elsewhere collect() runs on no rows and no query is sent: nothing happening in 50 databases
   * costs one query, not 50.
   */
  activeDatabasesSql?(server: ServerInfo): string;
  supports(server: ServerInfo): boolean;
  collect(ctx: CollectContext): Promise<Sample[]>;
  /** Every series name the collector can emit. */
  metrics: readonly MetricDef[];
  /** Drops any history kept for a database that was dropped. */
  forget?(database: string): void;
}

/**
 * The statement_timeout of every collector unless it has a reason for another: the poller sets
 * statement_timeout on a connection only when the next collector's differs from the last one's,
 * so one shared value means no extra round trip per query.
 */
export const DEFAULT_TIMEOUT_MS = 5_000;

/**
 * The lock_timeout of every poll query. Collectors read catalogs and statistics; a query that
 * queues for a lock (behind a DDL waiting for ACCESS EXCLUSIVE, say) would itself block every
 * later query on that relation, so it gives up at once rather than join the queue.
 */
export const POLL_LOCK_TIMEOUT_MS = 1_000;

/** Interval and timeout overrides a collector factory accepts. */
export interface CollectorOptions {
  intervalMs?: number;
  timeoutMs?: number;
}

/**
 * application_name of pgvigil's own connections: activity-based collectors leave them out, so
 * the poller never reports itself as a long transaction or an xmin holder.
 */
export const POLLER_APPLICATION_NAME = 'pgvigil';

/** Major version of a server_version_num (180004 -> 18). */
export function majorVersion(server: Pick<ServerInfo, 'versionNum'>): number {
  return Math.floor(server.versionNum / 10_000);
}

/** The server role as operators say it. */
export function serverRole(server: Pick<ServerInfo, 'inRecovery'>): 'primary' | 'standby' {
  return server.inRecovery ? 'standby' : 'primary';
}
