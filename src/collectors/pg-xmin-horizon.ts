/**
 * The xmin horizon and who holds it back: sessions (pg_stat_activity backend_xmin / backend_xid),
 * prepared transactions, replication slots (xmin, catalog_xmin, and REPACK / pg_squeeze slots that
 * hold every table with xmin NULL, see slot-owner.ts) and standby feedback (pg_stat_replication
 * backend_xmin). Every holder is reported with its age in XIDs and who it is (pid, database,
 * state, query start, truncated query), the oldest few per kind; plus the oldest age per kind.
 *
 * scope says which tables a holder keeps vacuum from cleaning: `database` (a session or prepared
 * transaction: only its own database, plus shared catalogs), `cluster` (slot xmin, standby
 * feedback, REPACK / pg_squeeze slots and their decoding workers: every table in every
 * database), `catalog` (a logical slot's catalog_xmin: system catalogs everywhere). owner names
 * what the holder is (slot-owner.ts for slots, maintenance-kind.ts for sessions).
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { POLLER_APPLICATION_NAME } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { bool, label, num, requiredNum, text } from './row.js';
import { classifyMaintenance } from './maintenance-kind.js';
import { classifySlotOwner } from './slot-owner.js';

/** Holders reported per kind (the oldest first). */
export const HOLDERS_PER_KIND = 5;
const QUERY_LABEL_CHARS = 100;

// Walsenders carry standby feedback as their xmin: reported once, as standby_feedback.
// A lazy VACUUM (an autovacuum worker not only analysing, a VACUUM without FULL) and its parallel
// workers (VACUUM (PARALLEL), 19's parallel autovacuum: backend_type 'parallel worker', judged by
// their leader) run with PROC_IN_VACUUM: other backends' horizons ignore their xmin, so they hold
// nothing. Left out here, before the oldest few per kind are kept: five long autovacuums of big
// tables must not push the real holder out of the list.
export const XMIN_HORIZON_SQL = `
WITH holders AS (
  SELECT 'backend' AS kind, a.pid, a.datname, a.usename, a.application_name, a.state, a.backend_type,
         NULL::text AS name, NULL::text AS plugin, NULL::text AS slot_type, NULL::bool AS temporary,
         NULL::int AS leader_pid,
         greatest(age(a.backend_xmin), age(a.backend_xid)) AS age_xids,
         extract(epoch FROM a.xact_start)::float8 AS xact_start,
         extract(epoch FROM a.query_start)::float8 AS query_start,
         left(regexp_replace(a.query, '\\s+', ' ', 'g'), ${QUERY_LABEL_CHARS}) AS query
  FROM pg_stat_activity a
  LEFT JOIN pg_stat_activity leader ON a.backend_type = 'parallel worker' AND leader.pid = a.leader_pid
  CROSS JOIN LATERAL (SELECT CASE WHEN a.backend_type = 'parallel worker' THEN leader.backend_type ELSE a.backend_type END AS backend_type,
                             CASE WHEN a.backend_type = 'parallel worker' THEN leader.query ELSE a.query END AS query) runs
  WHERE (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
    AND a.pid <> pg_backend_pid()
    AND a.application_name IS DISTINCT FROM '${POLLER_APPLICATION_NAME}'
    AND a.backend_type IS DISTINCT FROM 'walsender'
    AND NOT coalesce(
      (runs.backend_type = 'autovacuum worker' AND runs.query !~* '^autovacuum: ANALYZE\\M')
      OR (runs.backend_type = 'client backend' AND runs.query ~* '^\\s*vacuum\\M' AND runs.query !~* '^\\s*vacuum\\s*(full\\M|\\([^)]*\\mfull\\M)'),
      false)
  UNION ALL
  SELECT 'prepared_xact', NULL, p.database, p.owner::text, NULL, NULL, NULL, p.gid, NULL, NULL, NULL, NULL,
         age(p.transaction), extract(epoch FROM p.prepared)::float8, NULL, NULL
  FROM pg_prepared_xacts p
  UNION ALL
  SELECT 'slot_xmin', s.active_pid, s.database, NULL, a.application_name, NULL, a.backend_type,
         s.slot_name::text, s.plugin::text, s.slot_type, s.temporary, a.leader_pid, age(s.xmin), NULL, NULL, NULL
  FROM pg_replication_slots s LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid
  WHERE s.xmin IS NOT NULL
  UNION ALL
  SELECT 'slot_catalog_xmin', s.active_pid, s.database, NULL, a.application_name, NULL, a.backend_type,
         s.slot_name::text, s.plugin::text, s.slot_type, s.temporary, a.leader_pid, age(s.catalog_xmin), NULL, NULL, NULL
  FROM pg_replication_slots s LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid
  WHERE s.catalog_xmin IS NOT NULL
  UNION ALL
  SELECT 'standby_feedback', r.pid, NULL, r.usename, r.application_name, r.state, 'walsender',
         NULL, NULL, NULL, NULL, NULL, age(r.backend_xmin), extract(epoch FROM r.backend_start)::float8, NULL, NULL
  FROM pg_stat_replication r
  WHERE r.backend_xmin IS NOT NULL
)
SELECT *, count(*) OVER (PARTITION BY kind) AS kind_total
FROM (SELECT *, row_number() OVER (PARTITION BY kind ORDER BY age_xids DESC NULLS LAST) AS rank FROM holders) h
WHERE rank <= $1
ORDER BY kind, rank`;

