import { describe, expect, it } from 'vitest';
import type { AutovacuumDetails } from '../../domain/index.js';
import { detailsOf, logEntry, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const PREFIX = '2026-10-14 03:12:45.123 UTC [41235] LOG:  ';

/** A report as stderr prints it: the header after the prefix, each further line after a TAB. */
function report(header: string, lines: string[]): string {
  return [PREFIX + header, ...lines.map((line) => `\t${line}`)].join('\n');
}

function autovacuum(text: string): AutovacuumDetails {
  return detailsOf(classifyEntry(stderrEntry(text), 't1'), 'autovacuum');
}

const USAGE_13_17 = [
  'avg read rate: 14.221 MB/s, avg write rate: 9.817 MB/s',
  'buffer usage: 90512 hits, 40110 misses, 27700 dirtied',
  'WAL usage: 98211 records, 30111 full page images, 251234567 bytes',
  'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
];

const USAGE_EXPECTED = {
  read_rate_mbs: 14.221,
  write_rate_mbs: 9.817,
  buffer_hits: 90512,
  buffer_reads: 40110,
  buffer_dirtied: 27700,
  wal_records: 98211,
  wal_fpi: 30111,
  wal_bytes: 251234567,
  cpu_user_s: 3.21,
  cpu_system_s: 1.02,
  elapsed_s: 22.03,
};

// Lines from pg-messages.md §1.3 / §1.5 (examples there, or the version's format strings filled in).
const CASES: Array<{ version: string; text: string; expected: Partial<AutovacuumDetails>; absent: Array<keyof AutovacuumDetails> }> = [
  {
    version: '13 (§1.5 example: buffer usage before the rates, WAL usage last)',
    text: report('automatic vacuum of table "shop.public.orders": index scans: 1', [
      'pages: 0 removed, 125000 remain, 0 skipped due to pins, 84512 skipped frozen',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable, oldest xmin: 1873421',
      'buffer usage: 90512 hits, 40110 misses, 27700 dirtied',
      'avg read rate: 14.221 MB/s, avg write rate: 9.817 MB/s',
      'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
      'WAL usage: 98211 records, 30111 full page images, 251234567 bytes',
    ]),
    expected: {
      database: 'shop', schema: 'public', table: 'orders', aggressive: false, wraparound: false, index_scans: 1,
      pages_removed: 0, pages_remain: 125000, pages_skipped_pins: 0, pages_skipped_frozen: 84512,
      tuples_removed: 912345, tuples_remain: 8123456, tuples_dead_not_removable: 20310, removable_cutoff_xid: 1873421,
      indexes: [], ...USAGE_EXPECTED,
    },
    absent: ['pages_scanned', 'removable_cutoff_age_xids', 'index_scan', 'frozen_pages', 'io_read_ms', 'wal_fpi_bytes', 'wal_buffers_full', 'parallel_workers_planned', 'dead_item_storage_mb'],
  },
  {
    version: '14 (index-scan line, per-index lines, I/O timings)',
    text: report('automatic vacuum of table "shop.public.orders": index scans: 1', [
      'pages: 0 removed, 125000 remain, 0 skipped due to pins, 84512 skipped frozen',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable, oldest xmin: 1873421',
      'index scan needed: 24111 pages from table (19.29% of total) had 912345 dead item identifiers removed',
      'index "orders_pkey": pages: 25000 in total, 120 newly deleted, 300 currently deleted, 180 reusable',
      'I/O timings: read: 812.331 ms, write: 95.002 ms',
      ...USAGE_13_17,
    ]),
    expected: {
      pages_skipped_frozen: 84512, removable_cutoff_xid: 1873421,
      index_scan: { state: 'needed', pages: 24111, pages_pct: 19.29, dead_item_ids: 912345 },
      indexes: [{ name: 'orders_pkey', pages_total: 25000, pages_newly_deleted: 120, pages_deleted: 300, pages_free: 180 }],
      io_read_ms: 812.331, io_write_ms: 95.002, ...USAGE_EXPECTED,
    },
    absent: ['pages_scanned', 'removable_cutoff_age_xids', 'frozen_pages', 'wal_fpi_bytes'],
  },
  {
    version: '15 (scanned %, removable cutoff, missed tuples, relfrozenxid/relminmxid, bypass)',
    text: report('automatic aggressive vacuum of table "shop.public.orders": index scans: 0', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable',
      'tuples missed: 120 dead from 7 pages not removed due to cleanup lock contention',
      'removable cutoff: 1873421, which was 48211 XIDs old when operation ended',
      'new relfrozenxid: 1650002, which is 120001 XIDs ahead of previous value',
      'new relminmxid: 2001, which is 12 MXIDs ahead of previous value',
      'index scan bypassed: 812 pages from table (0.65% of total) have 4012 dead item identifiers',
      ...USAGE_13_17,
    ]),
    expected: {
      aggressive: true, wraparound: false, index_scans: 0, pages_scanned: 40213, pages_scanned_pct: 32.17,
      tuples_missed_dead: 120, tuples_missed_dead_pages: 7,
      removable_cutoff_xid: 1873421, removable_cutoff_age_xids: 48211,
      new_relfrozenxid: 1650002, new_relfrozenxid_advance_xids: 120001, new_relminmxid: 2001, new_relminmxid_advance_mxids: 12,
      index_scan: { state: 'bypassed', pages: 812, pages_pct: 0.65, dead_item_ids: 4012 },
      ...USAGE_EXPECTED,
    },
    absent: ['pages_skipped_pins', 'pages_skipped_frozen', 'frozen_pages', 'pages_eagerly_scanned', 'vm_pages_all_visible'],
  },
  {
    version: '16/17 (§1.5 example: frozen line, wraparound)',
    text: report('automatic aggressive vacuum to prevent wraparound of table "shop.public.orders": index scans: 1', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable',
      'removable cutoff: 1873421, which was 48211 XIDs old when operation ended',
      'new relfrozenxid: 1650002, which is 120001 XIDs ahead of previous value',
      'frozen: 5120 pages from table (4.10% of total) had 301223 tuples frozen',
      'index scan needed: 24111 pages from table (19.29% of total) had 912345 dead item identifiers removed',
      'index "orders_pkey": pages: 25000 in total, 120 newly deleted, 300 currently deleted, 180 reusable',
      'I/O timings: read: 812.331 ms, write: 95.002 ms',
      ...USAGE_13_17,
    ]),
    expected: {
      aggressive: true, wraparound: true, frozen_pages: 5120, frozen_pages_pct: 4.1, tuples_frozen: 301223,
      removable_cutoff_age_xids: 48211, ...USAGE_EXPECTED,
    },
    absent: ['new_relminmxid', 'tuples_missed_dead', 'pages_eagerly_scanned', 'vm_pages_all_visible', 'delay_time_ms', 'wal_buffers_full'],
  },
  {
    version: '18 (eagerly scanned, visibility map, delay time, "reads", buffers full; a TOAST table)',
    text: report('automatic vacuum of table "shop.pg_toast.pg_toast_16402": index scans: 0', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total), 812 eagerly scanned',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable',
      'removable cutoff: 1873421, which was 48211 XIDs old when operation ended',
      'frozen: 5120 pages from table (4.10% of total) had 301223 tuples frozen',
      'visibility map: 38211 pages set all-visible, 30222 pages set all-frozen (1203 were all-visible)',
      'index scan not needed: 0 pages from table (0.00% of total) had 0 dead item identifiers removed',
      'delay time: 1523.004 ms',
      'avg read rate: 14.221 MB/s, avg write rate: 9.817 MB/s',
      'buffer usage: 90512 hits, 40110 reads, 27700 dirtied',
      'WAL usage: 98211 records, 30111 full page images, 251234567 bytes, 12 buffers full',
      'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
    ]),
    expected: {
      schema: 'pg_toast', table: 'pg_toast_16402', pages_eagerly_scanned: 812,
      vm_pages_all_visible: 38211, vm_pages_all_frozen: 30222, vm_pages_were_all_visible: 1203,
      index_scan: { state: 'not_needed', pages: 0, pages_pct: 0, dead_item_ids: 0 },
      delay_time_ms: 1523.004, wal_buffers_full: 12, ...USAGE_EXPECTED,
    },
    absent: ['io_read_ms', 'wal_fpi_bytes', 'parallel_workers_planned', 'parallel_cleanup_workers_planned', 'dead_item_storage_mb'],
  },
  {
    version: '19 (§1.5 example: parallel workers, full page image bytes, memory usage)',
    text: report('automatic vacuum of table "shop.public.orders": index scans: 1', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total), 812 eagerly scanned',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable',
      'removable cutoff: 1873421, which was 48211 XIDs old when operation ended',
      'frozen: 5120 pages from table (4.10% of total) had 301223 tuples frozen',
      'visibility map: 38211 pages set all-visible, 30222 pages set all-frozen (1203 were all-visible)',
      'index scan needed: 24111 pages from table (19.29% of total) had 912345 dead item identifiers removed',
      'parallel workers: index vacuum: 2 planned, 2 launched in total',
      'parallel workers: index cleanup: 2 planned, 2 launched',
      'index "orders_pkey": pages: 25000 in total, 120 newly deleted, 300 currently deleted, 180 reusable',
      'index "orders_customer_idx": pages: 31000 in total, 0 newly deleted, 0 currently deleted, 0 reusable',
      'avg read rate: 14.221 MB/s, avg write rate: 9.817 MB/s',
      'buffer usage: 90512 hits, 40110 reads, 27700 dirtied',
      'WAL usage: 98211 records, 30111 full page images, 251234567 bytes, 221003456 full page image bytes, 12 buffers full',
      'memory usage: dead item storage 4.52 MB accumulated across 1 reset (limit 64.00 MB each)',
      'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
    ]),
    expected: {
      parallel_workers_planned: 2, parallel_workers_launched: 2,
      parallel_cleanup_workers_planned: 2, parallel_cleanup_workers_launched: 2,
      wal_fpi_bytes: 221003456, wal_buffers_full: 12,
      dead_item_storage_mb: 4.52, dead_item_storage_resets: 1, dead_item_storage_limit_mb: 64,
      ...USAGE_EXPECTED,
    },
    absent: ['delay_time_ms', 'io_read_ms', 'new_relfrozenxid', 'pages_skipped_pins'],
  },
  {
    version: '19 (bypassed by failsafe, several memory resets, planned > launched)',
    text: report('automatic aggressive vacuum to prevent wraparound of table "shop.public.events": index scans: 3', [
      'index scan bypassed by failsafe: 9000 pages from table (1.50% of total) have 120000 dead item identifiers',
      'parallel workers: index vacuum: 4 planned, 1 launched in total',
      'memory usage: dead item storage 2.83 MB accumulated across 3 resets (limit 1.00 MB each)',
    ]),
    expected: {
      index_scans: 3,
      index_scan: { state: 'bypassed_by_failsafe', pages: 9000, pages_pct: 1.5, dead_item_ids: 120000 },
      parallel_workers_planned: 4, parallel_workers_launched: 1,
      dead_item_storage_mb: 2.83, dead_item_storage_resets: 3, dead_item_storage_limit_mb: 1,
    },
    absent: ['parallel_cleanup_workers_planned', 'parallel_cleanup_workers_launched'],
  },
];

