/**
 * The API's reads (StoreReads) from the central PostgreSQL store, for `pgvigil serve --store
 * postgres://...`: events, alerts with their transitions, incident and evidence, series and a
 * report's window, over the targets a cluster/target filter selects. Only SELECTs, in read-only
 * sessions: it runs as the read-only role of docs/fleet.md.
 *
 * Ids: stores reuse local ids, so the API's id of a central row is its local id times STORE_SLOTS
 * plus the number of its (target, store) here, numbered in the order the stores first forwarded:
 * 4_270_002 is local id 427 of the second store. The number is kept for as long as this process
 * runs, so an alert listed by /api/alerts opens at /api/alerts/:id, and evidence event ids are
 * those of /api/events.
 */
import type pg from 'pg';
import type { Alert, EventKind, LogLevel } from '../domain/index.js';
import { alertFromRow, incidentDedupKey, type AlertRow } from '../store/alert-store.js';
import { MAX_EVIDENCE_EVENTS, type AlertDetail, type AlertQuery, type EventQuery, type EventRow, type SeriesQuery, type SeriesView, type StoredEventView } from '../store/queries.js';
import { TooManySeriesError, type StoreReads, type StoredWindow, type WindowQuery } from '../store/store-reads.js';
import { centralReportWindow, epochMs } from './central-report.js';

/** Stores one served process can number: ids stay below 2^53 for local ids up to 9e11. */
export const STORE_SLOTS = 10_000;

export interface CentralFilter {
  target: string | null;
  cluster: string | null;
}

interface Store {
  target: string;
  storeId: string;
}

/** The SQLite row's columns, keyed by store and local id; bigints arrive as text, details as parsed JSON. */
type CentralEventRow = Omit<EventRow, 'id' | 'details' | 'source_offset'> & { store_id: string; local_id: string; details: unknown; source_offset: string };

type CentralAlertRow = Omit<AlertRow, 'id' | 'incident_id'> & { store_id: string; local_id: string; incident_local_id: string | null };

const EVENT_COLUMNS = `target, store_id::text AS store_id, local_id, ${epochMs('ts')} AS ts_ms, kind, level, sqlstate, pid, database, user_name,
  message, details, source_file, source_offset`;
const ALERT_COLUMNS = `target, store_id::text AS store_id, local_id, rule_id, dedup_key, severity, state, labels::text AS labels, summary,
  evidence::text AS evidence, ${epochMs('started_at')} AS started_ms, ${epochMs('updated_at')} AS updated_ms,
  ${epochMs('resolved_at')} AS resolved_ms, incident_local_id`;

export class CentralReads implements StoreReads {
  /** `${target}\0${store_id}` -> its number (1-based); stores[number - 1] is the store. */
  private readonly numbers = new Map<string, number>();
  private readonly stores: Store[] = [];

  constructor(private readonly pool: pg.Pool, private readonly filter: CentralFilter, private readonly maxSeries = 1_000) {}

  async events(query: EventQuery): Promise<StoredEventView[]> {
    const targets = await this.targets(query.target);
    if (targets.length === 0) return [];
    const { rows } = await this.pool.query<CentralEventRow>(`
      SELECT ${EVENT_COLUMNS} FROM pgvigil.events
      WHERE target = ANY($1) AND ts >= $2 AND ts <= $3 AND ($4::text IS NULL OR kind = $4) AND ($5::text IS NULL OR database = $5)
      ORDER BY ts DESC, local_id DESC, target, store_id LIMIT $6`,
    [targets, new Date(query.fromMs), new Date(query.toMs), query.kind ?? null, query.database ?? null, query.limit]);
    return rows.map((row) => this.eventView(row));
  }

