/**
 * Reading the central store (issue #13): a window over many targets as the incident report reads
 * it (src/report/stored-incident-report.ts composes the report), and the fleet summary (per
 * target: alerts by rule, worst vacuum hold, longest replay stall, crashes) for a window, filtered
 * by target and cluster. Only SELECTs: it runs as a read-only role (docs/fleet.md), in a
 * read-only session.
 *
 * Ids: two sidecar stores reuse the same local ids, so a window numbers alerts and events by
 * their position in it, and maps each alert's evidence (local event ids of its own store) onto
 * those numbers.
 */
import type pg from 'pg';
import type { AnyLogEvent, EventKind, LogLevel } from '../domain/index.js';
import { alertFromRow, type AlertRow } from '../store/alert-store.js';
import type { SeriesView } from '../store/queries.js';
import { MINUTE_SPAN_MS } from '../store/report-minutes.js';
import { MAX_WINDOW_ALERTS, type StoredTransition, type StoredWindow, type WindowQuery } from '../store/store-reads.js';

export interface CentralWindow {
  fromMs: number;
  toMs: number;
  target: string | null;
  cluster: string | null;
}

/** Events read for one window; a fleet window past this is reported from its newest part. */
export const MAX_REPORT_EVENTS = 200_000;
/** The forwarder sends samples downsampled to its step (a minute unless configured): no finer step. */
const MIN_STEP_MS = 60_000;

type Queryable = Pick<pg.Client, 'query'>;

/** The targets the filters select, from the targets that forwarded. */
export async function selectTargets(client: Queryable, window: Pick<CentralWindow, 'target' | 'cluster'>): Promise<string[]> {
  const { rows } = await client.query<{ target: string }>(
    `SELECT DISTINCT target FROM pgvigil.targets WHERE ($1::text IS NULL OR target = $1) AND ($2::text IS NULL OR cluster = $2) ORDER BY target`,
    [window.target, window.cluster],
  );
  return rows.map((r) => r.target);
}

/** A timestamptz column as epoch milliseconds (float8, exact for milliseconds). */
export const epochMs = (column: string) => `(extract(epoch FROM ${column}) * 1000)::float8`;

/** Over the targets the window's filters select, or over `targets` when given (`pgvigil serve` narrows them itself). */
export async function centralReportWindow(client: Queryable, window: WindowQuery & Pick<CentralWindow, 'cluster'>, selected?: readonly string[]): Promise<StoredWindow> {
  const targets = selected ?? await selectTargets(client, window);
  const range = [targets, new Date(window.fromMs), new Date(window.toMs)];
  const alertRows = (await client.query<AlertRow & { store_id: string }>(`
    SELECT store_id, local_id AS id, rule_id, dedup_key, severity, state, target, labels::text AS labels, summary, evidence::text AS evidence,
           ${epochMs('started_at')} AS started_ms, ${epochMs('updated_at')} AS updated_ms, ${epochMs('resolved_at')} AS resolved_ms, incident_local_id AS incident_id
    FROM pgvigil.alerts WHERE target = ANY($1) AND started_at <= $3 AND (resolved_at IS NULL OR resolved_at >= $2)
    ORDER BY started_at DESC, target, local_id LIMIT ${MAX_WINDOW_ALERTS}`, range)).rows;
  const counted = (await client.query<{ n: string }>('SELECT count(*) AS n FROM pgvigil.events WHERE target = ANY($1) AND ts BETWEEN $2 AND $3', range)).rows[0]!;
  const eventRows = (await client.query<{ store_id: string; local_id: string; kind: string; target: string; ts_ms: number; pid: number | null; database: string | null; user_name: string | null; level: string; sqlstate: string | null; message: string; details: unknown; source_file: string; source_offset: string; language: string | null }>(`
    SELECT * FROM (
      SELECT store_id, local_id, kind, target, ${epochMs('ts')} AS ts_ms, pid, database, user_name, level, sqlstate, message, details, source_file, source_offset, language
      FROM pgvigil.events WHERE target = ANY($1) AND ts BETWEEN $2 AND $3 ORDER BY ts DESC LIMIT ${MAX_REPORT_EVENTS}
    ) newest ORDER BY ts_ms, store_id, local_id`, range)).rows;

  const eventNumber = new Map<string, number>();
  const events = eventRows.map((row, i) => {
    eventNumber.set(`${row.store_id}/${row.local_id}`, i + 1);
    const event = {
      kind: row.kind as EventKind, target: row.target, tsMs: row.ts_ms, pid: row.pid, database: row.database, user: row.user_name,
      level: row.level as LogLevel, sqlstate: row.sqlstate, message: row.message, details: row.details,
      source: { file: row.source_file, offset: Number(row.source_offset), line: null },
      ...(row.language === null ? {} : { language: row.language }),
    } as AnyLogEvent;
    return { id: i + 1, event };
  });
  const alertNumber = new Map<string, number>();
  const alerts = alertRows.map((row, i) => {
    alertNumber.set(`${row.store_id}/${row.id}`, i + 1);
    const alert = alertFromRow({ ...row, id: i + 1 });
    const evidenceIds = alert.evidence.eventIds.flatMap((id) => eventNumber.get(`${row.store_id}/${id}`) ?? []);
    return { ...alert, evidence: { ...alert.evidence, eventIds: evidenceIds } };
  });
  const transitions = (await client.query<{ store_id: string; alert_local_id: string; ts_ms: number; to_state: 'firing' | 'resolved' }>(`
    SELECT store_id, alert_local_id, ${epochMs('ts')} AS ts_ms, to_state FROM pgvigil.alert_transitions
    WHERE target = ANY($1) AND ts BETWEEN $2 AND $3 ORDER BY ts, local_id`, range)).rows
    .flatMap((t): StoredTransition[] => {
      const alertId = alertNumber.get(`${t.store_id}/${t.alert_local_id}`);
      return alertId === undefined ? [] : [{ alertId, tsMs: t.ts_ms, toState: t.to_state }];
    });
  const sampled = await centralSeries(client, targets, window);
  return {
    alerts, transitions, events, eventsLeftOut: Number(counted.n) - events.length,
    series: (name) => sampled.get(name) ?? [],
    reportMinutes: await centralReportMinutes(client, targets, window),
  };
}

