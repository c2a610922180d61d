import { describe, expect, it } from 'vitest';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldResult, LOG_REPORT_FIXTURES_DIR, logReportCases } from '../../../test/helpers/report-section.js';
import { normalizeErrorMessage } from './error-message.js';
import { EXAMPLE_STATEMENT_CHARS, errorsSection, SQLSTATE_NOT_LOGGED, type MessageRow } from './errors.js';


/** The sessions-and-errors workload as PG 13, 15, 18 and 19 wrote it, in each format (test/fixtures/log-report/README.md). */
const CASES = logReportCases('sessions-and-errors');
const csvlogCases = CASES.filter((name) => name.includes('-csvlog-'));

const events = (name: string) => fixtureEvents(name, LOG_REPORT_FIXTURES_DIR);

describe('errors section', () => {
  it('folds the recorded workload of PG 15 and 18, in all three formats (golden)', async () => {
    await expectSectionGolden(errorsSection, CASES, LOG_REPORT_FIXTURES_DIR);
  });

  it('groups by SQLSTATE, class and normalised message, each with an example and its statement', async () => {
    expect(csvlogCases).toHaveLength(4);
    for (const name of csvlogCases) {
      const result = foldResult(errorsSection, await events(name));
      expect(result.counts).toEqual({ error: 6, fatal: 3, panic: 0, warning: 1 });
      expect(result.by_class.map((row) => [row.class, row.name, row.count])).toEqual([
        ['28', 'Invalid Authorization Specification', 3],
        ['22', 'Data Exception', 2],
        ['23', 'Integrity Constraint Violation', 2],
        ['42', 'Syntax Error or Access Rule Violation', 2],
      ]);
      const unique = result.messages.find((row) => row.sqlstate === '23505');
      // Two key values, one constraint: one group, the values (in DETAIL) nowhere.
      expect(unique).toMatchObject({
        condition: 'unique_violation', message: 'duplicate key value violates unique constraint "se_orders_pkey"', count: 2,
        example: { database: 'se_shop', user: 'se_app', statement: 'INSERT INTO se_orders VALUES (1, 11)' },
      });
      expect(JSON.stringify(result)).not.toContain('already exists');
      expect(result.messages.find((row) => row.sqlstate === '42601')?.message).toBe('syntax error at or near "?"');
      expect(result.messages.find((row) => row.sqlstate === '42P01')?.message).toBe('relation "se_missing" does not exist');
      expect(result.warnings).toEqual([expect.objectContaining({ level: 'WARNING', sqlstate: '25P01', message: 'there is no transaction in progress', count: 1 })]);
    }
  });

  it('reads the same errors from stderr, csvlog and jsonlog (15+); stderr without %e groups by message, SQLSTATE unknown', async () => {
    for (const csvlogCase of csvlogCases) {
      const [stderr, csvlog, jsonlog] = await Promise.all(['stderr', 'csvlog', 'jsonlog'].map(async (format) => {
        const name = csvlogCase.replace('-csvlog-', `-${format}-`);
        return CASES.includes(name) ? foldResult(errorsSection, await events(name)) : null;
      }));
      if (jsonlog !== null) expect(jsonlog).toEqual(csvlog);
      expect(stderr!.counts).toEqual(csvlog!.counts);
      expect(stderr!.sqlstate_unknown).toBe(9);
      expect(stderr!.by_class).toEqual([{ class: null, name: SQLSTATE_NOT_LOGGED, count: 9 }]);
      // The same messages (stderr's " at character N" taken off), without their SQLSTATE.
      const messages = (rows: MessageRow[]) => rows.map((row) => [row.level, row.message, row.count, row.example]).sort();
      expect(messages(stderr!.messages)).toEqual(messages(csvlog!.messages));
    }
  });

  it('merges any split of the real logs as one pass', async () => {
    for (const name of CASES) expectMergeProperty(errorsSection, await events(name), undefined, 100);
  });

  it('past maxKeys messages, counts every event under other', async () => {
    const result = foldResult(errorsSection, await events('pg18-jsonlog-sessions-and-errors'), { maxKeys: 2, topN: 20 });
    expect(result.messages.length + result.warnings.length).toBe(2);
    const kept = [...result.messages, ...result.warnings].reduce((sum, row) => sum + row.count, 0);
    const other = Object.values(result.other).reduce((sum, count) => sum + count, 0);
    expect(kept + other).toBe(10);
    expect(result.counts).toEqual({ error: 6, fatal: 3, panic: 0, warning: 1 });
  });

  it('cuts a long statement in its example', async () => {
    const [first] = (await events('pg18-stderr-sessions-and-errors')).filter((event) => event.level === 'ERROR');
    const long = 'SELECT ' + 'x, '.repeat(200) + '1';
    const event = { ...first!, details: { ...first!.details, statement: long } } as typeof first & object;
    const result = foldResult(errorsSection, [event]);
    expect(result.messages[0]!.example.statement).toBe(`${long.slice(0, EXAMPLE_STATEMENT_CHARS)}...`);
  });
});

describe('normalizeErrorMessage', () => {
  it.each([
    ['duplicate key value violates unique constraint "orders_pkey"', 'duplicate key value violates unique constraint "orders_pkey"'],
    ['syntax error at or near "SELEC" at character 1', 'syntax error at or near "?"'],
    ['relation "se_missing" does not exist at character 15', 'relation "se_missing" does not exist'],
    ['invalid input syntax for type integer: "abc"', 'invalid input syntax for type integer: "?"'],
    ['value "12345678901" is out of range for type integer', 'value "?" is out of range for type integer'],
    ["invalid input value for enum mood: 'sad'", "invalid input value for enum mood: '?'"],
    ['canceling statement due to statement timeout', 'canceling statement due to statement timeout'],
    ['could not extend file "base/16384/16402.1": wrote only 4096 of 8192 bytes at block 131072', 'could not extend file "base/16384/16402.1": wrote only ? of ? bytes at block ?'],
    ['requested WAL segment 000000010000000000000003 has already been removed', 'requested WAL segment ? has already been removed'],
    ['could not read WAL at 0/3000148', 'could not read WAL at ?/?'],
    ['column "a""b" does not exist', 'column "a""b" does not exist'],
    ['relation "orders_2024" does not exist', 'relation "orders_2024" does not exist'],
  ])('%s', (message, expected) => {
    expect(normalizeErrorMessage(message)).toBe(expected);
  });
});