  async series(query: SeriesQuery): Promise<SeriesView[]> {
    const targets = await this.targets(query.target);
    if (targets.length === 0) return [];
    const window = [new Date(query.fromMs), new Date(query.toMs)];
    // Series with a sample in the window: the central store keeps no "last seen" per series.
    const { rows: matches } = await this.pool.query<{ target: string; store_id: string; local_id: string; labels: Record<string, string> }>(`
      SELECT s.target, s.store_id::text AS store_id, s.local_id, s.labels FROM pgvigil.series s
      WHERE s.name = $1 AND s.target = ANY($2) AND s.labels @> $3::jsonb AND EXISTS (
        SELECT 1 FROM pgvigil.samples p WHERE (p.target, p.store_id, p.series_local_id) = (s.target, s.store_id, s.local_id) AND p.ts BETWEEN $4 AND $5)
      ORDER BY s.target, s.store_id, s.local_id LIMIT $6`,
    [query.name, targets, JSON.stringify(query.labels), ...window, this.maxSeries + 1]);
    if (matches.length > this.maxSeries) {
      throw new TooManySeriesError(`more than ${this.maxSeries} series match name ${query.name} and these labels; at most ${this.maxSeries} per request: add labels or a target`);
    }
    if (matches.length === 0) return [];
    // The latest sample of each step, as the SQLite store's query picks it.
    const { rows: points } = await this.pool.query<{ i: string; ts_ms: number; value: number | null }>(`
      SELECT DISTINCT ON (w.i, bucket) w.i, floor((${epochMs('p.ts')} - $4) / $5) AS bucket, ${epochMs('p.ts')} AS ts_ms, p.value
      FROM unnest($1::text[], $2::uuid[], $3::bigint[]) WITH ORDINALITY AS w (target, store_id, local_id, i)
      JOIN pgvigil.samples p ON (p.target, p.store_id, p.series_local_id) = (w.target, w.store_id, w.local_id)
      WHERE p.ts BETWEEN $6 AND $7
      ORDER BY w.i, bucket, p.ts DESC`,
    [matches.map((m) => m.target), matches.map((m) => m.store_id), matches.map((m) => m.local_id), query.fromMs, query.stepMs, ...window]);
    const series: SeriesView[] = matches.map((m) => ({ target: m.target, labels: m.labels, points: [] }));
    for (const p of points) series[Number(p.i) - 1]!.points.push([p.ts_ms, p.value]);
    return series;
  }

  async alerts(query: AlertQuery): Promise<Alert[]> {
    const targets = await this.targets(undefined);
    if (targets.length === 0) return [];
    const { rows } = await this.pool.query<CentralAlertRow>(`
      SELECT ${ALERT_COLUMNS} FROM pgvigil.alerts
      WHERE target = ANY($1) AND ($2::text IS NULL OR state = $2) AND ($3::timestamptz IS NULL OR started_at <= $3)
        AND ($4::timestamptz IS NULL OR resolved_at IS NULL OR resolved_at >= $4)
      ORDER BY started_at DESC, local_id DESC, target, store_id LIMIT $5`,
    [targets, query.state ?? null, optionalDate(query.toMs), optionalDate(query.fromMs), query.limit]);
    return rows.map((row) => this.alertOf(row));
  }

  async alert(id: number): Promise<AlertDetail | null> {
    await this.targets(undefined);
    const store = this.stores[(id % STORE_SLOTS) - 1];
    if (store === undefined) return null;
    const key = [store.target, store.storeId, Math.floor(id / STORE_SLOTS)];
    const { rows: [row] } = await this.pool.query<CentralAlertRow>(`SELECT ${ALERT_COLUMNS} FROM pgvigil.alerts WHERE target = $1 AND store_id = $2 AND local_id = $3`, key);
    if (row === undefined) return null;
    const alert = this.alertOf(row);
    const { rows: transitions } = await this.pool.query<{ ts_ms: number; to_state: 'firing' | 'resolved' }>(`
      SELECT ${epochMs('ts')} AS ts_ms, to_state FROM pgvigil.alert_transitions WHERE target = $1 AND store_id = $2 AND alert_local_id = $3 ORDER BY ts, local_id`, key);
    const localEvidence = (JSON.parse(row.evidence) as Alert['evidence']).eventIds.slice(0, MAX_EVIDENCE_EVENTS);
    const { rows: events } = await this.pool.query<CentralEventRow>(`
      SELECT ${EVENT_COLUMNS} FROM pgvigil.events WHERE target = $1 AND store_id = $2 AND local_id = ANY($3::bigint[]) ORDER BY ts, local_id`,
    [store.target, store.storeId, localEvidence]);
    return {
      alert,
      transitions: transitions.map((t) => ({ tsMs: t.ts_ms, to: t.to_state })),
      incident: row.incident_local_id === null ? null : await this.incident(store, row.rule_id, Number(row.incident_local_id)),
      events: events.map((e) => this.eventView(e)),
      // The outbox stays with the sidecar: the central store holds no notifications.
      notifications: [],
    };
  }