/**
 * The log report's stored rows of the minutes that start in the window (from the one its start
 * falls in), as the sidecar's store hands them out: in time order, then by target, each minute's
 * rows as written (central migration 6 keeps them as the sidecar stores them).
 */
async function centralReportMinutes(client: Queryable, targets: readonly string[], window: WindowQuery): Promise<Array<{ states: string }>> {
  const { rows } = await client.query<{ states: string }>(`
    SELECT m.states FROM pgvigil.report_minutes r CROSS JOIN LATERAL unnest(r.states) WITH ORDINALITY AS m (states, n)
    WHERE r.target = ANY($1) AND r.ts BETWEEN $2 AND $3
    ORDER BY r.ts, r.target, r.store_id, m.n`,
  [targets, new Date(Math.floor(window.fromMs / MINUTE_SPAN_MS) * MINUTE_SPAN_MS), new Date(window.toMs)]);
  return rows;
}

/** The asked-for series in the window, the latest sample of each step. */
async function centralSeries(client: Queryable, targets: readonly string[], window: WindowQuery): Promise<Map<string, SeriesView[]>> {
  const stepMs = Math.max(MIN_STEP_MS, window.stepMs);
  const { rows } = await client.query<{ name: string; target: string; labels: Record<string, string>; ts_ms: number; value: number | null }>(`
    SELECT s.name, s.target, s.labels, ${epochMs('p.ts')} AS ts_ms, p.value
    FROM pgvigil.series s JOIN pgvigil.samples p ON (p.target, p.store_id, p.series_local_id) = (s.target, s.store_id, s.local_id)
    WHERE s.name = ANY($1) AND s.target = ANY($2) AND p.ts BETWEEN $3 AND $4
    ORDER BY s.name, s.target, s.store_id, s.local_id, p.ts`,
    [window.seriesNames, targets, new Date(window.fromMs), new Date(window.toMs)]);
  const byMetric = new Map<string, Map<string, { target: string; labels: Record<string, string>; points: Array<[number, number | null]> }>>();
  for (const row of rows) {
    const lines = byMetric.get(row.name) ?? new Map();
    byMetric.set(row.name, lines);
    const key = `${row.target}\u0000${JSON.stringify(row.labels)}`;
    const line = lines.get(key) ?? { target: row.target, labels: row.labels, points: [] };
    lines.set(key, line);
    const last = line.points.at(-1);
    // The latest value of each report step, as the sidecar's store query does.
    if (last !== undefined && Math.floor((last[0] - window.fromMs) / stepMs) === Math.floor((row.ts_ms - window.fromMs) / stepMs)) line.points[line.points.length - 1] = [row.ts_ms, row.value];
    else line.points.push([row.ts_ms, row.value]);
  }
  return new Map([...byMetric].map(([name, lines]) => [name, [...lines.values()]]));
}

