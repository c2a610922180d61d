/**
 * pg_settings that decide what pgvigil can see and what the rules expect: logging (the log
 * tailer reads log_line_prefix and log_destination from here), autovacuum and its PG 19 parallel
 * workers, worker limits, REPACK's slots (PG 19), standby delays and feedback, wal_level and PG
 * 19's effective_wal_level (logical while any logical slot exists, REPACK's included), lock
 * timeouts, connection slots, checkpoint spacing. Settings a version lacks are simply absent.
 *
 * Numeric settings become `pg_settings_<name>` in base units (`_seconds`, `_bytes`), booleans 1/0;
 * negative values are the "disabled" sentinels and are kept as they are (-1, not -0.001 s). Text
 * and enum settings become `pg_settings_info{name, setting}`.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, MetricDef, Row } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, requiredNum, text } from './row.js';

export const WATCHED_SETTINGS: readonly string[] = [
  'server_version_num', 'cluster_name', 'data_checksums', 'lc_messages',
  'log_line_prefix', 'log_destination', 'logging_collector', 'log_timezone', 'log_lock_waits',
  'log_autovacuum_min_duration', 'log_autoanalyze_min_duration', 'log_recovery_conflict_waits',
  'log_min_duration_statement', 'log_temp_files', 'log_checkpoints',
  'autovacuum', 'autovacuum_max_workers', 'autovacuum_naptime', 'autovacuum_vacuum_cost_delay',
  'autovacuum_vacuum_threshold', 'autovacuum_vacuum_scale_factor',
  'autovacuum_vacuum_cost_limit', 'autovacuum_freeze_max_age', 'autovacuum_multixact_freeze_max_age',
  'autovacuum_max_parallel_workers', 'max_parallel_workers', 'max_worker_processes',
  'max_parallel_maintenance_workers', 'maintenance_work_mem',
  'max_replication_slots', 'max_repack_replication_slots', 'max_wal_senders', 'max_slot_wal_keep_size',
  'wal_level', 'effective_wal_level', 'hot_standby', 'hot_standby_feedback',
  'max_standby_streaming_delay', 'max_standby_archive_delay', 'recovery_min_apply_delay', 'wal_keep_size',
  'wal_receiver_timeout', 'wal_receiver_status_interval',
  'max_wal_size', 'checkpoint_timeout', 'checkpoint_completion_target', 'checkpoint_warning',
  'lock_timeout', 'deadlock_timeout', 'statement_timeout', 'idle_in_transaction_session_timeout',
  // PG 16+: reserved_connections (slots for pg_use_reserved_connections)
  'max_connections', 'superuser_reserved_connections', 'reserved_connections',
  'track_io_timing', 'track_activities', 'track_counts', 'track_cost_delay_timing',
];

export const SETTINGS_SQL = `
SELECT name, setting, unit, vartype FROM pg_settings WHERE name = ANY($1::text[]) ORDER BY name`;

const P = 'pg_settings';
const M = metricDefs(P, {
  info: gauge('Always 1; a text or enum setting (labels name, setting).'),
});

// pg_settings units -> base unit and factor.
const UNITS: Readonly<Record<string, readonly ['seconds' | 'bytes', number]>> = {
  us: ['seconds', 1e-6], ms: ['seconds', 1e-3], s: ['seconds', 1], min: ['seconds', 60], h: ['seconds', 3600],
  d: ['seconds', 86_400], B: ['bytes', 1], kB: ['bytes', 1024], MB: ['bytes', 1024 ** 2], GB: ['bytes', 1024 ** 3],
  TB: ['bytes', 1024 ** 4], '8kB': ['bytes', 8192], '16MB': ['bytes', 16 * 1024 ** 2],
};

/** The metric one numeric setting becomes; also lists them for the catalog. */
export function settingMetric(name: string, unit: string | null): { def: MetricDef; factor: number } {
  const conv = unit === null ? undefined : UNITS[unit];
  const suffix = conv ? `_${conv[0]}` : '';
  return { def: { name: `${P}_${name}${suffix}`, type: 'gauge', help: `Setting ${name}${unit ? ` (from ${unit})` : ''}.` }, factor: conv?.[1] ?? 1 };
}

/** Pure: rows of SETTINGS_SQL -> samples. */
export function mapSettings(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  for (const row of rows) {
    const name = label(row, 'name');
    const setting = text(row, 'setting');
    const vartype = text(row, 'vartype');
    if (vartype === 'bool') {
      b.add(settingMetric(name, null).def, {}, setting === null ? null : setting === 'on' ? 1 : 0);
    } else if (vartype === 'integer' || vartype === 'real') {
      const { def, factor } = settingMetric(name, text(row, 'unit'));
      const raw = requiredNum(row, 'setting');
      b.add(def, {}, raw < 0 ? raw : raw * factor);
    } else {
      b.add(M.info, { name, setting: setting ?? '' }, 1);
    }
  }
  return b.samples;
}

export function pgSettingsCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 60_000,
    // Numeric settings' names depend on their unit, known only from the server: listed as the
    // prefix here; /metrics gives them HELP from settingMetric.
    metrics: Object.values(M),
    sql: () => SETTINGS_SQL,
    params: [WATCHED_SETTINGS],
    map: mapSettings,
  }, options);
}
