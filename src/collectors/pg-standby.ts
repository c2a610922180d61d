/**
 * The standby side of replication, sampled often (default every second) so that replay standing
 * still while WAL keeps arriving is visible (replay-progress.ts): received and replayed LSN, the
 * last replayed commit's time, replay pause, the walreceiver (pg_stat_wal_receiver), what the
 * startup process waits on (pg_stat_activity), and PG 19's pg_stat_recovery, where
 * replay_end_lsn ahead of last_replayed_end_lsn means replay is stuck inside one record (the
 * commit of a large DROP unlinking its files, measured on 19rc1).
 */
import type { Sample } from '../domain/index.js';
import type { Collector, CollectorOptions, MapContext, Row } from './collector.js';
import { DEFAULT_TIMEOUT_MS, majorVersion } from './collector.js';
import { gauge, metricDefs, SampleBuilder } from './metric-defs.js';
import { flag, label, num, text } from './row.js';
import { deriveReplayProgress, type ReplayState } from './replay-progress.js';

const lsnBytes = (expr: string, as: string): string => `pg_wal_lsn_diff(${expr}, '0/0')::float8 AS ${as}`;
const epoch = (expr: string, as: string): string => `extract(epoch FROM ${expr})::float8 AS ${as}`;

export function standbySql(major: number): string {
  return `
SELECT ${lsnBytes('pg_last_wal_receive_lsn()', 'receive_lsn_bytes')},
       ${lsnBytes('pg_last_wal_replay_lsn()', 'replay_lsn_bytes')},
       ${epoch('pg_last_xact_replay_timestamp()', 'last_xact_replay_time')},
       extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 AS replay_delay_seconds,
       pg_is_wal_replay_paused() AS replay_paused,
       ${major >= 14 ? 'pg_get_wal_replay_pause_state()' : 'NULL::text'} AS pause_state, -- PG 14+
       st.wait_event_type AS startup_wait_event_type, st.wait_event AS startup_wait_event,
       w.pid IS NOT NULL AS receiver_running, w.status AS receiver_status,
       w.sender_host, w.sender_port, w.slot_name AS receiver_slot_name,
       ${lsnBytes('w.written_lsn', 'receiver_written_lsn_bytes')},
       ${lsnBytes('w.flushed_lsn', 'receiver_flushed_lsn_bytes')},
       ${lsnBytes('w.latest_end_lsn', 'receiver_latest_end_lsn_bytes')},
       ${epoch('w.last_msg_send_time', 'receiver_last_msg_send_time')},
       ${epoch('w.last_msg_receipt_time', 'receiver_last_msg_receipt_time')},
       ${epoch('w.latest_end_time', 'receiver_latest_end_time')},
       ${epoch('clock_timestamp() - w.last_msg_receipt_time', 'receiver_silent_seconds')}${major >= 19 ? `,
       -- PG 19+: pg_stat_recovery (one row while in recovery)
       ${lsnBytes('rc.last_replayed_read_lsn', 'recovery_last_replayed_read_lsn_bytes')},
       ${lsnBytes('rc.last_replayed_end_lsn', 'recovery_last_replayed_end_lsn_bytes')},
       ${lsnBytes('rc.replay_end_lsn', 'recovery_replay_end_lsn_bytes')},
       ${epoch('rc.current_chunk_start_time', 'recovery_current_chunk_start_time')},
       rc.promote_triggered AS recovery_promote_triggered` : ''}
FROM (SELECT 1) AS one
LEFT JOIN pg_stat_wal_receiver w ON true
LEFT JOIN LATERAL (SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE backend_type = 'startup' LIMIT 1) st ON true${
  major >= 19 ? `
LEFT JOIN pg_stat_recovery rc ON true` : ''}`;
}

const S = metricDefs('pg_standby', {
  receive_lsn_bytes: gauge('pg_last_wal_receive_lsn(): WAL received and flushed, as a byte position.'),
  replay_lsn_bytes: gauge('pg_last_wal_replay_lsn(): WAL replayed, as a byte position.'),
  replay_pending_bytes: gauge('Received but not yet replayed WAL.'),
  replay_standing_still_seconds: gauge('Seconds replay has not moved while received WAL waits (0 when moving or caught up).'),
  last_xact_replay_timestamp_seconds: gauge('Commit time of the last replayed transaction, epoch seconds.'),
  replay_delay_seconds: gauge('now() minus the last replayed commit time (grows on an idle primary too).'),
  replay_paused: gauge('pg_is_wal_replay_paused() (14+: true as soon as a pause is requested).'),
  replay_pause_state: gauge('Always 1; label pause_state: not paused, pause requested, paused (PG 14+).'),
  startup_wait_event: gauge('Always 1; what the startup process waits on (wait_event_type, wait_event; empty: running).'),
});
const W = metricDefs('pg_stat_wal_receiver', {
  up: gauge('1 while a walreceiver runs.'),
  info: gauge('Always 1 while a walreceiver runs; labels status, sender_host, sender_port, slot_name.'),
  written_lsn_bytes: gauge('WAL written by the walreceiver, as a byte position.'),
  flushed_lsn_bytes: gauge('WAL flushed by the walreceiver, as a byte position.'),
  latest_end_lsn_bytes: gauge('Last WAL position reported by the sender.'),
  last_msg_send_timestamp_seconds: gauge('Send time of the last message from the sender, epoch seconds.'),
  last_msg_receipt_timestamp_seconds: gauge('Receipt time of the last message from the sender, epoch seconds.'),
  latest_end_timestamp_seconds: gauge('Time of the last WAL position reported by the sender, epoch seconds.'),
  silent_seconds: gauge('Seconds since the last message from the sender, by the standby\'s own clock (so no skew with pgvigil\'s).'),
});
const R = metricDefs('pg_stat_recovery', {
  last_replayed_read_lsn_bytes: gauge('Start of the last replayed record (PG 19+).'),
  last_replayed_end_lsn_bytes: gauge('End of the last replayed record (PG 19+).'),
  replay_end_lsn_bytes: gauge('End of the record being replayed (PG 19+).'),
  in_record_bytes: gauge('replay_end_lsn - last_replayed_end_lsn: > 0 while replay is inside one record (PG 19+).'),
  current_chunk_start_timestamp_seconds: gauge('When the WAL chunk being replayed was received, epoch seconds (PG 19+).'),
  promote_triggered: gauge('1 once promotion was requested (PG 19+).'),
});

