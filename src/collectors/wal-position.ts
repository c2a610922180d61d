/**
 * SQL for "where WAL is now" on this server: pg_current_wal_lsn() on a primary; on a standby
 * (where that function errors) the further of received and replayed WAL.
 */
export const WAL_POSITION_SQL = `CASE WHEN pg_is_in_recovery()
              THEN greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())
              ELSE pg_current_wal_lsn() END`;
