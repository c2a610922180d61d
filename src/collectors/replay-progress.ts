/**
 * Is a standby's replay standing still while WAL keeps arriving? From consecutive samples of
 * pg_last_wal_receive_lsn() / pg_last_wal_replay_lsn(): the seconds since replay last moved,
 * counted only while received WAL waits to be replayed (a caught-up standby of an idle primary
 * stands still too, and that is fine). This is what the "replay stalled" rules read: a replica
 * stuck on a recovery-conflict lock or unlinking a dropped table's files (seed
 * 003_e3cc2138bb41931f.txt) looks exactly like this. Pure: previous state in, next state out.
 */

export interface ReplayObservation {
  tsMs: number;
  /** Byte positions; null when the server reports NULL (e.g. receive before streaming starts). */
  receiveLsnBytes: number | null;
  replayLsnBytes: number | null;
}

export interface ReplayState {
  replayLsnBytes: number;
  /** When replay was first seen at replayLsnBytes. */
  sinceMs: number;
}

export interface ReplayProgress {
  /** Received but not replayed; null when either position is unknown. */
  pendingBytes: number | null;
  /** 0 while replay moves or nothing is pending; null when either position is unknown. */
  standingStillSeconds: number | null;
}

export function deriveReplayProgress(
  prev: ReplayState | null,
  now: ReplayObservation,
): { state: ReplayState | null; progress: ReplayProgress } {
  const { receiveLsnBytes: receive, replayLsnBytes: replay } = now;
  // The walreceiver restarts from the start of a segment, so received can briefly read behind replay.
  const pendingBytes = receive === null || replay === null ? null : Math.max(0, receive - replay);
  if (replay === null) return { state: null, progress: { pendingBytes, standingStillSeconds: null } };
  const state = prev !== null && prev.replayLsnBytes === replay ? prev : { replayLsnBytes: replay, sinceMs: now.tsMs };
  const standingStillSeconds = pendingBytes === null ? null : pendingBytes > 0 ? (now.tsMs - state.sinceMs) / 1000 : 0;
  return { state, progress: { pendingBytes, standingStillSeconds } };
}
