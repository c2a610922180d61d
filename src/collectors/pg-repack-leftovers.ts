/**
 * What the pg_repack extension leaves behind when its client dies mid-run (seed
 * 000_ddfba2eacd9de59b.txt, pg-messages.md §9.6): the log table `repack.log_<oid>` that its trigger
 * keeps filling with every change, the half-built copy `repack.table_<oid>`, and the trigger
 * `repack_trigger` (`z_repack_trigger` before 1.4) on the user's table; the next pg_repack run
 * refuses to start until they are dropped. An object whose table is not locked by a live
 * pg_repack (its advisory lock: classid 16185446, objid = 2^31 + table oid) is a leftover.
 * Per database: the objects live in each database's catalogs.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { bool, label, requiredNum } from './row.js';

// pg_repack's advisory lock: pg_try_advisory_lock(16185446, CAST(-2147483648 + table oid AS integer)).
const PG_REPACK_LOCK_CLASSID = 16185446;

/**
 * pg_locks.objid of pg_repack's lock on the table whose OID `oidSql` gives. The key is the OID
 * shifted into signed int4 range; pg_locks shows it back as unsigned: OID + 2^31 below 2^31,
 * OID - 2^31 at and above it (OIDs wrap past 2^31 on long-lived servers).
 */
export function repackLockObjid(oidSql: string): string {
  return `((${oidSql})::bigint + 2147483648) % 4294967296`;
}

export const REPACK_LEFTOVERS_SQL = `
WITH objects AS (
  SELECT CASE WHEN c.relname LIKE 'log\\_%' THEN 'log_table' ELSE 'work_table' END AS kind,
         n.nspname::text AS schemaname, c.relname::text AS relname, ''::text AS trigger_name,
         substring(c.relname FROM '^(?:log|table)_([0-9]+)$')::oid AS table_oid
  -- The schema's tables first (OFFSET 0 keeps the planner from moving the regex ahead of the
  -- schema filter: it tested every relname in the database, 0.8 of 0.9 ms at 2,400 relations).
  FROM pg_namespace n
  JOIN LATERAL (SELECT c.oid, c.relname FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind = 'r' OFFSET 0) c ON true
  WHERE n.nspname = 'repack' AND c.relname ~ '^(log|table)_[0-9]+$'
  UNION ALL
  SELECT 'trigger', n.nspname::text, c.relname::text, t.tgname::text, t.tgrelid
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE t.tgname IN ('repack_trigger', 'z_repack_trigger')
)
SELECT o.kind, o.schemaname, o.relname, o.trigger_name,
       coalesce(tn.nspname || '.' || tc.relname, o.table_oid::text) AS for_table,
       EXISTS (SELECT 1 FROM pg_locks l
               WHERE l.locktype = 'advisory' AND l.classid = ${PG_REPACK_LOCK_CLASSID}
                 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                 AND l.objid::bigint = ${repackLockObjid('o.table_oid')}) AS in_use,
       (SELECT count(*) FROM pg_namespace WHERE nspname = 'repack') AS repack_schema
FROM objects o
LEFT JOIN pg_class tc ON tc.oid = o.table_oid
LEFT JOIN pg_namespace tn ON tn.oid = tc.relnamespace
UNION ALL
-- Always one row, so the schema's presence is reported when there is nothing else.
SELECT NULL, NULL, NULL, NULL, NULL, NULL, (SELECT count(*) FROM pg_namespace WHERE nspname = 'repack')`;

const P = 'pg_repack_leftovers';
const M = metricDefs(P, {
  schema_present: gauge('1 when the pg_repack extension\'s schema `repack` exists in the database.'),
  object_left_behind: gauge(
    'One per pg_repack object (log table, work table, trigger): 1 when no live pg_repack holds its table (left behind), 0 while in use.',
  ),
  objects_left_behind: gauge('pg_repack objects left behind by an aborted run, per database.'),
});

/** Pure: rows of REPACK_LEFTOVERS_SQL -> samples. */
export function mapRepackLeftovers(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const datname = ctx.database ?? '';
  let schemaPresent = 0;
  let leftovers = 0;
  for (const row of rows) {
    schemaPresent = requiredNum(row, 'repack_schema') > 0 ? 1 : 0;
    const kind = label(row, 'kind');
    if (kind === '') continue;
    const left = bool(row, 'in_use') === true ? 0 : 1;
    leftovers += left;
    b.add(M.object_left_behind, {
      datname,
      kind,
      schemaname: label(row, 'schemaname'),
      relname: label(row, 'relname'),
      trigger_name: label(row, 'trigger_name'),
      for_table: label(row, 'for_table'),
    }, left);
  }
  b.add(M.schema_present, { datname }, schemaPresent);
  b.add(M.objects_left_behind, { datname }, leftovers);
  return b.samples;
}

export function pgRepackLeftoversCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'per-database',
    intervalMs: 60_000,
    metrics: Object.values(M),
    sql: () => REPACK_LEFTOVERS_SQL,
    map: mapRepackLeftovers,
  }, options);
}
