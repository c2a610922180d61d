/**
 * `pgvigil analyze --json`'s log report (issue #26) is the same whether one thread folds every
 * event or workers fold ranges that the merge joins in file order: on real recorded logs, cut
 * into ranges of a few hundred bytes so that boundaries fall between a log_statement line and
 * the duration line of its process, and inside multi-line entries.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runAnalyze, type AnalyzeOptions } from '../../src/cli/analyze.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import type { QueriesResult } from '../../src/report/log-report/queries.js';

const FIXTURES = path.resolve(import.meta.dirname, '..', 'fixtures');
const LOGS = [
  path.join(FIXTURES, 'pg18-stderr-analyze-mixed', 'postgresql.log'),
  path.join(FIXTURES, 'log-report', 'pg18-stderr-statement-logging', 'statement-logging.log'),
  path.join(FIXTURES, 'log-report', 'pg15-csvlog-log-report-workload', 'log-report-workload.csv'),
];

async function analyze(files: string[], options: AnalyzeOptions): Promise<{ code: number; stdout: string }> {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const code = await runAnalyze(files, options, { stdout, stderr: new PassThrough() });
  return { code, stdout: Buffer.concat(chunks).toString('utf8') };
}

describe('analyze: the log report', () => {
  it.each(LOGS.map((file) => [path.basename(path.dirname(file)), file]))('%s: -j 2 in tiny ranges gives the report of -j 1', async (_name, file) => {
    const one = JSON.parse((await analyze([file], { json: true, jobs: 1 })).stdout) as AnalyzeReport;
    const two = JSON.parse((await analyze([file], { json: true, jobs: 2, rangeBytes: 300 })).stdout) as AnalyzeReport;
    expect((one.report.queries as QueriesResult).queries).toBeGreaterThan(0);
    expect(two.report).toEqual(one.report);
  }, 120_000);

  it.each([1, 2])('with --redact literals keeps no literal in the report, with statements no statement but the same ranking by fingerprint (-j %i)', async (jobs) => {
    // The sort that spills to temp files, whose statement the temp-files section quotes as logged.
    const file = LOGS[2]!;
    const literal = 'generate_series(1, 40000)';
    const plain = JSON.parse((await analyze([file], { json: true, jobs })).stdout) as AnalyzeReport;
    expect(JSON.stringify(plain.report)).toContain(literal);
    const redacted = JSON.parse((await analyze([file], { json: true, jobs, redact: 'literals', ...(jobs > 1 && { rangeBytes: 300 }) })).stdout) as AnalyzeReport;
    expect(JSON.stringify(redacted.report)).not.toContain(literal);
    expect((redacted.report.queries as QueriesResult).queries).toBe((plain.report.queries as QueriesResult).queries);
    const withoutStatements = JSON.parse((await analyze([file], { json: true, jobs, redact: 'statements' })).stdout) as AnalyzeReport;
    expect(JSON.stringify(withoutStatements.report)).not.toMatch(/generate_series|SELECT/);
    const ranking = (report: AnalyzeReport) => (report.report.queries as QueriesResult).by_total_time.map((row) => [row.fingerprint, row.count]);
    expect(ranking(withoutStatements)).toEqual(ranking(plain));
    expect((withoutStatements.report.queries as QueriesResult).by_total_time[0]?.text).toMatch(/^\(statement text redacted\) #[0-9a-f]{16}$/);
  }, 120_000);

  it('one report over several files, in the order of their first timestamps', async () => {
    const one = JSON.parse((await analyze(LOGS, { json: true, jobs: 1 })).stdout) as AnalyzeReport;
    const two = JSON.parse((await analyze([...LOGS].reverse(), { json: true, jobs: 2, rangeBytes: 300 })).stdout) as AnalyzeReport;
    expect(two.report).toEqual(one.report);
    const single = await Promise.all(LOGS.map(async (file) => (JSON.parse((await analyze([file], { json: true, jobs: 1 })).stdout) as AnalyzeReport).report.queries as QueriesResult));
    expect((one.report.queries as QueriesResult).queries).toBe(single.reduce((sum, q) => sum + q.queries, 0));
  }, 120_000);

  it('prints the Queries section in the text form', async () => {
    const { code, stdout } = await analyze([LOGS[1]!], { jobs: 1 });
    expect(code).toBe(0);
    expect(stdout).toContain('Queries (28 executions');
    expect(stdout).toContain('SELECT pg_sleep($1)');
  }, 60_000);
});
