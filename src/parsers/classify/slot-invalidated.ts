/**
 * Replication slot invalidation (slot.c, LOG, checkpointer or startup process):
 * - 13-15: `invalidating slot "<name>" because its restart_lsn <lsn> exceeds max_slot_wal_keep_size`
 *   (the only cause those versions have: WAL removed).
 * - 16+: `invalidating obsolete replication slot "<name>"` with the cause in the DETAIL.
 * - all: `terminating process N to release replication slot "<name>"` first when a process holds
 *   the slot (16+: same DETAIL); phase terminating_holder, so invalidations are not counted twice.
 */
import type { LogEntry, SlotInvalidatedDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { LSN_PATTERN, toInt } from './fields.js';

const OLD_FORM = new RegExp(`^invalidating slot "(.*)" because its restart_lsn (${LSN_PATTERN}) exceeds max_slot_wal_keep_size$`);
const NEW_FORM = /^invalidating obsolete replication slot "(.*)"$/;
const TERMINATING = /^terminating process (\d+) to release replication slot "(.*)"$/;

const WAL_REMOVED = new RegExp(`^The slot's restart_lsn (${LSN_PATTERN}) exceeds the limit by (\\d+) bytes?\\.$`);
const ROWS_REMOVED = /^The slot conflicted with xid horizon (\d+)\.$/;
// 16 unquoted, 17-18 quoted GUC names, 19 a new sentence: match the common start.
const WAL_LEVEL = /^Logical decoding on standby requires /;
// PG 18+.
const IDLE = /^The slot's idle time of (\d+)s exceeds the configured "[^"]*" duration of (\d+)s\.$/;

export function classifySlotInvalidated(entry: LogEntry, message: string): Classification | null {
  const details: SlotInvalidatedDetails = {
    slot: '',
    phase: 'invalidated',
    reason: null,
    terminated_pid: null,
    restart_lsn: null,
    exceeded_bytes: null,
    conflict_xid: null,
    idle_s: null,
    idle_timeout_s: null,
    detail: entry.detail?.trim() ?? null,
  };
  const old = OLD_FORM.exec(message);
  const current = old ? null : NEW_FORM.exec(message);
  const terminating = old || current ? null : TERMINATING.exec(message);
  if (old) {
    details.slot = old[1] ?? '';
    details.reason = 'wal_removed';
    details.restart_lsn = old[2] ?? null;
  } else if (current) {
    details.slot = current[1] ?? '';
  } else if (terminating) {
    details.slot = terminating[2] ?? '';
    details.phase = 'terminating_holder';
    details.terminated_pid = toInt(terminating[1]);
  } else {
    return null;
  }
  readCause(details);
  return { kind: 'slot_invalidated', details };
}

function readCause(d: SlotInvalidatedDetails): void {
  if (d.detail === null) return;
  let g: RegExpExecArray | null;
  if ((g = WAL_REMOVED.exec(d.detail))) {
    d.reason = 'wal_removed';
    d.restart_lsn = g[1] ?? null;
    d.exceeded_bytes = toInt(g[2]);
  } else if ((g = ROWS_REMOVED.exec(d.detail))) {
    d.reason = 'rows_removed';
    d.conflict_xid = toInt(g[1]);
  } else if (WAL_LEVEL.test(d.detail)) {
    d.reason = 'wal_level_insufficient';
  } else if ((g = IDLE.exec(d.detail))) {
    d.reason = 'idle_timeout';
    d.idle_s = toInt(g[1]);
    d.idle_timeout_s = toInt(g[2]);
  }
}
