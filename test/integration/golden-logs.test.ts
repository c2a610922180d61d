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
import { expectGolden } from '../helpers/golden-file.js';
import { caseName, EXPECTED_FILE, FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';
import { expectScenarioEvents, expectVacuumReport, findEvent } from '../helpers/scenarios/expectations.js';
import { eventsToNdjson, parseLogFile, type ParsedLog } from '../helpers/scenarios/parse-log.js';
import { expectRawValues } from '../helpers/scenarios/raw-values.js';
import { SCENARIOS } from '../helpers/scenarios/index.js';

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
        // jsonlog is new in 15.
        (version >= 15 ? (['stderr', 'csvlog', 'jsonlog'] as const) : (['stderr', 'csvlog'] as const)).map((format) => caseName(version, format, scenario.name)),
      ),
    ).filter((name) => !cases.includes(name));
    expect(missing, 'cases not recorded: run `npm run fixtures:record`').toEqual([]);
  });

  for (const name of cases) {
    it(name, async () => {
      const { parsed, dir, major, scenario, provenance } = await parseCase(name);
      const actual = eventsToNdjson(parsed.events, dir);
      expectGolden(path.join(dir, EXPECTED_FILE), actual);
      expectRawValues(fs.readFileSync(path.join(dir, readCase(dir).log_file)), parsed.events, readCase(dir).format, name, { english: true });
      expect(parsed.stats.examples, 'lines the framing could not read').toEqual([]);
      expect(parsed.events.length).toBeGreaterThan(0);
      if (provenance === 'recorded') expectScenarioEvents(scenario, parsed.events, major);
    });
  }
});

/** What must not depend on the log format: the envelope minus where it came from, the SQLSTATE and the application (stderr has no %e or %a here). */
function formatIndependent(events: readonly AnyLogEvent[]): unknown[] {
  return events.map(({ source: _source, target: _target, sqlstate: _sqlstate, application: _application, ...rest }) => rest);
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

describe('synthetic fixtures: what no server here can write', () => {
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
