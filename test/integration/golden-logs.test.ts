/**
 * Golden log fixtures (test/fixtures/logs/<case>/): each raw log, written by a real PostgreSQL
 * 15, 18 or 19 server (scripts/record-log-fixtures.ts) or assembled from documented format strings
 * for 13, 14, 16 and 17, is parsed by the real pipeline and its events compared with
 * expected.ndjson byte for byte.
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/integration/golden-logs.test.ts   rewrites the goldens;
 *   review them with `git diff test/fixtures/logs`.
 *
 * Besides the byte comparison, every recorded case must show what its scenario provoked
 * (test/helpers/scenarios/expectations.ts), so a regenerated golden cannot quietly accept a
 * lost field; and no line of a real log may be left unparsed by the framing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { caseName, EXPECTED_FILE, FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';
import { expectScenarioEvents, expectVacuumReport, findEvent } from '../helpers/scenarios/expectations.js';
import { eventsToNdjson, parseLogFile, type ParsedLog } from '../helpers/scenarios/parse-log.js';
import { SCENARIOS } from '../helpers/scenarios/index.js';

const UPDATE = process.env.UPDATE_GOLDEN === '1';
const CI = process.env.CI === 'true';
const cases = listCases();

async function parseCase(name: string): Promise<{ parsed: ParsedLog; dir: string; major: number; scenario: string; provenance: string }> {
  const dir = path.join(FIXTURES_DIR, name);
  const fixture = readCase(dir);
  const parsed = await parseLogFile(path.join(dir, fixture.log_file), {
    format: fixture.format,
    prefix: fixture.log_line_prefix,
    timezone: fixture.log_timezone,
    target: 'golden',
  });
  return { parsed, dir, major: fixture.major, scenario: fixture.scenario, provenance: fixture.provenance };
}

describe('golden log fixtures', () => {
  it('cover PostgreSQL 13 to 19 and every recorded scenario in all three formats', () => {
    const majors = new Set(cases.map((name) => readCase(path.join(FIXTURES_DIR, name)).major));
    expect([...majors].sort((a, b) => a - b)).toEqual([13, 14, 15, 16, 17, 18, 19]);
    const missing = SCENARIOS.flatMap((scenario) =>
      scenario.versions.flatMap((version) =>
        (['stderr', 'csvlog', 'jsonlog'] as const).map((format) => caseName(version, format, scenario.name)),
      ),
    ).filter((name) => !cases.includes(name));
    expect(missing, 'cases not recorded: run `npm run fixtures:record`').toEqual([]);
  });

  for (const name of cases) {
    it(name, async () => {
      const { parsed, dir, major, scenario, provenance } = await parseCase(name);
      const actual = eventsToNdjson(parsed.events, dir);
      const expectedFile = path.join(dir, EXPECTED_FILE);
      if (UPDATE || !fs.existsSync(expectedFile)) {
        if (!UPDATE && CI) throw new Error(`${expectedFile} is missing: run UPDATE_GOLDEN=1 locally, review and commit it`);
        fs.writeFileSync(expectedFile, actual);
      } else {
        expect(actual).toBe(fs.readFileSync(expectedFile, 'utf8'));
      }
      expect(parsed.stats.examples, 'lines the framing could not read').toEqual([]);
      expect(parsed.events.length).toBeGreaterThan(0);
      if (provenance === 'recorded') expectScenarioEvents(scenario, parsed.events, major);
    });
  }
});

/** What must not depend on the log format: the envelope minus where it came from and the SQLSTATE (stderr has no %e here). */
function formatIndependent(events: readonly AnyLogEvent[]): unknown[] {
  return events.map(({ source: _source, target: _target, sqlstate: _sqlstate, ...rest }) => rest);
}

describe('the three formats of one recording', () => {
  const recordings = new Map<string, string[]>();
  for (const name of cases) {
    const fixture = readCase(path.join(FIXTURES_DIR, name));
    if (fixture.provenance !== 'recorded') continue;
    const key = `pg${fixture.major} ${fixture.scenario}`;
    recordings.set(key, [...(recordings.get(key) ?? []), name]);
  }
  for (const [recording, names] of recordings) {
    it(`${recording}: stderr, csvlog and jsonlog give the same events`, async () => {
      const [first, ...others] = await Promise.all(names.map(async (name) => ({ name, events: formatIndependent((await parseCase(name)).parsed.events) })));
      if (!first) throw new Error(`${recording}: no case`);
      for (const other of others) expect(other.events, `${other.name} vs ${first.name}`).toEqual(first.events);
    });
  }
});