describe('autovacuum reports 13-19', () => {
  it.each(CASES)('PG $version', ({ text, expected, absent }) => {
    const details = autovacuum(text);
    expect(details).toMatchObject(expected);
    for (const field of absent) expect(details[field], field).toBeNull();
    expect(details.unknown_lines).toEqual([]);
  });

  it('keeps only the first line as the event message and names the database from the report', () => {
    const event = classifyEntry(stderrEntry(CASES[0]?.text ?? ''), 't1');
    expect(event.message).toBe('automatic vacuum of table "shop.public.orders": index scans: 1');
    expect(event.database).toBe('shop');
    expect(event.pid).toBe(41235);
    expect(event.target).toBe('t1');
  });
});

// seeds/002_484078be6aa57714.txt, verbatim; the article rendered the report's TABs as 8 spaces.
const SEED_SERIAL = `2026-10-18 19:45:55.201 +03 [2323] LOG:  automatic vacuum of table "vahiddb.public.person": index scans: 1
        pages: 0 removed, 88581 remain, 67964 scanned (76.73% of total), 0 eagerly scanned
        tuples: 3000000 removed, 5000070 remain, 0 are dead but not yet removable
        removable cutoff: 771, which was 0 XIDs old when operation ended
        frozen: 37038 pages from table (41.81% of total) had 3000058 tuples frozen
        visibility map: 67964 pages set all-visible, 67964 pages set all-frozen (0 were all-visible)
        index scan needed: 30927 pages from table (34.91% of total) had 3000000 dead item identifiers removed
        index "person_pk": pages: 21938 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_flname_idx": pages: 11218 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_lfaname_idx": pages: 72221 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_full_idx": pages: 103264 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        avg read rate: 16.980 MB/s, avg write rate: 14.303 MB/s
        buffer usage: 84022 hits, 291632 reads, 245655 dirtied
        WAL usage: 313620 records, 245655 full page images, 1048438885 bytes, 1018664200 full page image bytes, 98 buffers full
        memory usage: dead item storage 2.33 MB accumulated across 1 reset (limit 64.00 MB each)
        system usage: CPU: user: 6.97 s, system: 1.77 s, elapsed: 134.18 s`;

