/**
 * Read queries for the HTTP API and reports: events, series (downsampled by step), alerts with
 * their evidence. Owns no writes. Callers validate parameters; these functions trust them.
 */
import type { Alert, AnyLogEvent, EventKind, LogLevel } from '../domain/index.js';
import { OutboxTable, type OutboxRow } from '../notify/outbox-table.js';
import { alertFromRow, type AlertRow } from './alert-store.js';
import type { Db } from './open-store.js';
import { MINUTE_SPAN_MS, ReportMinutesTable, type ReportMinuteRow } from './report-minutes.js';
import { SEEN_STEP_MS } from './series-identity.js';
import { MAX_WINDOW_ALERTS, TooManySeriesError, type StoreReads, type StoredTransition, type StoredWindow, type WindowQuery } from './store-reads.js';

export interface EventQuery {
  fromMs: number;
  toMs: number;
  kind?: EventKind;
  database?: string;
  target?: string;
  limit: number;
}

export interface StoredEventView {
  id: number;
  target: string;
  tsMs: number;
  kind: EventKind;
  level: LogLevel;
  sqlstate: string | null;
  pid: number | null;
  database: string | null;
  user: string | null;
  message: string;
  details: unknown;
  sourceFile: string;
  sourceOffset: number;
  /** The catalog language the entry was read in; absent for English (LogEvent.language). */
  language?: string;
}

export interface SeriesQuery {
  name: string;
  /** Series whose labels include all of these. */
  labels: Record<string, string>;
  target?: string;
  fromMs: number;
  toMs: number;
  stepMs: number;
}

export interface SeriesView {
  target: string;
  labels: Record<string, string>;
  /** [tsMs, value]: the last sample of each step window (value null when the server reported NULL). */
  points: Array<[number, number | null]>;
}

export interface AlertQuery {
  state?: 'firing' | 'resolved';
  /** Alerts that were firing at some point in [fromMs, toMs]. */
  fromMs?: number;
  toMs?: number;
  limit: number;
}

export interface AlertDetail {
  alert: Alert;
  transitions: Array<{ tsMs: number; to: 'firing' | 'resolved' }>;
  incident: { dedupKey: string; state: 'firing' | 'resolved'; members: number } | null;
  /** The stored events the evidence names (those retention has not removed yet). */
  events: StoredEventView[];
  /** Notifications still in the outbox (pending or rejected); delivered ones are gone. */
  notifications: OutboxRow[];
}

/** A row of the events table as SQLite returns it. */
export interface EventRow {
  id: number;
  target: string;
  ts_ms: number;
  kind: string;
  level: string;
  sqlstate: string | null;
  pid: number | null;
  database: string | null;
  user_name: string | null;
  message: string;
  details: string;
  source_file: string;
  source_offset: number;
  language: string | null;
}

/** Evidence events an alert's detail lists. */
export const MAX_EVIDENCE_EVENTS = 200;

/** The reads of a sidecar's SQLite store; the API's StoreReads and what `pgvigil report` needs. */
export class StoreQueries implements StoreReads {
  private readonly outbox: OutboxTable;
  private readonly sql;

  constructor(private readonly db: Db, private readonly maxSeries = 1_000) {
    this.outbox = new OutboxTable(db);
    this.sql = {
      // Series seen since the window's start (seen_ms is coarse by SEEN_STEP_MS): index series_by_name_seen.
      seriesByName: db.prepare('SELECT id, target, labels, info FROM series WHERE name = ? AND seen_ms >= ?'),
      points: db.prepare(
        `SELECT max(ts_ms) AS ts_ms, value FROM samples WHERE series_id = ? AND ts_ms >= ? AND ts_ms <= ?
         GROUP BY (ts_ms - CAST(? AS INTEGER)) / CAST(? AS INTEGER) ORDER BY 1`,
      ),
      alertById: db.prepare('SELECT * FROM alerts WHERE id = ?'),
      transitions: db.prepare('SELECT ts_ms, to_state FROM alert_transitions WHERE alert_id = ? ORDER BY ts_ms, id'),
      incident: db.prepare(
        `SELECT i.dedup_key, i.state, (SELECT count(*) FROM alerts a WHERE a.incident_id = i.id) AS members
         FROM incidents i WHERE i.id = ?`,
      ),
    };
  }

