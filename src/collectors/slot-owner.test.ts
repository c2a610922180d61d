import { describe, expect, it } from 'vitest';
import { classifySlotOwner, type SlotFacts } from './slot-owner.js';

const slot = (facts: Partial<SlotFacts>): SlotFacts => ({
  slotName: 's', slotType: 'logical', plugin: null, temporary: false, activePid: null,
  activeBackendType: null, activeLeaderPid: null, activeApplicationName: null, ...facts,
});

describe('classifySlotOwner', () => {
  it.each([
    // As seen on 19rc1: the slot named after the decoding worker, whose leader is the REPACK session.
    ['PG 19 REPACK', { slotName: 'pg_repack_18703', plugin: 'pgrepack', temporary: true, activePid: 18703,
      activeBackendType: 'REPACK decoding worker', activeLeaderPid: 18702 }, 'repack', 18702, true],
    ['REPACK slot before its worker shows in pg_stat_activity', { slotName: 'pg_repack_5', plugin: 'pgrepack', temporary: true, activePid: 5 },
      'repack', 5, true],
    ['a user slot that only looks like REPACK\'s', { slotName: 'pg_repack_1', plugin: 'test_decoding', temporary: false }, 'logical_decoding', null, false],
    ['pg_squeeze', { slotName: 'pg_squeeze_slot_16384_0', plugin: 'pg_squeeze', activePid: 77 }, 'pg_squeeze', 77, true],
    ['a subscription', { slotName: 'sub1', plugin: 'pgoutput', activePid: 90, activeBackendType: 'walsender', activeApplicationName: 'sub1' },
      'logical_subscription', 90, false],
    ['wal2json', { slotName: 'cdc', plugin: 'wal2json' }, 'logical_decoding', null, false],
    ['a standby', { slotName: 'standby_a', slotType: 'physical', activePid: 12, activeBackendType: 'walsender', activeApplicationName: 'walreceiver' },
      'physical_standby', 12, false],
    ['a standby that is down', { slotName: 'standby_b', slotType: 'physical' }, 'physical_standby', null, false],
    ['pg_receivewal', { slotName: 'archive', slotType: 'physical', activePid: 3, activeApplicationName: 'pg_receivewal' }, 'wal_tool', 3, false],
    ['PG 19 conflict detection', { slotName: 'pg_conflict_detection', slotType: 'physical' }, 'conflict_detection', null, false],
  ] as const)('%s', (_, facts, owner, ownerPid, holdsAllTables) => {
    expect(classifySlotOwner(slot(facts))).toEqual({ owner, ownerPid, holdsAllTables });
  });
});
