/**
 * pg_replication_slots: activity, the xmin / catalog_xmin each slot pins (as an age in XIDs),
 * the WAL it retains, its wal_status and invalidation, and who owns it (slot-owner.ts) — REPACK's
 * temporary slot, pg_squeeze, subscriptions, standbys. Slots are cluster-wide: server scope.
 */
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { majorVersion } from './collector.js';
import type { Sample } from '../domain/index.js';
import { queryCollector } from './query-collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { bool, flag, label, num, text } from './row.js';
import { classifySlotOwner } from './slot-owner.js';
import { WAL_POSITION_SQL } from './wal-position.js';

export function replicationSlotsSql(major: number): string {
  return `
WITH pos AS (
  SELECT ${WAL_POSITION_SQL} AS lsn
)
SELECT s.slot_name, s.plugin, s.slot_type, s.database, s.temporary, s.active, s.active_pid,
       age(s.xmin) AS xmin_age_xids, age(s.catalog_xmin) AS catalog_xmin_age_xids,
       pg_wal_lsn_diff(s.restart_lsn, '0/0')::float8 AS restart_lsn_bytes,
       pg_wal_lsn_diff(s.confirmed_flush_lsn, '0/0')::float8 AS confirmed_flush_lsn_bytes,
       pg_wal_lsn_diff(pos.lsn, s.restart_lsn)::float8 AS retained_wal_bytes,
       s.wal_status, s.safe_wal_size,
       ${major >= 16 ? 's.conflicting' : 'NULL::bool AS conflicting'}, -- PG 16+
       ${major >= 17 ? 's.invalidation_reason' : 'NULL::text AS invalidation_reason'}, -- PG 17+
       ${major >= 17 ? 'extract(epoch FROM s.inactive_since)::float8' : 'NULL::float8'} AS inactive_since, -- PG 17+
       ${major >= 17 ? 's.failover, s.synced' : 'NULL::bool AS failover, NULL::bool AS synced'}, -- PG 17+
       a.backend_type AS active_backend_type, a.leader_pid AS active_leader_pid,
       a.application_name AS active_application_name
FROM pg_replication_slots s
CROSS JOIN pos
LEFT JOIN pg_stat_activity a ON a.pid = s.active_pid
ORDER BY s.slot_name`;
}

const P = 'pg_replication_slots';
const M = metricDefs(P, {
  info: gauge('Always 1; labels describe the slot and who owns it (owner; the store also keeps owner_pid: for REPACK its session); PG 17+ failover, synced.'),
  active: gauge('1 while a process streams from the slot.'),
  active_pid: gauge('PID of the process using the slot (NULL when inactive).'),
  xmin_age_xids: gauge('Age of the slot xmin: holds back vacuum of every table (NULL when unset).'),
  catalog_xmin_age_xids: gauge('Age of the slot catalog_xmin: holds back vacuum of catalogs (NULL when unset).'),
  horizon_age_xids: gauge(
    'Age of what the slot holds on user tables: xmin, or for REPACK / pg_squeeze (xmin NULL, yet holding all tables) catalog_xmin as a lower bound.',
  ),
  restart_lsn_bytes: gauge('restart_lsn as a byte position.'),
  confirmed_flush_lsn_bytes: gauge('confirmed_flush_lsn as a byte position (logical slots).'),
  retained_wal_bytes: gauge('WAL kept for the slot: current (or received) WAL position minus restart_lsn.'),
  safe_wal_size_bytes: gauge('WAL that can still be written before the slot is in danger of being lost (NULL: unlimited).'),
  wal_status: gauge('Always 1; label wal_status: reserved, extended, unreserved, lost.'),
  conflicting: gauge('1 when a logical slot is invalidated by a conflict (PG 16+; 16 counts any invalidation).'),
  invalidated: gauge('1 when invalidated; label invalidation_reason (PG 17+).'),
  inactive_since_timestamp_seconds: gauge('When the slot became inactive, epoch seconds (PG 17+; NULL while active).'),
});

/** Pure: rows of replicationSlotsSql -> samples. */
export function mapReplicationSlots(rows: readonly Row[], ctx: MapContext): Sample[] {
  const major = majorVersion(ctx.server);
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  for (const row of rows) {
    const slotName = label(row, 'slot_name');
    const ownership = classifySlotOwner({
      slotName,
      slotType: text(row, 'slot_type'),
      plugin: text(row, 'plugin'),
      temporary: bool(row, 'temporary'),
      activePid: num(row, 'active_pid'),
      activeBackendType: text(row, 'active_backend_type'),
      activeLeaderPid: num(row, 'active_leader_pid'),
      activeApplicationName: text(row, 'active_application_name'),
    });
    const labels = { slot_name: slotName, slot_type: label(row, 'slot_type'), owner: ownership.owner };
    b.add(M.info, {
      ...labels,
      plugin: label(row, 'plugin'),
      database: label(row, 'database'),
      temporary: String(bool(row, 'temporary') ?? ''),
      owner_pid: ownership.ownerPid === null ? '' : String(ownership.ownerPid),
      owner_application_name: label(row, 'active_application_name'),
      owner_backend_type: label(row, 'active_backend_type'),
      // PG 17+: a failover slot, and on a standby its synced copy (never active there until promotion).
      failover: String(bool(row, 'failover') ?? ''),
      synced: String(bool(row, 'synced') ?? ''),
    }, 1);
    b.add(M.active, labels, flag(row, 'active'));
    b.add(M.active_pid, labels, num(row, 'active_pid'));
    const xminAge = num(row, 'xmin_age_xids');
    const catalogXminAge = num(row, 'catalog_xmin_age_xids');
    b.add(M.xmin_age_xids, labels, xminAge);
    b.add(M.catalog_xmin_age_xids, labels, catalogXminAge);
    const heldByCatalogXmin = ownership.holdsAllTables ? catalogXminAge : null;
    b.add(M.horizon_age_xids, labels, maxOf(xminAge, heldByCatalogXmin));
    b.add(M.restart_lsn_bytes, labels, num(row, 'restart_lsn_bytes'));
    b.add(M.confirmed_flush_lsn_bytes, labels, num(row, 'confirmed_flush_lsn_bytes'));
    b.add(M.retained_wal_bytes, labels, num(row, 'retained_wal_bytes'));
    b.add(M.safe_wal_size_bytes, labels, num(row, 'safe_wal_size'));
    const walStatus = text(row, 'wal_status');
    if (walStatus !== null) b.add(M.wal_status, { ...labels, wal_status: walStatus }, 1);
    if (major >= 16) b.add(M.conflicting, labels, flag(row, 'conflicting'));
    if (major >= 17) {
      const reason = text(row, 'invalidation_reason');
      b.add(M.invalidated, { ...labels, invalidation_reason: reason ?? '' }, reason === null ? 0 : 1);
      b.add(M.inactive_since_timestamp_seconds, labels, num(row, 'inactive_since'));
    }
  }
  return b.samples;
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

export function pgReplicationSlotsCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 5_000,
    metrics: Object.values(M),
    sql: (server) => replicationSlotsSql(majorVersion(server)),
    map: mapReplicationSlots,
  }, options);
}