const SEED_PARALLEL = `2026-10-18 19:33:49.737 +03 [2273] LOG:  automatic vacuum of table "vahiddb.public.person": index scans: 1
        pages: 0 removed, 88581 remain, 67964 scanned (76.73% of total), 0 eagerly scanned
        tuples: 3000000 removed, 5000046 remain, 0 are dead but not yet removable
        removable cutoff: 762, which was 0 XIDs old when operation ended
        new relfrozenxid: 762, which is 6 XIDs ahead of previous value
        frozen: 37037 pages from table (41.81% of total) had 3000000 tuples frozen
        visibility map: 67964 pages set all-visible, 67964 pages set all-frozen (0 were all-visible)
        index scan needed: 30927 pages from table (34.91% of total) had 3000000 dead item identifiers removed
        parallel workers: index vacuum: 3 planned, 3 launched in total
        index "person_pk": pages: 21938 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_flname_idx": pages: 11218 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_lfaname_idx": pages: 72221 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        index "person_full_idx": pages: 103264 in total, 0 newly deleted, 0 currently deleted, 0 reusable
        avg read rate: 22.357 MB/s, avg write rate: 18.781 MB/s
        buffer usage: 83274 hits, 292440 reads, 245655 dirtied
        WAL usage: 313620 records, 245655 full page images, 1048438901 bytes, 1018664348 full page image bytes, 139 buffers full
        memory usage: dead item storage 3.00 MB accumulated across 1 reset (limit 64.00 MB each)
        system usage: CPU: user: 4.50 s, system: 0.93 s, elapsed: 102.18 s`;