const RECEIVER_COLUMNS = [
  ['receiver_written_lsn_bytes', W.written_lsn_bytes], ['receiver_flushed_lsn_bytes', W.flushed_lsn_bytes],
  ['receiver_latest_end_lsn_bytes', W.latest_end_lsn_bytes],
  ['receiver_last_msg_send_time', W.last_msg_send_timestamp_seconds],
  ['receiver_last_msg_receipt_time', W.last_msg_receipt_timestamp_seconds],
  ['receiver_latest_end_time', W.latest_end_timestamp_seconds],
  ['receiver_silent_seconds', W.silent_seconds],
] as const;

/**
 * Pure: the one row of standbySql plus the previous replay state -> samples and the next state.
 */
export function mapStandby(row: Row, ctx: MapContext, prev: ReplayState | null): { samples: Sample[]; state: ReplayState | null } {
  const b = new SampleBuilder(ctx.target, ctx.nowMs);
  const none = {};
  const receive = num(row, 'receive_lsn_bytes');
  const replay = num(row, 'replay_lsn_bytes');
  const { state, progress } = deriveReplayProgress(prev, { tsMs: ctx.nowMs, receiveLsnBytes: receive, replayLsnBytes: replay });
  b.add(S.receive_lsn_bytes, none, receive);
  b.add(S.replay_lsn_bytes, none, replay);
  b.add(S.replay_pending_bytes, none, progress.pendingBytes);
  b.add(S.replay_standing_still_seconds, none, progress.standingStillSeconds);
  b.add(S.last_xact_replay_timestamp_seconds, none, num(row, 'last_xact_replay_time'));
  b.add(S.replay_delay_seconds, none, num(row, 'replay_delay_seconds'));
  b.add(S.replay_paused, none, flag(row, 'replay_paused'));
  const pauseState = text(row, 'pause_state');
  if (pauseState !== null) b.add(S.replay_pause_state, { pause_state: pauseState }, 1);
  b.add(S.startup_wait_event, {
    wait_event_type: label(row, 'startup_wait_event_type'),
    wait_event: label(row, 'startup_wait_event'),
  }, 1);

  const receiverRunning = flag(row, 'receiver_running') ?? 0;
  b.add(W.up, none, receiverRunning);
  if (receiverRunning === 1) {
    b.add(W.info, {
      status: label(row, 'receiver_status'),
      sender_host: label(row, 'sender_host'),
      sender_port: label(row, 'sender_port'),
      slot_name: label(row, 'receiver_slot_name'),
    }, 1);
    for (const [column, def] of RECEIVER_COLUMNS) b.add(def, none, num(row, column));
  }

  if (majorVersion(ctx.server) >= 19) { // PG 19+: pg_stat_recovery
    const lastEnd = num(row, 'recovery_last_replayed_end_lsn_bytes');
    const replayEnd = num(row, 'recovery_replay_end_lsn_bytes');
    b.add(R.last_replayed_read_lsn_bytes, none, num(row, 'recovery_last_replayed_read_lsn_bytes'));
    b.add(R.last_replayed_end_lsn_bytes, none, lastEnd);
    b.add(R.replay_end_lsn_bytes, none, replayEnd);
    b.add(R.in_record_bytes, none, lastEnd === null || replayEnd === null ? null : replayEnd - lastEnd);
    b.add(R.current_chunk_start_timestamp_seconds, none, num(row, 'recovery_current_chunk_start_time'));
    b.add(R.promote_triggered, none, flag(row, 'recovery_promote_triggered'));
  }
  return { samples: b.samples, state };
}

/** One instance per target: it keeps the last replay position to measure standing still. */
export function pgStandbyCollector(options: CollectorOptions = {}): Collector {
  let state: ReplayState | null = null;
  return {
    name: 'pg_standby',
    intervalMs: options.intervalMs ?? 1_000,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    scope: 'server',
    metrics: [...Object.values(S), ...Object.values(W), ...Object.values(R)],
    supports: (server) => server.inRecovery,
    async collect(ctx) {
      const [row] = await ctx.query(standbySql(majorVersion(ctx.server)));
      if (!row) return [];
      const result = mapStandby(row, ctx, state);
      state = result.state;
      return result.samples;
    },
  };
}