describe('synthetic fixtures show the version-specific fields', () => {
  it('PG 13: oldest xmin, WAL usage after system usage, single-line autoanalyze (stderr and csvlog alike)', async () => {
    for (const format of ['stderr', 'csvlog'] as const) {
      const { parsed } = await parseCase(`pg13-${format}-autovacuum-synthetic`);
      const vacuum = findEvent(parsed.events, 'autovacuum', `orders (${format})`, (e) => e.details.table === 'orders');
      expect(vacuum.details).toMatchObject({
        index_scans: 1, pages_skipped_pins: 0, pages_skipped_frozen: 84512, removable_cutoff_xid: 1873421,
        tuples_dead_not_removable: 20310, buffer_reads: 40110, wal_records: 98211, wal_bytes: 251234567, elapsed_s: 22.03,
        index_scan: null, indexes: [], unknown_lines: [],
      });
      const toast = findEvent(parsed.events, 'autovacuum', `TOAST table (${format})`, (e) => e.details.schema === 'pg_toast');
      expect(toast.details).toMatchObject({ aggressive: true, wraparound: true, table: 'pg_toast_16402', wal_records: 3201 });
      const analyze = findEvent(parsed.events, 'autoanalyze', `orders (${format})`);
      expect(analyze.details).toMatchObject({ table: 'orders', elapsed_s: 10.65, cpu_user_s: 0.91 });
    }
  });

  it('PG 14: index-scan variants, per-index lines, I/O timings, failsafe', async () => {
    const { parsed } = await parseCase('pg14-stderr-autovacuum-synthetic');
    const needed = findEvent(parsed.events, 'autovacuum', 'orders', (e) => e.details.table === 'orders');
    expect(needed.details).toMatchObject({
      removable_cutoff_xid: 1873421, index_scan: { state: 'needed', pages: 24111, pages_pct: 19.29, dead_item_ids: 912345 },
      io_read_ms: 812.331, io_write_ms: 95.002, buffer_reads: 40110, unknown_lines: [],
    });
    expect(needed.details.indexes.map((index) => [index.name, index.pages_total, index.pages_free])).toEqual([
      ['orders_pkey', 25000, 180],
      ['orders_customer_idx', 31000, 0],
    ]);
    findEvent(parsed.events, 'autovacuum', 'sessions bypassed', (e) => e.details.index_scan?.state === 'bypassed' && e.details.index_scan.dead_item_ids === 120);
    const failsafe = findEvent(parsed.events, 'autovacuum', 'events bypassed by failsafe', (e) => e.details.index_scan?.state === 'bypassed_by_failsafe');
    expect(failsafe.details).toMatchObject({ aggressive: true, wraparound: true, elapsed_s: 57.42 });
    expect(findEvent(parsed.events, 'autoanalyze', 'orders').details).toMatchObject({ buffer_reads: 29102, elapsed_s: 10.65 });
  });

  it('PG 16 and 17: frozen line, optional tuples missed and new relminmxid lines', async () => {
    const { parsed: pg16 } = await parseCase('pg16-stderr-autovacuum-synthetic');
    expect(findEvent(pg16.events, 'autovacuum', 'orders').details).toMatchObject({
      aggressive: true, wraparound: true, frozen_pages: 5120, frozen_pages_pct: 4.1, tuples_frozen: 301223,
      new_relfrozenxid: 1650002, new_relfrozenxid_advance_xids: 120001, removable_cutoff_age_xids: 48211, unknown_lines: [],
    });
    const { parsed: pg17 } = await parseCase('pg17-stderr-autovacuum-synthetic');
    expect(findEvent(pg17.events, 'autovacuum', 'orders').details).toMatchObject({
      tuples_missed_dead: 120, tuples_missed_dead_pages: 7, new_relminmxid: 5001, new_relminmxid_advance_mxids: 12,
      new_relfrozenxid: null, unknown_lines: [],
    });
  });

  it('PG 19 seed entries: the serial and the parallel run of the article', async () => {
    const { parsed: serial } = await parseCase('pg19-stderr-seed-autovacuum-serial');
    const serialRun = findEvent(serial.events, 'autovacuum', 'person');
    expectVacuumReport(serialRun, 19);
    expect(serialRun.details).toMatchObject({
      database: 'vahiddb', table: 'person', elapsed_s: 134.18, parallel_workers_planned: null, parallel_workers_launched: null,
      dead_item_storage_mb: 2.33, dead_item_storage_resets: 1, dead_item_storage_limit_mb: 64,
    });
    expect(serialRun.tsMs).toBe(Date.parse('2026-10-18T19:45:55.201+03:00'));
    const { parsed: parallel } = await parseCase('pg19-stderr-seed-autovacuum-parallel');
    const parallelRun = findEvent(parallel.events, 'autovacuum', 'person');
    expectVacuumReport(parallelRun, 19);
    expect(parallelRun.details).toMatchObject({
      elapsed_s: 102.18, parallel_workers_planned: 3, parallel_workers_launched: 3, tuples_removed: 3000000,
      removable_cutoff_xid: 762, new_relfrozenxid: 762, wal_fpi_bytes: 1018664348, wal_buffers_full: 139,
    });
    expect(parallelRun.details.indexes.map((index) => index.name)).toEqual(['person_pk', 'person_flname_idx', 'person_lfaname_idx', 'person_full_idx']);
  });
});
