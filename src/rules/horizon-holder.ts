/**
 * What holds the xmin horizon, in words, from a holder sample of the pg_xmin_horizon collector
 * (src/collectors/pg-xmin-horizon.ts): a session by what it runs (REPACK, VACUUM FULL, pg_repack,
 * pg_squeeze...), how long its transaction has been open and its last query; a prepared
 * transaction; a replication slot by its owner; a standby's hot_standby_feedback. Shared by every
 * rule that names the holder (xmin-horizon-held, vacuum-held-back, wraparound-approaching), so one
 * holder reads the same in each of their alerts.
 */
import type { Labels } from '../domain/index.js';
import type { LatestSample, RuleView } from './rule-view.js';
import { formatCount, formatDuration, quoteStatement } from './summary-format.js';

export const HOLDER_AGE = 'pg_xmin_horizon_holder_age_xids';
const HOLDER_XACT_START = 'pg_xmin_horizon_holder_xact_start_timestamp_seconds';

const SESSION_OWNERS: Record<string, string> = {
  repack_concurrently: 'REPACK (CONCURRENTLY) session',
  repack: 'REPACK session',
  repack_decoding_worker: 'REPACK (CONCURRENTLY) decoding worker',
  vacuum_full: 'VACUUM FULL session',
  cluster: 'CLUSTER session',
  pg_repack: 'pg_repack session',
  pg_squeeze_worker: 'pg_squeeze worker',
};

const SLOT_OWNERS: Record<string, (name: string, l: Labels) => string> = {
  repack: (name, l) => `REPACK (CONCURRENTLY)'s temporary slot ${name}${l.pid ? ` (REPACK session pid ${l.pid})` : ''}`,
  pg_squeeze: (name) => `pg_squeeze's slot ${name}`,
  logical_subscription: (name) => `logical replication slot ${name} (a subscription)`,
  logical_decoding: (name) => `logical decoding slot ${name}`,
  conflict_detection: () => 'slot pg_conflict_detection (a subscription with retain_dead_tuples)',
  physical_standby: (name) => `physical slot ${name} (a standby's hot_standby_feedback, or a slot nobody uses)`,
  wal_tool: (name, l) => `slot ${name} of ${l.application_name || 'pg_receivewal / pg_basebackup'}`,
};

/** "session pid 4242 (app@shop, idle in transaction) with a transaction open for 3 min, last query: ..." */
export function describeHolder(view: RuleView, h: LatestSample): string {
  const l = h.labels;
  switch (l.kind) {
    case 'backend': {
      const open = openFor(view, h);
      const who = [l.usename && l.datname ? `${l.usename}@${l.datname}` : l.datname, l.state, l.application_name ? `application ${l.application_name}` : '']
        .filter(Boolean).join(', ');
      const query = l.query ? `, last query: ${quoteStatement(l.query, 80)}` : '';
      const what = SESSION_OWNERS[l.owner ?? ''] ?? 'session';
      return `${what} pid ${l.pid}${who ? ` (${who})` : ''}${open ? ` with a transaction open for ${open}` : ''}${query}`;
    }
    case 'prepared_xact': {
      const open = openFor(view, h);
      return `prepared transaction "${l.name}" in ${l.datname || '?'}${l.usename ? ` (owner ${l.usename})` : ''}` +
        `${open ? `, prepared ${open} ago` : ''}`;
    }
    case 'slot_xmin':
    case 'slot_catalog_xmin':
      return (SLOT_OWNERS[l.owner ?? ''] ?? ((name: string) => `replication slot ${name}`))(l.name ?? '', l);
    case 'standby_feedback':
      return `standby ${l.application_name || '?'} through hot_standby_feedback (its queries' snapshots)`;
    default:
      return `a ${l.kind ?? 'holder'}`;
  }
}

/** The holder and its age: for rules whose own subject is not the horizon's age. */
export function describeHolderAndAge(view: RuleView, h: LatestSample): string {
  return `${describeHolder(view, h)}, ${formatCount(h.value ?? 0)} XIDs old`;
}

/** How long a session's or prepared transaction's transaction has been open, as of the view's instant; null when not sampled (slots, feedback). */
export function openForMs(view: RuleView, h: LatestSample): number | null {
  const startS = view.latest(HOLDER_XACT_START, { target: h.target, labels: h.labels })[0]?.value;
  return startS === undefined || startS === null ? null : view.nowMs - startS * 1000;
}

function openFor(view: RuleView, h: LatestSample): string | null {
  const ms = openForMs(view, h);
  return ms === null ? null : formatDuration(ms);
}
