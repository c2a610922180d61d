import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { DataCorruptionDetails } from '../domain/index.js';
import type { LogFormat } from '../parsers/framer.js';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import { dataPageCorrupted, DEFAULTS } from './data-page-corrupted.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

const rule = dataPageCorrupted();
const MINUTE = 60_000;

const FORMATS = [['stderr', 'log'], ['csvlog', 'csv'], ['jsonlog', 'json']] as const;

/** Real logs of a damaged page read twice, in each format one server wrote (scripts/record-data-corruption-logs.ts). */
async function recorded(version: number, [format, extension]: readonly [LogFormat, string]): Promise<RuleEvent[]> {
  const file = fileURLToPath(new URL(`../../test/fixtures/rule-logs/pg${version}-data-page-corrupted.${extension}`, import.meta.url));
  const parsed = await parseLogFile(path.resolve(file), { format, prefix: '%m [%p] %q%u@%d ', timezone: 'UTC', target: `pg${version}` });
  return parsed.events.map((e, i) => ({ ...e, id: i + 1 })) as RuleEvent[];
}

const invalidPage = (minute: number, block: number, o: Partial<DataCorruptionDetails> = {}, pid = 4242): RuleEvent =>
  eventOf('data_corruption', {
    problem: 'invalid_page', relation_path: 'base/16384/16390', database_oid: 16384, relfilenode: 16390, block, zeroed: false,
    calculated_checksum: null, expected_checksum: null, ...o,
  }, { tsMs: T0 + minute * MINUTE, pid, level: 'ERROR', database: 'shop', message: `invalid page in block ${block} of relation base/16384/16390` });

describe('data-page-corrupted', () => {
  describe.each(FORMATS)('over real logs (%s)', (...format) => {
    it('PG 18 (data checksums): names the file, the block and both checksums, counting reads, not the I/O worker\'s lines', async () => {
      const events = await recorded(18, format);
      const end = events.at(-1)!.tsMs;
      const findings = rule.evaluate(new MemoryRuleView({ events }).at(end), end);
      expect(findings.map((f) => [f.severity ?? rule.severity, f.summary])).toEqual([[
        'critical',
        'data page corrupted on pg18: block 0 of relation file base/5/16384 (database postgres, filenode 16384) failed verification when read ' +
        '(2 times since 14:07:32 UTC): calculated checksum 13151 but the page says 2041; every read of it fails: check the storage, restore from a backup or a standby',
      ]]);
      // Both checksum lines and the four invalid-page lines (the I/O worker's and the backends').
      expect(findings[0]!.evidence.eventIds).toHaveLength(6);
      expect(findings[0]!.dedupKey).toBe('data-page-corrupted/pg18/base/5/16384');
    });

    it('PG 15 (no checksums, a damaged header): the backend\'s error alone', async () => {
      const events = await recorded(15, format);
      const end = events.at(-1)!.tsMs;
      expect(rule.evaluate(new MemoryRuleView({ events }).at(end), end).map((f) => f.summary)).toEqual([
        'data page corrupted on pg15: block 0 of relation file base/5/16384 (database postgres, filenode 16384) failed verification when read ' +
        '(2 times since 14:07:26 UTC); every read of it fails: check the storage, restore from a backup or a standby',
      ]);
    });
  });

  it('one alert per file, listing its blocks; zero_damaged_pages said', () => {
    const events = [
      invalidPage(0, 7), invalidPage(1, 3), invalidPage(2, 7),
      invalidPage(3, 0, { relation_path: 'base/16384/16400', relfilenode: 16400, zeroed: true }),
    ];
    const findings = rule.evaluate(new MemoryRuleView({ events }).at(T0 + 3 * MINUTE), T0 + 3 * MINUTE);
    expect(findings.map((f) => f.summary)).toEqual([
      expect.stringMatching(/^data page corrupted on primary: blocks 3, 7 of relation file base\/16384\/16390 \(database shop, filenode 16390\) failed verification when read \(3 times since 00:00:00 UTC\); every read/),
      expect.stringMatching(/: block 0 of relation file base\/16384\/16400 .*; zero_damaged_pages replaced it with zeros: its rows are gone: check the storage/),
    ]);
  });

  it('from pg_stat_database alone when the log names no page; quiet while the counter stands still or is NULL', () => {
    const series = [
      seriesOf('pg_stat_database_checksum_failures_total{datname="shop"}', '0 0 1 3 3'),
      seriesOf('pg_stat_database_checksum_failures_total{datname="ledger"}', '2 2 2 2 2'),
      seriesOf('pg_stat_database_checksum_failures_total{datname="nochecksums"}', 'null null null null null'),
    ];
    const now = T0 + 4 * 5_000;
    expect(rule.evaluate(new MemoryRuleView({ series }).at(now), now).map((f) => f.summary)).toEqual([
      'data page corrupted on primary: 3 checksum failures in database shop since 00:00:00 UTC (pg_stat_database.checksum_failures); ' +
      'the server log names the pages (`invalid page in block`): check the storage, restore from a backup or a standby',
    ]);
    // With the log's lines, they speak instead.
    expect(rule.evaluate(new MemoryRuleView({ series, events: [invalidPage(0, 7)] }).at(now), now).map((f) => f.dedupKey))
      .toEqual(['data-page-corrupted/primary/base/16384/16390']);
  });

  it('quiet on lines of other kinds, and on a checksum line alone (ignore_checksum_failure read on)', () => {
    const checksumOnly = eventOf('data_corruption', {
      problem: 'checksum_mismatch', relation_path: null, database_oid: null, relfilenode: null, block: null, zeroed: false, calculated_checksum: 1, expected_checksum: 2,
    }, { tsMs: T0, pid: 1, level: 'WARNING', message: 'page verification failed, calculated checksum 1 but expected 2' });
    expect(rule.evaluate(new MemoryRuleView({ events: [checksumOnly] }).at(T0), T0)).toEqual([]);
  });

  it('fires once, stays open 24 h after the last line, then resolves', () => {
    const view = new MemoryRuleView({ events: [invalidPage(0, 7), invalidPage(60, 7)] });
    const step = 60 * MINUTE;
    const steps = transitionSteps(timeline([rule], view, instants(0, 26, step), { refireMinIntervalMs: 1e12 }), T0, step);
    expect(steps).toEqual([
      ['fire', 'data-page-corrupted/primary/base/16384/16390', 0],
      // The last line at step 1 is still within the window 24 h later, at step 25; gone at 26.
      ['resolve', 'data-page-corrupted/primary/base/16384/16390', 2 + DEFAULTS.activeForMs / step],
    ]);
  });
});
