/**
 * Is a target PostgreSQL 19 or later? Rules about REPACK only make sense there. The sampled
 * server_version_num (pg_settings collector) says so; without it (collector disabled, or pgvigil
 * analysing logs only) the proof is something only 19 produces: a REPACK slot, a pg_stat_recovery
 * series, or an autovacuum report with the `memory usage:` or `full page image bytes` figures
 * (printed by every 19 report, pg-messages.md §1.3).
 */
import type { RuleView } from './rule-view.js';
import { SLOT_INFO } from './repack-runs.js';

const LOOKBACK_MS = 24 * 3_600_000;
const VERSION_NUM = 'pg_settings_server_version_num';

export function provesPg19(view: RuleView, target: string): boolean {
  const versionNum = view.latest(VERSION_NUM, { target, maxAgeMs: LOOKBACK_MS })[0]?.value;
  if (versionNum !== undefined && versionNum !== null) return versionNum >= 190000;
  const sinceMs = view.nowMs - LOOKBACK_MS;
  if (view.series(SLOT_INFO, { sinceMs, target, labels: { owner: 'repack' } }).length > 0) return true;
  // PG 19+: pg_stat_recovery exists only in 19.
  if (view.series('pg_stat_recovery_last_replayed_end_lsn_bytes', { sinceMs, target }).length > 0) return true;
  return view.events('autovacuum', { sinceMs, target })
    .some((e) => e.details.dead_item_storage_mb !== null || e.details.wal_fpi_bytes !== null);
}