  /**
   * The time of the oldest event, and of the newest event or sample (a sample's to the series'
   * seen_ms step); null when the store holds neither. Each reads one end of an index.
   */
  dataSpan(): { oldestEventMs: number | null; newestMs: number } | null {
    const row = this.db.prepare(
      'SELECT (SELECT min(ts_ms) FROM events) AS oldest, (SELECT max(ts_ms) FROM events) AS events, (SELECT max(seen_ms) FROM series) AS series',
    ).get() as { oldest: number | null; events: number | null; series: number | null };
    const known = [row.events, row.series].filter((ms): ms is number => ms !== null);
    return known.length === 0 ? null : { oldestEventMs: row.oldest, newestMs: Math.max(...known) };
  }

  /** Newest first. */
  events(query: EventQuery): StoredEventView[] {
    const { where, params } = conditions([
      ['ts_ms >= ?', query.fromMs], ['ts_ms <= ?', query.toMs],
      ['kind = ?', query.kind], ['database = ?', query.database], ['target = ?', query.target],
    ]);
    const rows = this.db
      .prepare(`SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY ts_ms DESC, id DESC LIMIT ?`)
      .all(...params, query.limit) as EventRow[];
    return rows.map(eventFromRow);
  }

  /**
   * Every event of a window in time order, as LogEvents with their ids, read row by row so a
   * long window does not sit in memory. Rows whose details are not JSON keep their text.
   */
  *eventsInOrder(query: { fromMs: number; toMs: number; target?: string }): Generator<{ id: number; event: AnyLogEvent }> {
    const { where, params } = conditions([['ts_ms >= ?', query.fromMs], ['ts_ms <= ?', query.toMs], ['target = ?', query.target]]);
    const rows = this.db.prepare(`SELECT * FROM events WHERE ${where.join(' AND ')} ORDER BY ts_ms, id`).iterate(...params) as IterableIterator<EventRow>;
    for (const row of rows) yield { id: row.id, event: logEventFromRow(row) };
  }

  /** The log report's stored minute rows that start in the window (report-minutes.ts), in the order they merge. */
  reportMinutes(query: { fromMs: number; toMs: number; target?: string }): Iterable<ReportMinuteRow> {
    return new ReportMinutesTable(this.db).inWindow(query);
  }

  /** Transitions of the given alerts, oldest first. */
  transitions(alertIds: readonly number[]): StoredTransition[] {
    if (alertIds.length === 0) return [];
    return this.db.prepare(`SELECT alert_id AS alertId, ts_ms AS tsMs, to_state AS toState FROM alert_transitions
      WHERE alert_id IN (${alertIds.map(() => '?').join(', ')}) ORDER BY ts_ms, id`).all(...alertIds) as StoredTransition[];
  }

  /**
   * Labels include the series' descriptive ones (series-identity.ts) as last sampled. Throws
   * TooManySeriesError when the name and labels match more than maxSeries series.
   */
  series(query: SeriesQuery): SeriesView[] {
    const wanted = Object.entries(query.labels);
    const pairs = (json: string | null) => (json === null ? [] : (JSON.parse(json) as Array<[string, string]>));
    const matches = (this.sql.seriesByName.all(query.name, query.fromMs - SEEN_STEP_MS) as Array<{ id: number; target: string; labels: string; info: string | null }>)
      .filter((s) => query.target === undefined || s.target === query.target)
      .map((s) => ({ id: s.id, target: s.target, labels: Object.fromEntries([...pairs(s.labels), ...pairs(s.info)]) }))
      .filter((s) => wanted.every(([key, value]) => s.labels[key] === value));
    if (matches.length > this.maxSeries) {
      throw new TooManySeriesError(`${matches.length} series match name ${query.name} and these labels; at most ${this.maxSeries} per request: add labels or a target`);
    }
    return matches.map((s) => ({
      target: s.target,
      labels: s.labels,
      points: (this.sql.points.all(s.id, query.fromMs, query.toMs, query.fromMs, query.stepMs) as Array<{ ts_ms: number; value: number | null }>)
        .map((p): [number, number | null] => [p.ts_ms, p.value]),
    }));
  }

