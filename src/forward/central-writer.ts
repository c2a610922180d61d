/**
 * Writes a forward batch into the central PostgreSQL database in ONE transaction. Events and
 * transitions none of whose ids is central yet are COPYed straight into their table; anything
 * else is COPYed into a temporary staging table, then moved with INSERT ... ON CONFLICT, so a
 * batch sent twice (a crash after the central commit, before the sidecar's cursor moved) inserts
 * nothing. Alerts and the log report's minutes change in place: their row is replaced by a newer
 * version, never by an older one.
 *
 * Owns one connection, opened lazily and thrown away on any error (the next batch reconnects and
 * recreates its staging tables). Never: reading the sidecar's store or deciding when to retry.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { ensureDayPartitions, requireCentralSchema, utcDay } from '../central/migrate-central.js';
import { copyChunks, textArrayLiteral, type CopyValue } from './copy-text.js';
import type { AlertRow, ForwardBatch, ForwardEventRow, ReportMinute, SeriesRow, StepSample, TransitionRow } from './forward-queue.js';

export interface CentralTarget {
  name: string;
  cluster: string | null;
}

interface Stream<T> {
  table: string;
  columns: readonly string[];
  values: (row: T, storeId: string) => readonly CopyValue[];
  /** After INSERT ... SELECT from the staging table. */
  onConflict: string;
  /**
   * An append-only stream keyed by (target, store_id, local_id, ts): a batch none of whose ids is
   * central yet (the usual case: only a crash sends a batch again) is COPYed straight into the
   * table, which halves the central database's work; the key still refuses a double.
   */
  key?: (row: T) => { target: string; localId: number; tsMs: number };
}

const iso = (ms: number): string => new Date(ms).toISOString();
const DAY_MS = 86_400_000;

const EVENTS: Stream<ForwardEventRow> = {
  table: 'events',
  columns: ['target', 'store_id', 'local_id', 'ts', 'kind', 'level', 'sqlstate', 'pid', 'database', 'user_name', 'message', 'details', 'source_file', 'source_offset', 'language'],
  values: (e, storeId) => [e.target, storeId, e.id, iso(e.ts_ms), e.kind, e.level, e.sqlstate, e.pid, e.database, e.user_name, e.message, e.details, e.source_file, e.source_offset, e.language],
  onConflict: 'ON CONFLICT DO NOTHING',
  key: (e) => ({ target: e.target, localId: e.id, tsMs: e.ts_ms }),
};

const ALERT_COLUMNS = ['target', 'store_id', 'local_id', 'rule_id', 'dedup_key', 'severity', 'state', 'labels', 'summary', 'evidence', 'started_at', 'updated_at', 'resolved_at', 'incident_local_id'];
const ALERTS: Stream<AlertRow> = {
  table: 'alerts',
  columns: ALERT_COLUMNS,
  values: (a, storeId) => [
    a.target, storeId, a.id, a.rule_id, a.dedup_key, a.severity, a.state, a.labels, a.summary, a.evidence,
    iso(a.started_ms), iso(a.updated_ms), a.resolved_ms === null ? null : iso(a.resolved_ms), a.incident_id,
  ],
  onConflict: `ON CONFLICT (target, store_id, local_id, started_at) DO UPDATE SET
    ${['rule_id', 'dedup_key', 'severity', 'state', 'labels', 'summary', 'evidence', 'updated_at', 'resolved_at', 'incident_local_id'].map((c) => `${c} = excluded.${c}`).join(', ')}
    WHERE pgvigil.alerts.updated_at <= excluded.updated_at`,
};

const TRANSITIONS: Stream<TransitionRow> = {
  table: 'alert_transitions',
  columns: ['target', 'store_id', 'local_id', 'alert_local_id', 'ts', 'to_state'],
  values: (t, storeId) => [t.target, storeId, t.id, t.alert_id, iso(t.ts_ms), t.to_state],
  onConflict: 'ON CONFLICT DO NOTHING',
  key: (t) => ({ target: t.target, localId: t.id, tsMs: t.ts_ms }),
};

