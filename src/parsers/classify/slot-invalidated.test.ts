import { describe, expect, it } from 'vitest';
import type { SlotInvalidatedDetails } from '../../domain/index.js';
import { detailsOf, stderrEntries, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 05:10:00.010 UTC [3001] ';

function slot(text: string): SlotInvalidatedDetails {
  return detailsOf(classifyEntry(stderrEntry(text), 't1'), 'slot_invalidated');
}

describe('slot_invalidated (§5.1)', () => {
  it('reads the 13-15 form', () => {
    expect(slot(`${AT}LOG:  invalidating slot "cdc_slot" because its restart_lsn 3/1C000000 exceeds max_slot_wal_keep_size`)).toMatchObject({
      slot: 'cdc_slot', phase: 'invalidated', reason: 'wal_removed', restart_lsn: '3/1C000000', exceeded_bytes: null, detail: null,
    });
  });

  it('reads the §5.1 PG 17 example: the holder is terminated, then the slot invalidated', () => {
    const [terminating, invalidated] = stderrEntries([
      `${AT}LOG:  terminating process 70112 to release replication slot "cdc_slot"`,
      `${AT}DETAIL:  The slot's restart_lsn 3/1C000000 exceeds the limit by 16777216 bytes.`,
      `${AT}HINT:  You might need to increase "max_slot_wal_keep_size".`,
      `${AT}LOG:  invalidating obsolete replication slot "cdc_slot"`,
      `${AT}DETAIL:  The slot's restart_lsn 3/1C000000 exceeds the limit by 16777216 bytes.`,
      `${AT}HINT:  You might need to increase "max_slot_wal_keep_size".`,
    ].join('\n')).map((entry) => detailsOf(classifyEntry(entry, 't1'), 'slot_invalidated'));
    expect(terminating).toMatchObject({ slot: 'cdc_slot', phase: 'terminating_holder', terminated_pid: 70112, reason: 'wal_removed' });
    expect(invalidated).toMatchObject({ slot: 'cdc_slot', phase: 'invalidated', reason: 'wal_removed', restart_lsn: '3/1C000000', exceeded_bytes: 16777216 });
  });

  it.each<[string, Partial<SlotInvalidatedDetails>]>([
    ["The slot's restart_lsn 0/0160A3F8 exceeds the limit by 1 byte.", { reason: 'wal_removed', restart_lsn: '0/0160A3F8', exceeded_bytes: 1 }],
    ['The slot conflicted with xid horizon 1873421.', { reason: 'rows_removed', conflict_xid: 1873421 }],
    ['Logical decoding on standby requires wal_level >= logical on the primary server.', { reason: 'wal_level_insufficient' }],
    ['Logical decoding on standby requires "wal_level" >= "logical" on the primary server.', { reason: 'wal_level_insufficient' }],
    ['Logical decoding on standby requires the primary server to either set "wal_level" >= "logical" or have at least one logical slot when "wal_level" = "replica".', { reason: 'wal_level_insufficient' }],
    ['The slot\'s idle time of 90061s exceeds the configured "idle_replication_slot_timeout" duration of 86400s.', { reason: 'idle_timeout', idle_s: 90061, idle_timeout_s: 86400 }],
    ['A cause no version prints.', { reason: null }],
  ])('DETAIL %s', (detail, expected) => {
    expect(slot(`${AT}LOG:  invalidating obsolete replication slot "s1"\n${AT}DETAIL:  ${detail}`)).toMatchObject(expected);
  });
});
