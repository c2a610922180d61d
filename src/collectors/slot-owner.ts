/**
 * Who owns a replication slot, recognised by what it is rather than by a non-null xmin.
 *
 * Measured on a real 19rc1 (pg-messages.md §13.2): REPACK (CONCURRENTLY)'s temporary slot shows
 * `xmin` NULL and only a `catalog_xmin`, yet its decoding worker held user tables in every
 * database at one removable cutoff for the whole run. The same holds for pg_squeeze (seed
 * 000_ddfba2eacd9de59b.txt). So these owners are marked as holding all tables, with the slot's
 * catalog_xmin age as a lower bound of the hold.
 */

export type SlotOwner =
  /** PG 19 REPACK (CONCURRENTLY): plugin pgrepack, temporary, `pg_repack_<decoding worker pid>`. */
  | 'repack'
  /** pg_squeeze extension: plugin pg_squeeze, `pg_squeeze_slot_<dboid>_<n>`. */
  | 'pg_squeeze'
  /** Logical replication (a subscription's or a CDC tool's pgoutput stream). */
  | 'logical_subscription'
  /** Any other logical decoding consumer (test_decoding, wal2json, pg_recvlogical...). */
  | 'logical_decoding'
  /** PG 19 retain_dead_tuples subscriptions' `pg_conflict_detection` slot. */
  | 'conflict_detection'
  /** A physical standby streaming (or meant to stream) from this slot. */
  | 'physical_standby'
  /** pg_receivewal / pg_basebackup. */
  | 'wal_tool';

export interface SlotFacts {
  slotName: string;
  slotType: string | null;
  plugin: string | null;
  temporary: boolean | null;
  activePid: number | null;
  /** pg_stat_activity of active_pid. */
  activeBackendType: string | null;
  activeLeaderPid: number | null;
  activeApplicationName: string | null;
}

export interface SlotOwnership {
  owner: SlotOwner;
  /** The session that owns the work: REPACK's session (the worker's leader), else active_pid. */
  ownerPid: number | null;
  /** True when the slot holds back vacuum of user tables in every database, xmin or not. */
  holdsAllTables: boolean;
}

const REPACK_SLOT_NAME = /^pg_repack_\d+$/;
const REPACK_WORKER = 'REPACK decoding worker';
const WAL_TOOLS = new Set(['pg_receivewal', 'pg_basebackup']);

export function classifySlotOwner(slot: SlotFacts): SlotOwnership {
  const owner = ownerOf(slot);
  const ownerPid = owner === 'repack' && slot.activeLeaderPid !== null ? slot.activeLeaderPid : slot.activePid;
  return { owner, ownerPid, holdsAllTables: owner === 'repack' || owner === 'pg_squeeze' };
}

function ownerOf(slot: SlotFacts): SlotOwner {
  if (slot.slotType === 'physical') {
    if (slot.slotName === 'pg_conflict_detection') return 'conflict_detection';
    return slot.activeApplicationName !== null && WAL_TOOLS.has(slot.activeApplicationName) ? 'wal_tool' : 'physical_standby';
  }
  // PG 19: REPACK's slot. The name alone could be a user's; the plugin or the worker confirms it.
  if (
    slot.plugin === 'pgrepack' ||
    (REPACK_SLOT_NAME.test(slot.slotName) && (slot.temporary === true || slot.activeBackendType === REPACK_WORKER))
  ) {
    return 'repack';
  }
  if (slot.plugin === 'pg_squeeze' || slot.slotName.startsWith('pg_squeeze_slot_')) return 'pg_squeeze';
  if (slot.slotName === 'pg_conflict_detection') return 'conflict_detection';
  if (slot.plugin === 'pgoutput') return 'logical_subscription';
  return 'logical_decoding';
}
