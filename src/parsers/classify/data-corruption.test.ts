import { describe, expect, it } from 'vitest';
import type { DataCorruptionDetails } from '../../domain/index.js';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

// Lines as real servers wrote them here, reading a page flipped on disk (the probe behind
// test/fixtures/rule-logs/*-data-page-corrupted.*): 13-17 a page header made invalid, 18 and 19rc1 a
// data byte under data checksums (on by default from 18), read by an I/O worker and the backend.
const corruption = (text: string): DataCorruptionDetails => detailsOf(classifyEntry(stderrEntry(text), 't1'), 'data_corruption');

describe('data_corruption', () => {
  it.each<[string, string, Partial<DataCorruptionDetails>]>([
    ['13: unquoted, its own template database oid', '2026-12-03 13:41:55.982 UTC [1318] postgres@postgres ERROR:  invalid page in block 0 of relation base/13391/16384',
      { problem: 'invalid_page', relation_path: 'base/13391/16384', database_oid: 13391, relfilenode: 16384, block: 0, zeroed: false }],
    ['15 and 17: unquoted', '2026-12-03 13:42:08.358 UTC [1569] postgres@postgres ERROR:  invalid page in block 7 of relation base/5/16384',
      { relation_path: 'base/5/16384', database_oid: 5, block: 7 }],
    ['18+: quoted, from an I/O worker at LOG', '2026-12-03 13:41:22.166 UTC [357] LOG:  invalid page in block 0 of relation "base/5/16384"',
      { problem: 'invalid_page', relation_path: 'base/5/16384', database_oid: 5, relfilenode: 16384, block: 0 }],
    ['a shared catalog', '2026-12-03 13:41:22.166 UTC [357] ERROR:  invalid page in block 3 of relation global/1262',
      { relation_path: 'global/1262', database_oid: null, relfilenode: 1262, block: 3 }],
    ['a later segment of a large table', '2026-12-03 13:41:22.166 UTC [357] ERROR:  invalid page in block 131075 of relation base/5/16384.1',
      { relation_path: 'base/5/16384.1', database_oid: 5, relfilenode: 16384, block: 131075 }],
    ['zero_damaged_pages', '2026-12-03 13:41:22.166 UTC [357] WARNING:  invalid page in block 0 of relation base/5/16384; zeroing out page',
      { relation_path: 'base/5/16384', zeroed: true }],
    ['the checksum line before it', '2026-12-03 13:41:22.166 UTC [357] LOG:  page verification failed, calculated checksum 421 but expected 61252',
      { problem: 'checksum_mismatch', relation_path: null, calculated_checksum: 421, expected_checksum: 61252 }],
  ])('%s', (_, line, expected) => expect(corruption(line)).toMatchObject(expected));

  it('leaves other "invalid ..." and "page ..." lines alone', () => {
    for (const message of ['invalid page header in block 0', 'page verification failed somehow', 'invalid input syntax for type integer: "x"']) {
      expect(classifyEntry(stderrEntry(`2026-12-03 13:41:22.166 UTC [357] ERROR:  ${message}`), 't1').kind).toBe('generic');
    }
  });
});