export interface FleetTargetSummary {
  target: string;
  cluster: string | null;
  alerts_by_rule: Record<string, number>;
  worst_vacuum_hold: { removable_cutoff_age_xids: number; table: string; ts: string } | null;
  longest_replay_stall: { standing_still_seconds: number; rule: string; ts: string } | null;
  crashes: number;
}

/** Per selected target, what the window held; targets with nothing in it are listed too. */
export async function fleetSummary(client: Queryable, window: CentralWindow): Promise<FleetTargetSummary[]> {
  const { rows: targets } = await client.query<{ target: string; cluster: string | null }>(
    `SELECT DISTINCT ON (target) target, cluster FROM pgvigil.targets
     WHERE ($1::text IS NULL OR target = $1) AND ($2::text IS NULL OR cluster = $2) ORDER BY target, last_seen DESC`,
    [window.target, window.cluster],
  );
  const range = [targets.map((t) => t.target), new Date(window.fromMs), new Date(window.toMs)];
  // One after another: one connection runs one query at a time.
  const alerts = await client.query<{ target: string; rule_id: string; n: string }>(`
      SELECT target, rule_id, count(*) AS n FROM pgvigil.alerts
      WHERE target = ANY($1) AND started_at <= $3 AND (resolved_at IS NULL OR resolved_at >= $2) GROUP BY 1, 2 ORDER BY 1, 2`, range);
  // details is json (text): json_to_record reads each report once, where each ->> would read it again.
  const holds = await client.query<{ target: string; age: string; relation: string; ts: Date }>(`
      SELECT DISTINCT ON (target) target, d.removable_cutoff_age_xids::bigint AS age, concat_ws('.', d.database, d.schema, d."table") AS relation, ts
      FROM pgvigil.events, json_to_record(details) AS d(removable_cutoff_age_xids text, database text, schema text, "table" text)
      WHERE kind = 'autovacuum' AND target = ANY($1) AND ts BETWEEN $2 AND $3 AND d.removable_cutoff_age_xids ~ '^-?[0-9]{1,18}$'
      ORDER BY target, age DESC, ts`, range);
  const stalls = await client.query<{ target: string; seconds: number; rule_id: string; started_at: Date }>(`
      SELECT DISTINCT ON (target) target, (evidence->'facts'->>'standing_still_seconds')::float8 AS seconds, rule_id, started_at
      FROM pgvigil.alerts
      WHERE rule_id IN ('replay-stalled', 'replay-stalled-on-unlink') AND target = ANY($1) AND started_at <= $3 AND (resolved_at IS NULL OR resolved_at >= $2)
        AND jsonb_typeof(evidence->'facts'->'standing_still_seconds') = 'number'
      ORDER BY target, seconds DESC, started_at`, range);
  const crashes = await client.query<{ target: string; n: string }>(`
      SELECT target, count(*) AS n FROM pgvigil.events WHERE kind = 'server_crash' AND target = ANY($1) AND ts BETWEEN $2 AND $3 GROUP BY 1`, range);
  return targets.map(({ target, cluster }) => {
    const hold = holds.rows.find((h) => h.target === target);
    const stall = stalls.rows.find((s) => s.target === target);
    return {
      target,
      cluster,
      alerts_by_rule: Object.fromEntries(alerts.rows.filter((a) => a.target === target).map((a) => [a.rule_id, Number(a.n)])),
      worst_vacuum_hold: hold ? { removable_cutoff_age_xids: Number(hold.age), table: hold.relation, ts: hold.ts.toISOString() } : null,
      longest_replay_stall: stall ? { standing_still_seconds: stall.seconds, rule: stall.rule_id, ts: stall.started_at.toISOString() } : null,
      crashes: Number(crashes.rows.find((c) => c.target === target)?.n ?? 0),
    };
  });
}
