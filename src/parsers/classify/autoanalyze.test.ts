import { describe, expect, it } from 'vitest';
import type { AutoanalyzeDetails } from '../../domain/index.js';
import { detailsOf, logEntry, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

function autoanalyze(text: string): AutoanalyzeDetails {
  return detailsOf(classifyEntry(stderrEntry(text), 't1'), 'autoanalyze');
}

// pg-messages.md §1.6.
const CASES: Array<{ version: string; text: string; expected: Partial<AutoanalyzeDetails>; absent: Array<keyof AutoanalyzeDetails> }> = [
  {
    version: '13 (one line)',
    text: '2026-10-14 03:13:02.877 UTC [41240] LOG:  automatic analyze of table "shop.public.orders" system usage: CPU: user: 0.91 s, system: 0.20 s, elapsed: 10.65 s',
    expected: { database: 'shop', schema: 'public', table: 'orders', cpu_user_s: 0.91, cpu_system_s: 0.2, elapsed_s: 10.65 },
    absent: ['read_rate_mbs', 'buffer_hits', 'wal_records'],
  },
  {
    version: '14-17 (§1.6 example)',
    text: [
      '2026-10-14 03:13:02.877 UTC [41240] LOG:  automatic analyze of table "shop.public.orders"',
      '\tavg read rate: 21.402 MB/s, avg write rate: 0.118 MB/s',
      '\tbuffer usage: 5120 hits, 29102 misses, 161 dirtied',
      '\tsystem usage: CPU: user: 0.91 s, system: 0.20 s, elapsed: 10.65 s',
    ].join('\n'),
    expected: { read_rate_mbs: 21.402, write_rate_mbs: 0.118, buffer_hits: 5120, buffer_reads: 29102, buffer_dirtied: 161, elapsed_s: 10.65 },
    absent: ['io_read_ms', 'delay_time_ms', 'wal_records'],
  },
  {
    version: '18 (delay time, I/O timings, reads, WAL usage with buffers full)',
    text: [
      '2026-10-14 03:13:02.877 UTC [41240] LOG:  automatic analyze of table "shop.public.orders"',
      '\tdelay time: 812.500 ms',
      '\tI/O timings: read: 120.331 ms, write: 0.002 ms',
      '\tavg read rate: 21.402 MB/s, avg write rate: 0.118 MB/s',
      '\tbuffer usage: 5120 hits, 29102 reads, 161 dirtied',
      '\tWAL usage: 310 records, 12 full page images, 98304 bytes, 0 buffers full',
      '\tsystem usage: CPU: user: 0.91 s, system: 0.20 s, elapsed: 10.65 s',
    ].join('\n'),
    expected: { delay_time_ms: 812.5, io_read_ms: 120.331, io_write_ms: 0.002, buffer_reads: 29102, wal_records: 310, wal_fpi: 12, wal_bytes: 98304, wal_buffers_full: 0 },
    absent: ['wal_fpi_bytes'],
  },
  {
    version: '19 (full page image bytes)',
    text: [
      '2026-10-14 03:13:02.877 UTC [41240] LOG:  automatic analyze of table "shop.public.orders"',
      '\tavg read rate: 21.402 MB/s, avg write rate: 0.118 MB/s',
      '\tbuffer usage: 5120 hits, 29102 reads, 161 dirtied',
      '\tWAL usage: 310 records, 12 full page images, 98304 bytes, 90112 full page image bytes, 0 buffers full',
      '\tsystem usage: CPU: user: 0.91 s, system: 0.20 s, elapsed: 10.65 s',
    ].join('\n'),
    expected: { wal_fpi_bytes: 90112, wal_buffers_full: 0 },
    absent: ['delay_time_ms', 'io_read_ms'],
  },
];

describe('autoanalyze reports 13-19', () => {
  it.each(CASES)('PG $version', ({ text, expected, absent }) => {
    const details = autoanalyze(text);
    expect(details).toMatchObject(expected);
    for (const field of absent) expect(details[field], field).toBeNull();
    expect(details.unknown_lines).toEqual([]);
  });

  it('keeps an unknown line', () => {
    const d = autoanalyze('2026-10-14 03:13:02.877 UTC [41240] LOG:  automatic analyze of table "shop.public.orders"\n\tsampling: 30000 rows');
    expect(d.unknown_lines).toEqual(['sampling: 30000 rows']);
  });

  it('reads a table whose quoted name holds a CR or U+2028 (the header regex once backtracked on them)', () => {
    for (const table of ['we\rird', 'we\u2028ird']) {
      const message = `automatic analyze of table "shop.public.${table}" system usage: CPU: user: 0.91 s, system: 0.20 s, elapsed: 10.65 s`;
      const d = detailsOf(classifyEntry(logEntry(message), 't1'), 'autoanalyze');
      expect(d).toMatchObject({ database: 'shop', schema: 'public', table, elapsed_s: 10.65 });
    }
  });

  it('does not take a manual ANALYZE (VERBOSE) report (18+, INFO)', () => {
    const text = '2026-10-14 03:13:02.877 UTC [41240] dba@shop INFO:  finished analyzing table "shop.public.orders"\n\tbuffer usage: 5120 hits, 29102 reads, 161 dirtied';
    expect(classifyEntry(stderrEntry(text), 't1').kind).toBe('generic');
  });
});
