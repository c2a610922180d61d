/**
 * The report's `sessions` section, from the lines log_connections and log_disconnections write
 * and the FATALs of refused logins (session-lines.ts):
 * - connections (`connection authorized`, replication ones too) per user, database, application
 *   and host (the host of the backend's `connection received` line, connection-hosts.ts); a
 *   login refused after that line (database or role missing, no CONNECT privilege, connection
 *   limits) still counts as a connection, and as `refused_after_authorization`;
 * - disconnections per user, database and host, with their session times (count, total, mean,
 *   max) per user and database;
 * - the peak of concurrent sessions (session-concurrency.ts says how, and what it cannot see);
 * - refused logins (authentication failures, pg_hba.conf, a missing or NOLOGIN role) per user,
 *   host and reason;
 * - per minute: connections, disconnections, refused logins and the most sessions open at once.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import {
  emptyHostLink, mergeHostLink, noteReceived, seeEvent, settleAwaiting, takeHost, type AwaitingHost, type HostLinkState,
} from './connection-hosts.js';
import { concurrencyFigures, mergeConcurrency, sessionDelta, type Concurrency } from './session-concurrency.js';
import { cappedEntry, emptyCappedMap, mergeCappedMap, type CappedMap } from './figures.js';
import { countInMinute, mergePerMinute, perMinuteRows, type MinuteRow, type PerMinute, type ReportLimits, type ReportSection } from './section.js';
import { sessionLine, type AuthFailureReason } from './session-lines.js';

/** The key under which names past `limits.maxKeys` are counted. */
export const OTHER_NAME = '(other)';
/** A connection or refused login whose host no line names; a refused login whose user none names. */
export const UNKNOWN_HOST = '(unknown)';
const UNKNOWN_USER = UNKNOWN_HOST;
/** A connection authorized without `application_name`. */
export const NO_APPLICATION = '(none)';
/** A replication connection's database. */
export const REPLICATION_DATABASE = '(replication)';

interface Tally {
  count: number;
  /** Session time, for disconnections; 0 elsewhere. */
  total_ms: number;
  max_ms: number;
}

type Tallies = CappedMap<Tally>;

const OUTCOME_CONNECTION = 'connection';
const OUTCOME_AUTH_FAILURE = 'auth_failure';

export interface SessionsState {
  received: number;
  connections: { total: number; replication: number; refused_after_authorization: number; by_user: Tallies; by_database: Tallies; by_application: Tallies; by_host: Tallies };
  disconnections: { total: Tally; by_user: Tallies; by_database: Tallies; by_host: Tallies };
  auth_failures: { total: number; by_user: Tallies; by_host: Tallies; by_reason: Tallies };
  hosts: HostLinkState;
  concurrency: Concurrency;
  per_minute: PerMinute;
}

export interface NameCount {
  name: string;
  count: number;
}

export interface SessionTimeRow {
  name: string;
  count: number;
  total_s: number;
  mean_s: number;
  max_s: number;
}

export interface SessionsResult {
  /** `connection received` lines: attempts, refused ones included. */
  received: number;
  connections: {
    total: number;
    replication: number;
    /** Logins refused after their `connection authorized` line: counted in total, never a session. */
    refused_after_authorization: number;
    by_user: NameCount[];
    by_database: NameCount[];
    by_application: NameCount[];
    by_host: NameCount[];
  };
  disconnections: { total: number; by_user: NameCount[]; by_database: NameCount[]; by_host: NameCount[] };
  session_time: {
    count: number;
    total_s: number;
    mean_s: number | null;
    max_s: number | null;
    by_user: SessionTimeRow[];
    by_database: SessionTimeRow[];
  };
  /**
   * The most sessions open at once, and the first minute it was reached; `opened_before_log`:
   * sessions that closed in the log without having opened in it (counted from its start). Null
   * without connection or disconnection lines.
   */
  peak_concurrent_sessions: { count: number; minute: string; opened_before_log: number } | null;
  auth_failures: { total: number; by_user: NameCount[]; by_host: NameCount[]; by_reason: NameCount[] };
  per_minute: MinuteRow[];
}

const PER_MINUTE_COUNTERS = ['connections', 'disconnections', 'auth_failures'] as const;

function emptyTally(): Tally {
  return { count: 0, total_ms: 0, max_ms: 0 };
}

function mergeTally(into: Tally, from: Tally): void {
  into.count += from.count;
  into.total_ms += from.total_ms;
  into.max_ms = Math.max(into.max_ms, from.max_ms);
}

