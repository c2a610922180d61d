/**
 * Which labels of a sample identify its series in the store, and which only describe it.
 *
 * A session's query text, its state and what it waits on change with every query it runs; as
 * part of the identity they made a new series row per poll (14 days of one busy session: a
 * million rows, every rule lookup slower by as much). Here they are the series' `info`: kept
 * with the series as their latest values and handed back to readers merged into the labels, so
 * a rule reads `labels.query` as before, but they never make a new series. A pid stays in the
 * identity (a new session is a new holder or waiter); retention retires its series once its
 * samples are gone (retention.ts).
 *
 * Only the store splits labels: samples keep every label on their way to /metrics, whose
 * snapshots already bound the series shown there.
 */
import type { Labels } from '../domain/index.js';

/**
 * Descriptive labels per series name. Labels whose value is the meaning of the series (a state
 * set like pg_standby_startup_wait_event or pg_replication_slots_wal_status) stay identity.
 */
export const DESCRIPTIVE_LABELS: ReadonlyMap<string, readonly string[]> = new Map([
  ['pg_xmin_horizon_holder_age_xids', ['query', 'state']],
  ['pg_xmin_horizon_holder_xact_start_timestamp_seconds', ['query', 'state']],
  ['pg_xmin_horizon_holder_query_start_timestamp_seconds', ['query', 'state']],
  // pg_blocking_pids changes as the queue ahead of a waiter moves.
  ['pg_lock_waits_session_wait_seconds', ['query', 'blocking_pids']],
  ['pg_maintenance_sessions_info', ['query', 'state', 'wait_event_type', 'wait_event']],
  ['pg_long_transactions_xact_age_seconds', ['query', 'state', 'strongest_lock']],
  ['pg_stat_progress_vacuum_info', ['phase']],
  ['pg_stat_progress_repack_info', ['phase', 'index_name']],
  ['pg_stat_replication_info', ['state', 'sync_state']],
  ['pg_stat_wal_receiver_info', ['status']],
  // A new WAL segment archived (or failed) is the same archiver, not a new series.
  ['pg_stat_archiver_info', ['last_archived_wal', 'last_failed_wal']],
]);

/**
 * How coarse series.seen_ms is: the writer updates it only when a sample is this far past it,
 * so a series sampled every 15 s costs one series update per 5 minutes, and a reader looking
 * for samples since T asks for seen_ms >= T - SEEN_STEP_MS.
 */
export const SEEN_STEP_MS = 300_000;

export interface SplitLabels {
  identity: Labels;
  /** null when the series has no descriptive labels. */
  info: Labels | null;
}

export function splitLabels(name: string, labels: Labels): SplitLabels {
  const descriptive = DESCRIPTIVE_LABELS.get(name);
  if (descriptive === undefined) return { identity: labels, info: null };
  const identity: Record<string, string> = {};
  const info: Record<string, string> = {};
  let described = false;
  for (const [key, value] of Object.entries(labels)) {
    if (descriptive.includes(key)) {
      info[key] = value;
      described = true;
    } else {
      identity[key] = value;
    }
  }
  return { identity, info: described ? info : null };
}