const SERIES: Stream<SeriesRow> = {
  table: 'series',
  columns: ['target', 'store_id', 'local_id', 'name', 'labels'],
  // The store's canonical [[name, value], ...] as a JSON object, which jsonb operators read.
  values: (s, storeId) => [s.target, storeId, s.id, s.name, JSON.stringify(Object.fromEntries(JSON.parse(s.labels) as Array<[string, string]>))],
  onConflict: 'ON CONFLICT DO NOTHING',
};

const SAMPLES: Stream<StepSample> = {
  table: 'samples',
  columns: ['target', 'store_id', 'series_local_id', 'ts', 'value'],
  values: (s, storeId) => [s.target, storeId, s.series_id, iso(s.step_ms), s.value],
  onConflict: 'ON CONFLICT DO NOTHING',
};

// A minute is sent whole each time it gains a row; of two sends, the one through the higher row
// id is the newer (two batches in flight on two connections may commit in either order).
const REPORT_MINUTES: Stream<ReportMinute> = {
  table: 'report_minutes',
  columns: ['target', 'store_id', 'ts', 'through_local_id', 'states'],
  values: (m, storeId) => [m.target, storeId, iso(m.minuteMs), m.throughId, textArrayLiteral(m.states)],
  onConflict: `ON CONFLICT (target, store_id, ts) DO UPDATE SET through_local_id = excluded.through_local_id, states = excluded.states
    WHERE pgvigil.report_minutes.through_local_id < excluded.through_local_id`,
};

const STREAMS = [EVENTS, ALERTS, TRANSITIONS, SERIES, SAMPLES, REPORT_MINUTES] as const;

export interface CentralWriterOptions {
  /** node-postgres settings of the central connection (connection string, password, TLS). */
  client: pg.ClientConfig;
  storeId: string;
  targets: readonly CentralTarget[];
}

/** Writers for `count` central connections (the forwarder writes one batch on each at a time). */
export function centralWriters(count: number, options: CentralWriterOptions): CentralWriter[] {
  return Array.from({ length: count }, () => new CentralWriter(options));
}

export class CentralWriter {
  private client: pg.Client | null = null;
  /** UTC days known to have their partitions; a new day costs one call of ensure_day_partitions. */
  private readonly daysWithPartitions = new Set<string>();
  /** Series rows the central database has (they never change). */
  private readonly seriesSent = new Set<number>();

  constructor(private readonly options: CentralWriterOptions) {}

