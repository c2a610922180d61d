/**
 * pg_stat_replication, the sending side: one row per walsender (a standby, a logical
 * subscriber, pg_basebackup, pg_receivewal). LSN positions, write/flush/replay lag as time and as
 * bytes behind this server's WAL position, the standby's feedback xmin. Columns are identical in
 * 13-19.
 *
 * Every series carries `kind`: `logical` for a walsender connected to a database (a subscriber,
 * pg_recvlogical), `physical` otherwise (a standby, and also pg_basebackup and pg_receivewal,
 * which stream WAL but replay none: their replay_lsn is NULL). The info series adds the slot the
 * walsender streams from, if any.
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { queryCollector } from './query-collector.js';
import { label, num, text } from './row.js';
import { WAL_POSITION_SQL } from './wal-position.js';

export const STAT_REPLICATION_SQL = `
WITH pos AS (SELECT ${WAL_POSITION_SQL} AS lsn)
SELECT r.pid, r.application_name, host(r.client_addr) AS client_addr, r.state, r.sync_state,
       pg_wal_lsn_diff(r.sent_lsn, '0/0')::float8 AS sent_lsn_bytes,
       pg_wal_lsn_diff(r.write_lsn, '0/0')::float8 AS write_lsn_bytes,
       pg_wal_lsn_diff(r.flush_lsn, '0/0')::float8 AS flush_lsn_bytes,
       pg_wal_lsn_diff(r.replay_lsn, '0/0')::float8 AS replay_lsn_bytes,
       pg_wal_lsn_diff(pos.lsn, r.sent_lsn)::float8 AS send_lag_bytes,
       pg_wal_lsn_diff(pos.lsn, r.write_lsn)::float8 AS write_lag_bytes,
       pg_wal_lsn_diff(pos.lsn, r.flush_lsn)::float8 AS flush_lag_bytes,
       pg_wal_lsn_diff(pos.lsn, r.replay_lsn)::float8 AS replay_lag_bytes,
       extract(epoch FROM r.write_lag)::float8 AS write_lag_seconds,
       extract(epoch FROM r.flush_lag)::float8 AS flush_lag_seconds,
       extract(epoch FROM r.replay_lag)::float8 AS replay_lag_seconds,
       age(r.backend_xmin) AS backend_xmin_age_xids,
       extract(epoch FROM r.reply_time)::float8 AS reply_time,
       CASE WHEN a.datname IS NULL THEN 'physical' ELSE 'logical' END AS kind,
       s.slot_name
FROM pg_stat_replication r CROSS JOIN pos
LEFT JOIN pg_stat_activity a ON a.pid = r.pid
LEFT JOIN pg_replication_slots s ON s.active_pid = r.pid
ORDER BY r.application_name, r.pid`;

const P = 'pg_stat_replication';
const M = metricDefs(P, {
  info: gauge('Always 1; labels give the walsender pid, state, sync_state and the slot it streams from.'),
  sent_lsn_bytes: gauge('Last WAL position sent, as a byte position.'),
  write_lsn_bytes: gauge('Last WAL position the standby wrote.'),
  flush_lsn_bytes: gauge('Last WAL position the standby flushed.'),
  replay_lsn_bytes: gauge('Last WAL position the standby replayed.'),
  send_lag_bytes: gauge('WAL not yet sent: this server\'s WAL position minus sent_lsn.'),
  write_lag_bytes: gauge('WAL not yet written by the standby.'),
  flush_lag_bytes: gauge('WAL not yet flushed by the standby.'),
  replay_lag_bytes: gauge('WAL not yet replayed by the standby.'),
  write_lag_seconds: gauge('write_lag (NULL once caught up and idle).'),
  flush_lag_seconds: gauge('flush_lag (NULL once caught up and idle).'),
  replay_lag_seconds: gauge('replay_lag (NULL once caught up and idle).'),
  backend_xmin_age_xids: gauge('Age of the standby\'s feedback xmin (hot_standby_feedback without a slot).'),
  reply_timestamp_seconds: gauge('Last reply from the standby, epoch seconds.'),
});

const COLUMNS = [
  ['sent_lsn_bytes', M.sent_lsn_bytes], ['write_lsn_bytes', M.write_lsn_bytes], ['flush_lsn_bytes', M.flush_lsn_bytes],
  ['replay_lsn_bytes', M.replay_lsn_bytes], ['send_lag_bytes', M.send_lag_bytes], ['write_lag_bytes', M.write_lag_bytes],
  ['flush_lag_bytes', M.flush_lag_bytes], ['replay_lag_bytes', M.replay_lag_bytes],
  ['write_lag_seconds', M.write_lag_seconds], ['flush_lag_seconds', M.flush_lag_seconds],
  ['replay_lag_seconds', M.replay_lag_seconds], ['backend_xmin_age_xids', M.backend_xmin_age_xids],
  ['reply_time', M.reply_timestamp_seconds],
] as const;

/** Pure: rows of STAT_REPLICATION_SQL -> samples. */
export function mapStatReplication(rows: readonly Row[], ctx: MapContext): Sample[] {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  for (const row of rows) {
    const labels = { application_name: label(row, 'application_name'), client_addr: label(row, 'client_addr'), kind: label(row, 'kind') };
    b.add(M.info, {
      ...labels,
      pid: String(num(row, 'pid') ?? ''),
      state: text(row, 'state') ?? '',
      sync_state: text(row, 'sync_state') ?? '',
      slot_name: label(row, 'slot_name'),
    }, 1);
    for (const [column, def] of COLUMNS) b.add(def, labels, num(row, column));
  }
  return b.samples;
}

export function pgStatReplicationCollector(options: CollectorOptions = {}): Collector {
  return queryCollector({
    name: P,
    scope: 'server',
    intervalMs: 5_000,
    metrics: Object.values(M),
    sql: () => STAT_REPLICATION_SQL,
    map: mapStatReplication,
  }, options);
}
