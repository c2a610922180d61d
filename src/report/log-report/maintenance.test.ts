import { describe, expect, it } from 'vitest';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldResult } from '../../../test/helpers/report-section.js';
import { maintenanceSection } from './maintenance.js';

/** Real logs: 13's one-line autoanalyze, 15 and 18's reports, 19's parallel workers, a vacuum held back. */
const CASES = [
  'pg13-stderr-autovacuum-4-indexes',
  'pg15-csvlog-autovacuum-4-indexes',
  'pg18-stderr-autovacuum-held-back-by-snapshot',
  'pg19-jsonlog-parallel-autovacuum',
];

describe('maintenance section', () => {
  it('folds real logs to runs per table (golden)', () => expectSectionGolden(maintenanceSection, CASES));

  it('adds up a table held back by a snapshot: dead rows not removable, then removed', async () => {
    const result = foldResult(maintenanceSection, await fixtureEvents('pg18-stderr-autovacuum-held-back-by-snapshot'));
    const table = result.autovacuum.tables.find((t) => t.table === 'postgres.public.av_held');
    expect(table).toMatchObject({
      runs: 3, tuples_removed: 5000, tuples_dead_not_removable: 5000, max_dead_not_removable: 5000, index_scans: 1,
      buffer_hits: 162 + 257 + 409, wal_bytes: 27710 + 258 + 82096,
    });
    expect(result.autovacuum.runs).toBe(3);
    expect(result.autovacuum.other).toBeNull();
  });

  it('keeps a figure no run printed null: 13 logs autoanalyze on one line, without buffers', async () => {
    const result = foldResult(maintenanceSection, await fixtureEvents('pg13-stderr-autovacuum-4-indexes'));
    expect(result.autoanalyze.tables[0]).toMatchObject({ buffer_hits: null, wal_bytes: null });
    expect(result.autoanalyze.tables[0]!.elapsed_s).not.toBeNull();
  });

  it('adds up tables past maxKeys under other', async () => {
    const events = (await Promise.all(['pg18-stderr-logical-slot-holds-catalogs', 'pg18-stderr-autovacuum-4-indexes'].map((name) => fixtureEvents(name)))).flat();
    const whole = foldResult(maintenanceSection, events);
    const capped = foldResult(maintenanceSection, events, { maxKeys: 2, topN: 100 });
    expect(capped.autovacuum.tables_total).toBe(2);
    expect(whole.autovacuum.tables_total).toBeGreaterThan(2);
    const itemised = capped.autovacuum.tables.reduce((n, t) => n + t.runs, 0);
    expect(itemised + (capped.autovacuum.other?.runs ?? 0)).toBe(whole.autovacuum.runs);
  });

  it('counts an autovacuum cancelled by a lock request on its table (real PG 18 log)', async () => {
    const result = foldResult(maintenanceSection, await fixtureEvents('../log-report/pg18-stderr-cancelled-by-hand'));
    expect(result.autovacuum.tables.find((t) => t.table === 'postgres.public.cbh_slow')).toMatchObject({ runs: 0, cancelled: 1 });
    expect(result.per_minute.reduce((n, row) => n + Number(row.cancelled), 0)).toBe(1);
  });

  it('merges any split of real logs as one pass', async () => {
    const events = (await Promise.all([...CASES, 'pg18-stderr-logical-slot-holds-catalogs', '../log-report/pg18-stderr-cancelled-by-hand'].map((name) => fixtureEvents(name)))).flat();
    expectMergeProperty(maintenanceSection, events);
  });
});