  /** Commits the batch centrally or throws; afterwards the caller may move its cursors. */
  async write(batch: ForwardBatch, nowMs: number): Promise<void> {
    const client = await this.connection();
    try {
      await this.ensurePartitions(client, batch, nowMs);
      const series = batch.series.filter((s) => !this.seriesSent.has(s.id));
      await client.query('BEGIN');
      await this.move(client, EVENTS, batch.events);
      await this.move(client, ALERTS, batch.alerts);
      await this.move(client, TRANSITIONS, batch.transitions);
      await this.move(client, SERIES, series);
      await this.move(client, SAMPLES, batch.samples);
      await this.move(client, REPORT_MINUTES, batch.reportMinutes);
      // Last: every batch of this store updates the same targets row, and its lock, held to the
      // commit, would make a batch on a second connection wait before its COPY rather than after.
      await this.upsertTargets(client);
      await client.query('COMMIT');
      for (const s of series) this.seriesSent.add(s.id);
    } catch (err) {
      // Whatever state the connection is in (mid-transaction, broken, server gone), start afresh.
      await this.close();
      throw err;
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client(this.options.client);
    // A server that goes away under an idle connection emits 'error': the next write reconnects.
    client.on('error', () => {
      if (this.client === client) this.client = null;
    });
    try {
      await client.connect();
      await requireCentralSchema(client);
      for (const stream of STREAMS) {
        await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${stagingTable(stream)} (LIKE pgvigil.${stream.table}) ON COMMIT DELETE ROWS`);
      }
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return client;
  }

  private async ensurePartitions(client: pg.Client, batch: ForwardBatch, nowMs: number): Promise<void> {
    // Day numbers first: one Date per day rather than one per row.
    const dayNumbers = new Set<number>([Math.floor(nowMs / DAY_MS), Math.floor(nowMs / DAY_MS) + 1]);
    const add = (ms: number) => dayNumbers.add(Math.floor(ms / DAY_MS));
    for (const e of batch.events) add(e.ts_ms);
    for (const a of batch.alerts) add(a.started_ms);
    for (const t of batch.transitions) add(t.ts_ms);
    for (const s of batch.samples) add(s.step_ms);
    for (const m of batch.reportMinutes) add(m.minuteMs);
    const missing = [...dayNumbers].map((day) => utcDay(day * DAY_MS)).filter((day) => !this.daysWithPartitions.has(day));
    if (missing.length === 0) return;
    await ensureDayPartitions(client, missing);
    for (const day of missing) this.daysWithPartitions.add(day);
  }

  private async upsertTargets(client: pg.Client): Promise<void> {
    const { targets, storeId } = this.options;
    await client.query(
      `INSERT INTO pgvigil.targets (target, store_id, cluster)
       SELECT t.name, $1::uuid, t.cluster FROM unnest($2::text[], $3::text[]) AS t (name, cluster)
       ON CONFLICT (target, store_id) DO UPDATE SET cluster = excluded.cluster, last_seen = now()`,
      [storeId, targets.map((t) => t.name), targets.map((t) => t.cluster)],
    );
  }

  private async move<T>(client: pg.Client, stream: Stream<T>, rows: readonly T[]): Promise<void> {
    if (rows.length === 0) return;
    const columns = stream.columns.join(', ');
    const storeId = this.options.storeId;
    const copy = (table: string) => pipeline(
      Readable.from(copyChunks(rows, (row) => stream.values(row, storeId))),
      client.query(copyFrom(`COPY ${table} (${columns}) FROM STDIN`)),
    );
    if (stream.key && !(await this.anyCentral(client, stream.table, rows.map(stream.key)))) {
      await copy(`pgvigil.${stream.table}`);
      return;
    }
    const staging = stagingTable(stream);
    await copy(staging);
    await client.query(`INSERT INTO pgvigil.${stream.table} (${columns}) SELECT ${columns} FROM ${staging} ${stream.onConflict}`);
  }

  /** Whether a row of this store with one of these ids may already be central: one index range per target. */
  private async anyCentral(client: pg.Client, table: string, keys: ReadonlyArray<{ target: string; localId: number; tsMs: number }>): Promise<boolean> {
    let [minId, maxId, minMs, maxMs] = [Infinity, -Infinity, Infinity, -Infinity];
    const targets = new Set<string>();
    for (const key of keys) {
      targets.add(key.target);
      minId = Math.min(minId, key.localId);
      maxId = Math.max(maxId, key.localId);
      minMs = Math.min(minMs, key.tsMs);
      maxMs = Math.max(maxMs, key.tsMs);
    }
    // The time bounds only prune partitions: the ids alone decide.
    const { rows } = await client.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT FROM pgvigil.${table} WHERE target = ANY($1) AND store_id = $2 AND local_id BETWEEN $3 AND $4 AND ts BETWEEN $5 AND $6) AS found`,
      [[...targets], this.options.storeId, minId, maxId, new Date(minMs), new Date(maxMs)],
    );
    return rows[0]!.found;
  }
}

function stagingTable(stream: { table: string }): string {
  return `pg_temp.pgvigil_stage_${stream.table}`;
}
