import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AutovacuumDetails } from '../../domain/index.js';
import { detailsOf, logEntry } from '../../../test/helpers/log-entry.js';
import { StderrFramer } from '../frame-stderr.js';
import { feedAll } from '../physical-lines.js';
import { classifyEntry } from './index.js';
import { unfoldOneLineReport } from './one-line-report.js';

function autovacuum(message: string): AutovacuumDetails {
  return detailsOf(classifyEntry(logEntry(message), 't1'), 'autovacuum');
}

describe('one-line autovacuum reports of managed services', () => {
  // The shape of the issue (#12): comma-separated sections, two PostgreSQL does not print, and a
  // pages part run into the one before it.
  const MANAGED = 'automatic vacuum of table "shop.public.orders": index scans: 0, elapsed time: 0 s, index vacuum time: 0 ms, ' +
    'pages: 0 removed, 839 remain, 0 skipped due to pins, 0 skipped frozen 0 skipped using mintxid, ' +
    'tuples: 12 removed, 51234 remain, 3 are dead but not yet removable, oldest xmin: 7781, ' +
    'buffer usage: 1730 hits, 0 misses, 2 dirtied, avg read rate: 0.000 MB/s, avg write rate: 0.113 MB/s, ' +
    'system usage: CPU: user: 0.01 s, system: 0.00 s, elapsed: 0.13 s';

  it('extracts the known figures and keeps the unknown sections in unknown_lines', () => {
    const d = autovacuum(MANAGED);
    expect(d).toMatchObject({
      database: 'shop', schema: 'public', table: 'orders', index_scans: 0,
      pages_removed: 0, pages_remain: 839, pages_skipped_pins: 0, pages_skipped_frozen: 0,
      tuples_removed: 12, tuples_remain: 51234, tuples_dead_not_removable: 3, removable_cutoff_xid: 7781,
      buffer_hits: 1730, buffer_reads: 0, buffer_dirtied: 2, read_rate_mbs: 0, write_rate_mbs: 0.113,
      cpu_user_s: 0.01, cpu_system_s: 0, elapsed_s: 0.13,
    });
    expect(d.unknown_lines).toEqual([
      'elapsed time: 0 s',
      'index vacuum time: 0 ms',
      'pages: 0 removed, 839 remain, 0 skipped due to pins, 0 skipped frozen, 0 skipped using mintxid',
    ]);
    expect(classifyEntry(logEntry(MANAGED), 't1').message).toBe('automatic vacuum of table "shop.public.orders": index scans: 0');
  });

  it('is not applied to a report that has lines, or to a header with nothing after it', () => {
    expect(unfoldOneLineReport('automatic vacuum of table "a.b.c": index scans: 0\npages: 0 removed')).toBeNull();
    expect(unfoldOneLineReport('automatic vacuum of table "a.b.c": index scans: 0')).toBeNull();
  });

  it('every report a real server wrote, its lines joined with ", ", reads to the same details', () => {
    const logs = path.resolve('test/fixtures/logs');
    let reports = 0;
    for (const name of fs.readdirSync(logs).filter((n) => /^pg\d+-stderr-/.test(n))) {
      const fixture = JSON.parse(fs.readFileSync(path.join(logs, name, 'case.json'), 'utf8')) as { log_file: string; log_line_prefix: string; provenance: string };
      if (fixture.provenance !== 'recorded') continue;
      const framer = new StderrFramer({ file: 'x', prefix: fixture.log_line_prefix, timezone: 'UTC' });
      for (const entry of feedAll(framer, fs.readFileSync(path.join(logs, name, fixture.log_file), 'utf8'))) {
        if (!/^automatic (aggressive )?vacuum/.test(entry.message)) continue;
        reports++;
        const oneLine = { ...entry, message: entry.message.split('\n').join(', ') };
        expect(classifyEntry(oneLine, 't1').details, `${name}: ${entry.message}`).toEqual(classifyEntry(entry, 't1').details);
      }
    }
    expect(reports).toBeGreaterThan(100);
  });
});