/** Counts one (with its session time) under `name`, or under OTHER_NAME once `maxKeys` names are known. */
function tally(tallies: Tallies, name: string, limits: ReportLimits, sessionMs = 0): void {
  const entry = cappedEntry(tallies, name, limits.maxKeys, emptyTally) ?? (tallies.entries[OTHER_NAME] ??= emptyTally());
  mergeTally(entry, { count: 1, total_ms: sessionMs, max_ms: sessionMs });
}

function mergeTallies(earlier: Tallies, later: Tallies, limits: ReportLimits): void {
  mergeCappedMap(earlier, later, limits.maxKeys, mergeTally, (overflow) => mergeTally((earlier.entries[OTHER_NAME] ??= emptyTally()), overflow));
}

/** Where a login outcome's host is counted, once known. */
function countHost(state: SessionsState, awaiting: Pick<AwaitingHost, 'outcome'>, host: string | null, limits: ReportLimits): void {
  const into = awaiting.outcome === OUTCOME_CONNECTION ? state.connections.by_host : state.auth_failures.by_host;
  tally(into, host ?? UNKNOWN_HOST, limits);
}

function refusedAfterAuthorization(state: SessionsState, tsMs: number): void {
  state.connections.refused_after_authorization++;
  sessionDelta(state.concurrency, tsMs, -1);
}

function addLine(state: SessionsState, event: AnyLogEvent, limits: ReportLimits): void {
  const line = sessionLine(event);
  if (line === null) return;
  switch (line.kind) {
    case 'received':
      state.received++;
      noteReceived(state.hosts, event.pid, line.host, event.tsMs);
      return;
    case 'authorized': {
      const connections = state.connections;
      connections.total++;
      if (line.replication) connections.replication++;
      tally(connections.by_user, line.user, limits);
      tally(connections.by_database, line.database ?? REPLICATION_DATABASE, limits);
      tally(connections.by_application, line.application ?? NO_APPLICATION, limits);
      const host = takeHost(state.hosts, event.pid, event.tsMs, OUTCOME_CONNECTION, true);
      if (host !== undefined) countHost(state, { outcome: OUTCOME_CONNECTION }, host, limits);
      sessionDelta(state.concurrency, event.tsMs, 1);
      countInMinute(state.per_minute, event.tsMs, 'connections');
      return;
    }
    case 'disconnection': {
      const disconnections = state.disconnections;
      mergeTally(disconnections.total, { count: 1, total_ms: line.sessionMs, max_ms: line.sessionMs });
      tally(disconnections.by_user, line.user, limits, line.sessionMs);
      tally(disconnections.by_database, line.database, limits, line.sessionMs);
      tally(disconnections.by_host, line.host, limits, line.sessionMs);
      countInMinute(state.per_minute, event.tsMs, 'disconnections');
      sessionDelta(state.concurrency, event.tsMs, -1);
      return;
    }
    case 'auth_failure': {
      const failures = state.auth_failures;
      failures.total++;
      tally(failures.by_user, line.user ?? event.user ?? UNKNOWN_USER, limits);
      tally(failures.by_reason, line.reason satisfies AuthFailureReason, limits);
      const host = line.host ?? takeHost(state.hosts, event.pid, event.tsMs, OUTCOME_AUTH_FAILURE, false);
      if (host !== undefined) countHost(state, { outcome: OUTCOME_AUTH_FAILURE }, host, limits);
      countInMinute(state.per_minute, event.tsMs, 'auth_failures');
      if (line.afterAuthorization) refusedAfterAuthorization(state, event.tsMs);
      return;
    }
    case 'refused_after_authorization':
      refusedAfterAuthorization(state, event.tsMs);
      return;
  }
}

