/**
 * The log report page from real recorded logs' analyze results: its outline (section headings,
 * sub-headings, table columns and row counts, charts and what an empty one says, the one-line
 * reasons of absent data) is a golden file per case, reviewed as a diff; the whole HTML is not,
 * since a chart's coordinates would make every change a wall of numbers. Plus what no golden
 * shows: statement text from the log is escaped everywhere it is printed.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnalyzeReport } from '../analyze-text.js';
import type { QueriesResult } from '../log-report/queries.js';
import { analyzeCaptured } from '../../../test/helpers/analyze-io.js';
import { expectGolden } from '../../../test/helpers/golden-file.js';
import { renderLogReportHtml } from './index.js';

const FIXTURES = path.resolve('test/fixtures');
const GOLDEN_DIR = path.join(FIXTURES, 'log-report-html');

const CASES: Array<[string, string]> = [
  ['pg18-stderr-log-report-workload', 'log-report/pg18-stderr-log-report-workload/log-report-workload.log'],
  ['pg18-csvlog-sessions-and-errors', 'log-report/pg18-csvlog-sessions-and-errors/sessions-and-errors.csv'],
  ['pg18-stderr-analyze-mixed', 'pg18-stderr-analyze-mixed/postgresql.log'],
  ['pg18-csvlog-deadlock', 'logs/pg18-csvlog-deadlock/deadlock.csv'],
];

async function analyzeResult(file: string): Promise<AnalyzeReport> {
  const { code, stdout, stderr } = await analyzeCaptured([path.join(FIXTURES, file)], { json: true, rules: true });
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(stdout) as AnalyzeReport;
}

const TAGS = /<h([123])>(.*?)<\/h\1>|<thead><tr>(.*?)<\/tr><\/thead><tbody>([\s\S]*?)<\/tbody>|<p class="empty">(.*?)<\/p>|<section class="chart-box" id="chart-([^"]+)">|<div class="alert [^"]*"/g;

/** The page's outline, one line per heading, table, chart and absent-data line, indented by level. */
function outline(html: string): string {
  const out: string[] = [];
  for (const m of html.matchAll(TAGS)) {
    const [, level, heading, head, body, empty, chart] = m;
    if (heading !== undefined) out.push(`${'  '.repeat(Number(level) - 1)}${heading}`);
    else if (head !== undefined) out.push(`    table [${[...head.matchAll(/<th[^>]*>(.*?)<\/th>/g)].map((th) => th[1]).join(' | ')}] ${body!.split('<tr>').length - 1} rows`);
    else if (empty !== undefined) out.push(`    (empty) ${empty}`);
    else if (chart !== undefined) out.push(`    chart ${chart}`);
    else out.push('    alert');
  }
  return `${out.join('\n')}\n`;
}

describe('the log report page', () => {
  it.each(CASES)('%s has the outline of its golden file', async (name, file) => {
    const html = renderLogReportHtml(await analyzeResult(file));
    expectGolden(path.join(GOLDEN_DIR, `${name}.txt`), outline(html).replaceAll(path.join(FIXTURES, file), '<log>'));
    // Self-contained: nothing is fetched and nothing runs when it is opened.
    expect(html).not.toMatch(/<script|<link|src=|@import|url\(/i);
  });

  it('escapes statement text from the log wherever it is printed', async () => {
    const report = await analyzeResult(CASES[0]![1]);
    const hostile = `SELECT '</script><img src=x onerror="alert(1)">' & "x"`;
    const queries = report.report.queries as { slowest: Array<{ text: string }>; by_count: Array<{ text: string }> };
    const errors = report.report.errors as { messages: Array<{ message: string; example: { statement: string | null } }> };
    queries.slowest[0]!.text = hostile;
    queries.by_count[0]!.text = hostile;
    errors.messages[0]!.message = hostile;
    errors.messages[0]!.example.statement = hostile;
    report.files[0]!.path = hostile;
    const html = renderLogReportHtml(report);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('</script>');
    expect(html.split('SELECT &#39;&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&#39; &amp; &quot;x&quot;').length - 1).toBeGreaterThanOrEqual(5);
  });

  it('shades the period of each alert above info on the charts, linked to the alert', async () => {
    const html = renderLogReportHtml(await analyzeResult(CASES[2]![1]));
    const alerts = [...html.matchAll(/<div class="alert (\w+) [^"]*" id="alert-(\d+)">/g)].filter((m) => m[1] !== 'info').map((m) => m[2]);
    expect(alerts.length).toBeGreaterThan(0);
    const queriesChart = /<section class="chart-box" id="chart-queries_per_minute">.*?<\/section>/s.exec(html)?.[0] ?? '';
    expect([...queriesChart.matchAll(/<a href="#alert-(\d+)"><rect class="alert-period"/g)].map((m) => m[1])).toEqual(alerts);
  });

  it('draws the p50, p95 and max of the queries per minute, and says for how many minutes they were not stored', async () => {
    const report = await analyzeResult(CASES[0]![1]);
    const chart = /<section class="chart-box" id="chart-query_duration_percentiles">.*?<\/section>/s.exec(renderLogReportHtml(report))?.[0] ?? '';
    expect([...chart.matchAll(/<g class="line"><title>(.*?)<\/title>/g)].map((m) => m[1])).toEqual(['p50', 'p95', 'max']);
    expect(chart).toContain(' ms</text>');
    (report.report.queries as QueriesResult).minutes_without_percentiles = 2;
    expect(renderLogReportHtml(report)).toContain('<p class="empty">p50/p95/max unknown for 2 minutes with durations (the gaps in the percentiles chart)');
  });

  it('says what to set when the log has no statement durations, rather than leaving the section out', async () => {
    const html = renderLogReportHtml(await analyzeResult(CASES[3]![1]));
    expect(html).toContain('<h2>Queries: ');
    expect(html).toMatch(/set log_min_duration_statement = 0/);
  });
});