  /** Numbered by position in the window, as `pgvigil report --store postgres://...` numbers them (central-report.ts). */
  async reportWindow(query: WindowQuery): Promise<StoredWindow> {
    const targets = await this.targets(query.target ?? undefined);
    const client = await this.pool.connect();
    try {
      return await centralReportWindow(client, { ...query, cluster: this.filter.cluster }, targets);
    } finally {
      client.release();
    }
  }

  /**
   * The served targets (narrowed to `wanted` when given), numbering the stores not seen yet:
   * every store of a target the filter selects, in the order they first forwarded.
   */
  private async targets(wanted: string | undefined): Promise<string[]> {
    const { rows } = await this.pool.query<{ target: string; store_id: string }>(`
      SELECT target, store_id::text AS store_id FROM pgvigil.targets
      WHERE target IN (SELECT target FROM pgvigil.targets WHERE ($1::text IS NULL OR target = $1) AND ($2::text IS NULL OR cluster = $2))
      ORDER BY first_seen, target, store_id`, [this.filter.target, this.filter.cluster]);
    for (const row of rows) this.numberOf(row.target, row.store_id);
    const targets = [...new Set(rows.map((r) => r.target))];
    return wanted === undefined ? targets : targets.filter((t) => t === wanted);
  }

  private numberOf(target: string, storeId: string): number {
    const key = `${target}\u0000${storeId}`;
    const known = this.numbers.get(key);
    if (known !== undefined) return known;
    if (this.stores.length + 1 >= STORE_SLOTS) {
      throw new Error(`the central store holds more than ${STORE_SLOTS - 1} stores for the served targets: serve fewer with --cluster or --target`);
    }
    this.stores.push({ target, storeId });
    this.numbers.set(key, this.stores.length);
    return this.stores.length;
  }

  private idOf(row: { target: string; store_id: string }, localId: number | string): number {
    return Number(localId) * STORE_SLOTS + this.numberOf(row.target, row.store_id);
  }

  private eventView(row: CentralEventRow): StoredEventView {
    return {
      id: this.idOf(row, row.local_id), target: row.target, tsMs: row.ts_ms, kind: row.kind as EventKind, level: row.level as LogLevel,
      sqlstate: row.sqlstate, pid: row.pid, database: row.database, user: row.user_name, message: row.message, details: row.details,
      sourceFile: row.source_file, sourceOffset: Number(row.source_offset),
    };
  }

  /** Its id and its evidence's event ids as this API numbers them. */
  private alertOf(row: CentralAlertRow): Alert {
    const alert = alertFromRow({ ...row, id: this.idOf(row, row.local_id), incident_id: null });
    return { ...alert, evidence: { ...alert.evidence, eventIds: alert.evidence.eventIds.map((id) => this.idOf(row, id)) } };
  }

  /** The central store holds no incidents: one is its members, the alerts of its store that name it. */
  private async incident(store: Store, ruleId: string, incidentId: number): Promise<AlertDetail['incident']> {
    const { rows: [members] } = await this.pool.query<{ first_ms: number; members: string; firing: boolean }>(`
      SELECT ${epochMs('min(started_at)')} AS first_ms, count(*) AS members, bool_or(state = 'firing') AS firing
      FROM pgvigil.alerts WHERE target = $1 AND store_id = $2 AND incident_local_id = $3`, [store.target, store.storeId, incidentId]);
    return {
      dedupKey: incidentDedupKey(store.target, ruleId, members!.first_ms, incidentId),
      state: members!.firing ? 'firing' : 'resolved',
      members: Number(members!.members),
    };
  }
}

function optionalDate(ms: number | undefined): Date | null {
  return ms === undefined ? null : new Date(ms);
}