const P = 'pg_xmin_horizon';
const M = metricDefs(P, {
  holder_age_xids: gauge(
    'Age in XIDs of what a holder keeps vacuum from removing; labels say who (kind, scope, owner, datname, usename, application_name, slot or gid name), the oldest of alike holders (the store also keeps pid and query).',
  ),
  holder_xact_start_timestamp_seconds: gauge('When the holder\'s transaction started (sessions) or was prepared, epoch seconds.'),
  holder_query_start_timestamp_seconds: gauge('When the holding session\'s current or last query started, epoch seconds.'),
  age_xids: gauge('Oldest holder of each kind (and scope), in XIDs.'),
  holders: gauge('Holders of each kind, including those beyond the reported few.'),
});

type Scope = 'database' | 'cluster' | 'catalog';

// Background workers of online repacks hold a logical-decoding snapshot: every table, everywhere.
const CLUSTER_WIDE_SESSIONS = new Set(['repack_decoding_worker', 'pg_squeeze_worker']);

function holderScope(kind: string, owner: string, slotHoldsAllTables: boolean): Scope {
  if (kind === 'backend') return CLUSTER_WIDE_SESSIONS.has(owner) ? 'cluster' : 'database';
  if (kind === 'prepared_xact') return 'database';
  if (kind === 'slot_catalog_xmin' && !slotHoldsAllTables) return 'catalog';
  return 'cluster';
}

/** A session's maintenance kind (REPACK, its decoding worker, VACUUM FULL...), '' for others. */
function sessionOwner(row: Row): string {
  return classifyMaintenance({
    backendType: text(row, 'backend_type'),
    applicationName: text(row, 'application_name'),
    query: text(row, 'query'),
  }) ?? '';
}

/** Pure: rows of XMIN_HORIZON_SQL -> samples. */
export function mapXminHorizon(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const oldest = new Map<string, { kind: string; scope: Scope; age: number | null }>();
  const totals = new Map<string, number>();
  for (const row of rows) {
    const kind = label(row, 'kind');
    const slotName = text(row, 'name');
    const isSlot = kind === 'slot_xmin' || kind === 'slot_catalog_xmin';
    const ownership = isSlot
      ? classifySlotOwner({
          slotName: slotName ?? '',
          slotType: text(row, 'slot_type'),
          plugin: text(row, 'plugin'),
          temporary: bool(row, 'temporary'),
          activePid: num(row, 'pid'),
          activeBackendType: text(row, 'backend_type'),
          activeLeaderPid: num(row, 'leader_pid'),
          activeApplicationName: text(row, 'application_name'),
        })
      : null;
    const owner = ownership?.owner ?? (kind === 'backend' ? sessionOwner(row) : '');
    const scope = holderScope(kind, owner, ownership?.holdsAllTables ?? false);
    const pid = ownership ? ownership.ownerPid : num(row, 'pid');
    const age = num(row, 'age_xids');
    const labels = {
      kind,
      scope,
      owner,
      pid: pid === null ? '' : String(pid),
      datname: label(row, 'datname'),
      usename: label(row, 'usename'),
      application_name: label(row, 'application_name'),
      backend_type: label(row, 'backend_type'),
      state: label(row, 'state'),
      name: slotName ?? '',
      query: label(row, 'query'),
    };
    b.add(M.holder_age_xids, labels, age);
    if (kind === 'backend' || kind === 'prepared_xact') b.add(M.holder_xact_start_timestamp_seconds, labels, num(row, 'xact_start'));
    if (kind === 'backend') b.add(M.holder_query_start_timestamp_seconds, labels, num(row, 'query_start'));

    totals.set(kind, requiredNum(row, 'kind_total'));
    const key = `${kind}\u0000${scope}`;
    const seen = oldest.get(key);
    if (!seen) oldest.set(key, { kind, scope, age });
    else if (age !== null && (seen.age === null || age > seen.age)) seen.age = age;
  }
  for (const { kind, scope, age } of oldest.values()) b.add(M.age_xids, { kind, scope }, age);
  for (const [kind, total] of totals) b.add(M.holders, { kind }, total);
  return b.samples;
}

export function pgXminHorizonCollector(options: CollectorOptions & { holdersPerKind?: number } = {}): Collector {
  const perKind = options.holdersPerKind ?? HOLDERS_PER_KIND;
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 5_000,
    metrics: Object.values(M),
    sql: () => XMIN_HORIZON_SQL,
    params: [perKind],
    map: mapXminHorizon,
  }, options);
}