export const sessionsSection: ReportSection<SessionsState, SessionsResult> = {
  key: 'sessions',

  empty: () => ({
    received: 0,
    connections: { total: 0, replication: 0, refused_after_authorization: 0, by_user: emptyCappedMap(), by_database: emptyCappedMap(), by_application: emptyCappedMap(), by_host: emptyCappedMap() },
    disconnections: { total: emptyTally(), by_user: emptyCappedMap(), by_database: emptyCappedMap(), by_host: emptyCappedMap() },
    auth_failures: { total: 0, by_user: emptyCappedMap(), by_host: emptyCappedMap(), by_reason: emptyCappedMap() },
    hosts: emptyHostLink(),
    concurrency: {},
    per_minute: {},
  }),

  add(state, event, limits) {
    seeEvent(state.hosts, event.tsMs);
    addLine(state, event, limits);
  },

  merge(earlier, later, limits) {
    earlier.received += later.received;
    const [c, lc] = [earlier.connections, later.connections];
    c.total += lc.total;
    c.replication += lc.replication;
    c.refused_after_authorization += lc.refused_after_authorization;
    for (const dimension of ['by_user', 'by_database', 'by_application', 'by_host'] as const) mergeTallies(c[dimension], lc[dimension], limits);
    const [d, ld] = [earlier.disconnections, later.disconnections];
    mergeTally(d.total, ld.total);
    for (const dimension of ['by_user', 'by_database', 'by_host'] as const) mergeTallies(d[dimension], ld[dimension], limits);
    const [f, lf] = [earlier.auth_failures, later.auth_failures];
    f.total += lf.total;
    for (const dimension of ['by_user', 'by_host', 'by_reason'] as const) mergeTallies(f[dimension], lf[dimension], limits);
    mergeHostLink(earlier.hosts, later.hosts, (awaiting, host) => countHost(earlier, awaiting, host, limits));
    mergeConcurrency(earlier.concurrency, later.concurrency);
    mergePerMinute(earlier.per_minute, later.per_minute);
    return earlier;
  },

  result(state, limits) {
    // Outcomes still waiting for a host have none: counted on a copy, the state stays foldable.
    const settled = structuredClone(state);
    settleAwaiting(settled.hosts, (awaiting) => countHost(settled, awaiting, null, limits));
    const { connections, disconnections, auth_failures: failures } = settled;
    const concurrency = concurrencyFigures(state.concurrency, Object.keys(state.per_minute));
    const total = disconnections.total;
    return {
      received: state.received,
      connections: {
        total: connections.total,
        replication: connections.replication,
        refused_after_authorization: connections.refused_after_authorization,
        by_user: nameCounts(connections.by_user, limits),
        by_database: nameCounts(connections.by_database, limits),
        by_application: nameCounts(connections.by_application, limits),
        by_host: nameCounts(connections.by_host, limits),
      },
      disconnections: {
        total: total.count,
        by_user: nameCounts(disconnections.by_user, limits),
        by_database: nameCounts(disconnections.by_database, limits),
        by_host: nameCounts(disconnections.by_host, limits),
      },
      session_time: {
        count: total.count,
        total_s: total.total_ms / 1000,
        mean_s: total.count === 0 ? null : round3(total.total_ms / total.count / 1000),
        max_s: total.count === 0 ? null : total.max_ms / 1000,
        by_user: sessionTimeRows(disconnections.by_user, limits),
        by_database: sessionTimeRows(disconnections.by_database, limits),
      },
      peak_concurrent_sessions: concurrency.peak === null ? null : {
        count: concurrency.peak.count, minute: new Date(concurrency.peak.minuteMs).toISOString(), opened_before_log: concurrency.openedBeforeLog,
      },
      auth_failures: {
        total: failures.total,
        by_user: nameCounts(failures.by_user, limits),
        by_host: nameCounts(failures.by_host, limits),
        by_reason: nameCounts(failures.by_reason, limits),
      },
      per_minute: minuteRows(state.per_minute, concurrency.peakPerMinute),
    };
  },
};

function round3(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function byCountThenName<T extends { name: string; count: number }>(rows: T[]): T[] {
  return rows.sort((a, b) => b.count - a.count || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function nameCounts(tallies: Tallies, limits: ReportLimits): NameCount[] {
  return byCountThenName(Object.entries(tallies.entries).map(([name, { count }]) => ({ name, count }))).slice(0, limits.topN);
}

function sessionTimeRows(tallies: Tallies, limits: ReportLimits): SessionTimeRow[] {
  const rows = Object.entries(tallies.entries).map(([name, entry]) => ({
    name, count: entry.count, total_s: entry.total_ms / 1000, mean_s: round3(entry.total_ms / entry.count / 1000), max_s: entry.max_ms / 1000,
  }));
  return byCountThenName(rows).slice(0, limits.topN);
}

/** The counters' minutes, each with the most sessions open at once in it. */
function minuteRows(perMinute: PerMinute, peakPerMinute: Map<number, number>): MinuteRow[] {
  return perMinuteRows(perMinute, PER_MINUTE_COUNTERS).map((row) => ({ ...row, sessions_peak: peakPerMinute.get(Date.parse(row.minute))! }));
}