function fromSeed(text: string): AutovacuumDetails {
  return autovacuum(text.replace(/^ {8}/gm, '\t'));
}

describe('PG 19 autovacuum entries from the parallel-autovacuum article (seed 002)', () => {
  it('reads the serial run: no parallel line, so the parallel fields stay null', () => {
    const d = fromSeed(SEED_SERIAL);
    expect(d).toMatchObject({
      database: 'vahiddb', schema: 'public', table: 'person', index_scans: 1,
      pages_remain: 88581, pages_scanned: 67964, pages_scanned_pct: 76.73, pages_eagerly_scanned: 0,
      tuples_removed: 3000000, tuples_remain: 5000070, tuples_dead_not_removable: 0,
      removable_cutoff_xid: 771, removable_cutoff_age_xids: 0,
      frozen_pages: 37038, tuples_frozen: 3000058,
      buffer_hits: 84022, buffer_reads: 291632, buffer_dirtied: 245655,
      wal_bytes: 1048438885, wal_fpi_bytes: 1018664200, wal_buffers_full: 98,
      dead_item_storage_mb: 2.33, elapsed_s: 134.18,
    });
    expect(d.indexes.map((i) => [i.name, i.pages_total])).toEqual([
      ['person_pk', 21938], ['person_flname_idx', 11218], ['person_lfaname_idx', 72221], ['person_full_idx', 103264],
    ]);
    expect(d.parallel_workers_planned).toBeNull();
    expect(d.parallel_workers_launched).toBeNull();
    expect(d.new_relfrozenxid).toBeNull();
    expect(d.unknown_lines).toEqual([]);
  });

  it('reads the parallel run: 3 planned, 3 launched, and the shorter elapsed time', () => {
    const d = fromSeed(SEED_PARALLEL);
    expect(d).toMatchObject({
      parallel_workers_planned: 3, parallel_workers_launched: 3,
      new_relfrozenxid: 762, new_relfrozenxid_advance_xids: 6,
      read_rate_mbs: 22.357, write_rate_mbs: 18.781, wal_buffers_full: 139,
      cpu_user_s: 4.5, cpu_system_s: 0.93, elapsed_s: 102.18,
    });
    expect(d.parallel_cleanup_workers_planned).toBeNull();
    expect(d.indexes).toHaveLength(4);
    expect(d.unknown_lines).toEqual([]);
  });
});