  /** Newest first. */
  alerts(query: AlertQuery): Alert[] {
    const { where, params } = conditions([
      ['state = ?', query.state], ['started_ms <= ?', query.toMs], ['(resolved_ms IS NULL OR resolved_ms >= ?)', query.fromMs],
    ]);
    const sql = `SELECT * FROM alerts ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY started_ms DESC, id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...params, query.limit) as AlertRow[]).map(alertFromRow);
  }

  alert(id: number): AlertDetail | null {
    const row = this.sql.alertById.get(id) as AlertRow | undefined;
    if (!row) return null;
    const alert = alertFromRow(row);
    const incident = row.incident_id === null
      ? undefined
      : (this.sql.incident.get(row.incident_id) as { dedup_key: string; state: 'firing' | 'resolved'; members: number } | undefined);
    return {
      alert,
      transitions: (this.sql.transitions.all(id) as Array<{ ts_ms: number; to_state: 'firing' | 'resolved' }>)
        .map((t) => ({ tsMs: t.ts_ms, to: t.to_state })),
      incident: incident ? { dedupKey: incident.dedup_key, state: incident.state, members: incident.members } : null,
      events: this.eventsById(alert.evidence.eventIds.slice(0, MAX_EVIDENCE_EVENTS)),
      notifications: this.outbox.forAlert(id),
    };
  }

  /** Events and series are read when asked for: a long window's events never sit in memory. */
  reportWindow({ fromMs, toMs, target, stepMs }: WindowQuery): StoredWindow {
    const ofTarget = target === null ? {} : { target };
    const alerts = this.alerts({ fromMs, toMs, limit: MAX_WINDOW_ALERTS }).filter((a) => target === null || a.target === target);
    return {
      alerts,
      transitions: this.transitions(alerts.map((a) => a.id)).filter((t) => t.tsMs >= fromMs && t.tsMs <= toMs),
      events: this.eventsInOrder({ fromMs, toMs, ...ofTarget }),
      eventsLeftOut: 0,
      series: (name) => this.series({ name, labels: {}, ...ofTarget, fromMs, toMs, stepMs }),
      reportMinutes: this.reportMinutes({ fromMs: Math.floor(fromMs / MINUTE_SPAN_MS) * MINUTE_SPAN_MS, toMs, ...ofTarget }),
    };
  }

  private eventsById(ids: number[]): StoredEventView[] {
    if (ids.length === 0) return [];
    const rows = this.db.prepare(`SELECT * FROM events WHERE id IN (${ids.map(() => '?').join(',')}) ORDER BY ts_ms, id`).all(...ids) as EventRow[];
    return rows.map(eventFromRow);
  }
}

function logEventFromRow(row: EventRow): AnyLogEvent {
  return {
    kind: row.kind as EventKind, target: row.target, tsMs: row.ts_ms, pid: row.pid, database: row.database, user: row.user_name,
    level: row.level as LogLevel, sqlstate: row.sqlstate, message: row.message, details: decodeDetails(row.details),
    source: { file: row.source_file, offset: row.source_offset, line: null },
    ...(row.language !== null ? { language: row.language } : {}),
  } as AnyLogEvent;
}

function eventFromRow(row: EventRow): StoredEventView {
  return {
    id: row.id,
    target: row.target,
    tsMs: row.ts_ms,
    kind: row.kind as EventKind,
    level: row.level as LogLevel,
    sqlstate: row.sqlstate,
    pid: row.pid,
    database: row.database,
    user: row.user_name,
    message: row.message,
    details: decodeDetails(row.details),
    sourceFile: row.source_file,
    sourceOffset: row.source_offset,
    ...(row.language !== null ? { language: row.language } : {}),
  };
}

/** The writer stores JSON; a row damaged outside pgvigil shows its raw text instead of failing the request. */
function decodeDetails(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unreadable_details: text };
  }
}

/** SQL conditions with one parameter each; those whose value is undefined are left out. */
function conditions(candidates: ReadonlyArray<readonly [string, unknown]>): { where: string[]; params: unknown[] } {
  const given = candidates.filter(([, value]) => value !== undefined);
  return { where: given.map(([sql]) => sql), params: given.map(([, value]) => value) };
}
