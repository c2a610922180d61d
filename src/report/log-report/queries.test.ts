/**
 * The queries section on logs written by real servers: the bench's mixed PG 18 log
 * (log_min_duration_statement = 0, simple protocol), the log-report workload (both protocols,
 * named and unnamed statements, IN lists) and statement-logging (log_statement with log_duration,
 * then log_min_duration_statement), in stderr, csvlog and jsonlog. Golden files in
 * test/fixtures/log-report/queries/ (UPDATE_GOLDEN=1 rewrites them; review with git diff).
 */
import fc from 'fast-check';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../domain/index.js';
import { expectGolden } from '../../../test/helpers/golden-file.js';
import { readCase } from '../../../test/helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../../../test/helpers/scenarios/parse-log.js';
import { queriesSection, type QueriesResult, type QueriesState } from './queries.js';
import { DEFAULT_REPORT_LIMITS, type ReportLimits } from './section.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures');
const GOLDEN_DIR = path.join(FIXTURES, 'log-report', 'queries');

async function caseEvents(folder: string): Promise<AnyLogEvent[]> {
  const dir = path.join(FIXTURES, folder);
  const fixture = readCase(dir);
  return (await parseLogFile(path.join(dir, fixture.log_file), { format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone })).events;
}

/** The bench's mixed log has a README, not a case.json. */
async function mixedEvents(): Promise<AnyLogEvent[]> {
  const file = path.join(FIXTURES, 'pg18-stderr-analyze-mixed', 'postgresql.log');
  return (await parseLogFile(file, { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC' })).events;
}

function fold(events: readonly AnyLogEvent[], limits: ReportLimits = DEFAULT_REPORT_LIMITS): QueriesState {
  const state = queriesSection.empty();
  for (const event of events) queriesSection.add(state, event, limits);
  return state;
}

function resultOf(events: readonly AnyLogEvent[], limits: ReportLimits = DEFAULT_REPORT_LIMITS): QueriesResult {
  return queriesSection.result(fold(events, limits), limits);
}

/** Events cut into consecutive ranges at `cuts`, folded apart and merged in order, left to right or right to left. */
function foldInRanges(events: readonly AnyLogEvent[], cuts: number[], rightFirst: boolean, limits: ReportLimits): QueriesResult {
  const bounds = [0, ...[...new Set(cuts.map((c) => c % (events.length + 1)))].sort((a, b) => a - b), events.length];
  const states = bounds.slice(1).map((end, i) => fold(events.slice(bounds[i], end), limits));
  // Left to right, or right to left: ((a b) c) and (a (b c)) must agree (associativity).
  const merged = rightFirst
    ? states.reduceRight((later, earlier) => queriesSection.merge(earlier, later, limits))
    : states.reduce((earlier, later) => queriesSection.merge(earlier, later, limits));
  return queriesSection.result(merged, limits);
}

const WORKLOAD_CASES = ['pg15', 'pg18'].flatMap((major) => ['stderr', 'csvlog', 'jsonlog'].flatMap((format) =>
  ['log-report-workload', 'statement-logging'].map((scenario) => `log-report/${major}-${format}-${scenario}`)));

describe('queries section on recorded logs', () => {
  it('pg18-stderr-analyze-mixed', async () => {
    const result = resultOf(await mixedEvents());
    expectGolden(path.join(GOLDEN_DIR, 'pg18-stderr-analyze-mixed.json'), `${JSON.stringify(result, null, 2)}\n`);
    // Every duration line of the log is one execution: 523 `duration: ... statement:` lines.
    expect([result.queries, result.timed, result.statement_not_logged.count]).toEqual([523, 523, 0]);
  });

  for (const folder of WORKLOAD_CASES) {
    it(folder, async () => {
      const result = resultOf(await caseEvents(folder));
      expectGolden(path.join(GOLDEN_DIR, `${path.basename(folder)}.json`), `${JSON.stringify(result, null, 2)}\n`);
    });
  }

  it('reads the same statements from stderr, csvlog and jsonlog (the application only where the log has it)', async () => {
    for (const scenario of ['log-report-workload', 'statement-logging']) {
      for (const major of ['pg15', 'pg18']) {
        const [stderr, csvlog, jsonlog] = await Promise.all(['stderr', 'csvlog', 'jsonlog'].map(async (format) => resultOf(await caseEvents(`log-report/${major}-${format}-${scenario}`))));
        expect(withoutApplications(csvlog!), `${major} ${scenario} csvlog`).toEqual(withoutApplications(stderr!));
        expect(jsonlog, `${major} ${scenario} jsonlog`).toEqual(csvlog);
        expect(csvlog!.by_count.some((row) => row.applications.length > 0)).toBe(true);
      }
    }
  });

  it('folds IN lists of any length and both protocols into one statement each', async () => {
    const result = resultOf(await caseEvents('log-report/pg18-stderr-log-report-workload'));
    const text = (prefix: string): string[] => result.by_count.filter((row) => row.text.startsWith(prefix)).map((row) => row.text);
    expect(text('SELECT id, balance FROM rw_accounts')).toEqual(['SELECT id, balance FROM rw_accounts WHERE id IN ($1)']);
    // The unnamed extended-protocol UPDATE and the lock wait's simple-protocol one.
    expect(text('UPDATE rw_accounts SET balance = balance +')).toEqual(['UPDATE rw_accounts SET balance = balance + $1 WHERE id = $2']);
    expect(result.parse_bind.count).toBeGreaterThan(0);
  });

  it('pairs log_statement lines with the duration lines of their process', async () => {
    const result = resultOf(await caseEvents('log-report/pg18-stderr-statement-logging'));
    const row = (text: string): QueriesResult['by_count'][number] | undefined => result.by_count.find((r) => r.text === text);
    // Phase 1 (log_duration): every statement gets the duration line after it.
    expect(row('UPDATE sl_items SET qty = qty + $1 WHERE id = $2')).toMatchObject({ count: 6, timed: 6 });
    expect(row('SELECT qty FROM sl_items WHERE id = $1')).toMatchObject({ count: 8, timed: 6 });
    // Phase 2 (log_min_duration_statement = 50ms): the sleeps are timed by a duration line alone.
    const sleep = row('SELECT pg_sleep($1)');
    expect(sleep).toMatchObject({ count: 2, timed: 2 });
    expect(sleep!.p50_ms).toBeGreaterThan(50);
    // The DROP ran under the threshold: counted, untimed.
    expect(row('DROP TABLE sl_items')).toMatchObject({ count: 1, timed: 0, mean_ms: null });
    // Extended protocol: parse and bind durations come before the execute line, with no statement.
    expect(result.statement_not_logged.count).toBe(12);
  });
});

function withoutApplications(result: QueriesResult): unknown {
  const strip = (rows: QueriesResult['by_count']): unknown[] => rows.map(({ applications: _applications, ...rest }) => rest);
  return { ...result, by_count: strip(result.by_count), by_total_time: strip(result.by_total_time), slowest: result.slowest.map((s) => ({ ...s, application: null })) };
}

describe('queries section merge', () => {
  it.each([
    'log-report/pg18-stderr-statement-logging', 'log-report/pg15-csvlog-statement-logging', 'log-report/pg18-jsonlog-log-report-workload',
  ])('any split of %s into ranges gives the result of one fold', async (folder) => {
    const events = await caseEvents(folder);
    const whole = resultOf(events);
    fc.assert(fc.property(fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (cuts, rightFirst) => {
      expect(foldInRanges(events, cuts, rightFirst, DEFAULT_REPORT_LIMITS)).toEqual(whole);
    }), { numRuns: 150 });
  });

  it('keeps at most maxKeys fingerprints and totals the rest under other_fingerprints', async () => {
    const limits = { maxKeys: 3, topN: 5 };
    const result = resultOf(await mixedEvents(), limits);
    expect(result.fingerprints).toBe(3);
    expect(result.by_count).toHaveLength(3);
    expect(result.queries).toBe(523);
    expect(result.other_fingerprints.count).toBe(523 - result.by_count.reduce((sum, row) => sum + row.count, 0));
    expect(result.slowest).toHaveLength(5);
  });
});

describe('queries per minute: p50/p95/max from a sketch per minute', () => {
  const T0 = Date.UTC(2026, 10, 30, 2, 0);

  /** A statement line as log_min_duration_statement (or, with no duration, log_statement) writes it. */
  function statement(tsMs: number, durationMs: number | null, pid: number | null = 7): AnyLogEvent {
    const message = durationMs === null ? 'statement: SELECT 1' : `duration: ${durationMs.toFixed(3)} ms  statement: SELECT 1`;
    return { kind: 'generic', target: 't', tsMs, pid, database: 'app', user: 'u', level: 'LOG', sqlstate: null, message, details: { classified: false }, source: { file: '/log', offset: 0, line: null } } as AnyLogEvent;
  }

  /** A recorded log's events one `stepMs` apart, so that they fill several minutes in their order. */
  function spread(events: readonly AnyLogEvent[], stepMs: number): AnyLogEvent[] {
    return events.map((event, i) => ({ ...event, tsMs: T0 + i * stepMs }));
  }

  it('reads each minute\'s p50 and p95 within 1%, its max exactly, a single duration as itself, and nothing for untimed minutes', () => {
    const events = [
      ...Array.from({ length: 100 }, (_, i) => statement(T0 + i * 500, 100 - i)),
      statement(T0 + 60_000, 7.5),
      statement(T0 + 120_000, null, null), statement(T0 + 121_000, null, null),
    ];
    const result = resultOf(events);
    expect(result.per_minute.map(({ minute, queries, p50_ms: p50, p95_ms: p95, max_ms: max }) => ({ minute, queries, p50, p95, max }))).toEqual([
      { minute: '2026-11-30T02:00:00.000Z', queries: 100, p50: expect.any(Number) as number, p95: expect.any(Number) as number, max: 100 },
      { minute: '2026-11-30T02:01:00.000Z', queries: 1, p50: 7.5, p95: 7.5, max: 7.5 },
      { minute: '2026-11-30T02:02:00.000Z', queries: 2, p50: null, p95: null, max: null },
    ]);
    const first = result.per_minute[0]!;
    expect(Math.abs(first.p50_ms! - 50)).toBeLessThanOrEqual(0.5);
    expect(Math.abs(first.p95_ms! - 95)).toBeLessThanOrEqual(0.95);
    expect(result.minutes_without_percentiles).toBe(0);
  });

  it('any split of a log over many minutes (statements completed by a later line included) merges to the percentiles of one fold', async () => {
    // log_statement with log_duration, then log_min_duration_statement: executions timed by the next line of their process.
    const events = spread(await caseEvents('log-report/pg18-stderr-statement-logging'), 4_000);
    const whole = resultOf(events);
    expect(whole.per_minute.filter((m) => typeof m.p95_ms === 'number').length).toBeGreaterThan(1);
    fc.assert(fc.property(fc.array(fc.nat(), { minLength: 1, maxLength: 8 }), fc.boolean(), (cuts, rightFirst) => {
      expect(foldInRanges(events, cuts, rightFirst, DEFAULT_REPORT_LIMITS).per_minute).toEqual(whole.per_minute);
    }), { numRuns: 100 });
  });

  it('a state stored without minute durations (an older pgvigil) leaves its timed minutes without percentiles, and says how many', () => {
    const newer = fold([statement(T0, 3), statement(T0 + 60_000, 4)]);
    const older = JSON.parse(JSON.stringify(fold([statement(T0 + 61_000, 5), statement(T0 + 120_000, 6), statement(T0 + 180_000, null, null)]))) as QueriesState;
    delete older.minute_durations;
    for (const [earlier, later] of [[structuredClone(newer), structuredClone(older)], [structuredClone(older), structuredClone(newer)]] as const) {
      const result = queriesSection.result(queriesSection.merge(earlier, later, DEFAULT_REPORT_LIMITS), DEFAULT_REPORT_LIMITS);
      expect(result.per_minute.map((m) => [m.queries, m.p50_ms, m.max_ms])).toEqual([[1, 3, 3], [2, null, null], [1, null, null], [1, null, null]]);
      // The untimed minute has no percentile to miss.
      expect(result.minutes_without_percentiles).toBe(2);
    }
  });
});