describe('reports that do not fit', () => {
  it('keeps lines it does not know and still parses the rest', () => {
    const d = autovacuum(report('automatic vacuum of table "shop.public.orders": index scans: 1', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total), 7 lazily scanned',
      'hypothetical usage: 12 gizmos',
      'buffer usage: 90512 hits, 40110 reads, 27700 dirtied',
    ]));
    expect(d.pages_remain).toBe(125000);
    expect(d.pages_scanned).toBe(40213);
    expect(d.buffer_hits).toBe(90512);
    expect(d.unknown_lines).toEqual([
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total), 7 lazily scanned',
      'hypothetical usage: 12 gizmos',
    ]);
  });

  it('produces the event from a truncated report, with nulls for what was not printed', () => {
    const d = autovacuum(report('automatic vacuum of table "shop.public.orders": index scans: 0', [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)',
    ]));
    expect(d.pages_remain).toBe(125000);
    expect(d.tuples_removed).toBeNull();
    expect(d.removable_cutoff_xid).toBeNull();
    expect(d.elapsed_s).toBeNull();
    expect(d.indexes).toEqual([]);
  });

  it('produces the event from the header alone', () => {
    const d = autovacuum(PREFIX + 'automatic vacuum of table "shop.public.orders": index scans: 0');
    expect(d).toMatchObject({ database: 'shop', table: 'orders', index_scans: 0, buffer_hits: null });
  });

  it('reads a report whose lines arrive without TABs (csvlog/jsonlog keep raw newlines)', () => {
    const entry = logEntry('automatic vacuum of table "a.b.c": index scans: 0\nbuffer usage: 1 hits, 2 reads, 3 dirtied');
    expect(detailsOf(classifyEntry(entry, 't1'), 'autovacuum')).toMatchObject({ buffer_hits: 1, buffer_reads: 2, buffer_dirtied: 3 });
  });
});

describe('near misses that are not autovacuum', () => {
  it.each([
    ['a manual VACUUM (VERBOSE) report (15+, INFO)', '2026-10-14 03:12:45.123 UTC [41235] dba@shop INFO:  finished vacuuming "shop.public.orders": index scans: 1\n\tpages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)'],
    ['the VERBOSE opening line', '2026-10-14 03:12:45.123 UTC [41235] dba@shop INFO:  aggressively vacuuming "shop.public.orders"'],
    ['a cancelled autovacuum whose CONTEXT names the table', '2026-10-14 03:14:10.001 UTC [41300] ERROR:  canceling autovacuum task\n2026-10-14 03:14:10.001 UTC [41300] CONTEXT:  while scanning block 88123 of relation "public.orders"\n\tautomatic vacuum of table "shop.public.orders"'],
    ['a header without the index-scan count', PREFIX + 'automatic vacuum of table "shop.public.orders"'],
  ])('%s', (_name, text) => {
    expect(classifyEntry(stderrEntry(text), 't1').kind).toBe('generic');
  });
});
