import { describe, expect, it } from 'vitest';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldResult } from '../../../test/helpers/report-section.js';
import { tempFilesSection } from './temp-files.js';

/** Real logs: a sort spilling to two files (13, 18), and the log report's workload of three sorts with other literals (15, 18). */
const CASES = [
  'pg13-stderr-temp-files-sort',
  'pg18-csvlog-temp-files-sort',
  '../log-report/pg15-stderr-log-report-workload',
  '../log-report/pg18-jsonlog-log-report-workload',
];

describe('temp files section', () => {
  it('folds real logs to files per normalised statement (golden)', () => expectSectionGolden(tempFilesSection, CASES));

  it('adds up the files of one statement run with other literals under its normalised text', async () => {
    const result = foldResult(tempFilesSection, await fixtureEvents('../log-report/pg15-stderr-log-report-workload'));
    expect(result).toMatchObject({ count: 6, statements_total: 1, other: null });
    const [sort] = result.by_statement;
    expect(sort).toMatchObject({ count: 6, total_bytes: result.total_bytes, max_bytes: result.max_bytes });
    expect(sort!.statement).toBe('SELECT count(*) FROM (SELECT g FROM generate_series($1, $2) g ORDER BY md5(g::text)) sorted');
    expect(sort!.example).toMatch(/generate_series\(1, \d+\)/);
    expect(result.per_minute.reduce((n, row) => n + Number(row.temp_files), 0)).toBe(6);
  });

  it('merges any split of real logs as one pass', async () => {
    const events = (await Promise.all(CASES.map((name) => fixtureEvents(name)))).flat();
    expectMergeProperty(tempFilesSection, events);
    expectMergeProperty(tempFilesSection, events, { maxKeys: 1, topN: 1 });
  });
});
