/**
 * What the database was doing, from the store: two real PostgreSQL 18 logs (the log report's
 * workload, then sessions and errors four minutes later) in one file that `pgvigil run` tails,
 * folding the log report per minute into its store, then `pgvigil report --from --to`.
 * The contract: over the whole span its sections are `pgvigil analyze --json`'s `report` of the
 * same logs; over a sub-window, those of that window's minutes alone.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { buildApp } from '../../src/app.js';
import { runReport } from '../../src/cli/report.js';
import { loadConfig } from '../../src/config/load-config.js';
import { freePort, waitUntil } from '../../src/demo/processes.js';
import { systemClock, type AnyLogEvent } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { IncidentReport } from '../../src/report/incident-report.js';
import { LOG_REPORT_SECTIONS } from '../../src/report/log-report/index.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';
import { testTempDir } from '../helpers/temp-dir.js';

const CASES = path.join('test', 'fixtures', 'log-report');
const WORKLOAD = path.join(CASES, 'pg18-stderr-log-report-workload', 'log-report-workload.log');
const SESSIONS = path.join(CASES, 'pg18-stderr-sessions-and-errors', 'sessions-and-errors.log');
const TARGET = 'pg18';
const PREFIX = '%m [%p] %q%u@%d ';

/**
 * `pgvigil run` (buildApp, as main.ts starts it) tailing a file that holds the logs one after the
 * other, from its beginning, with no PostgreSQL to poll: the log alone. Stopped once the whole
 * file is read, so its minutes are merged at shutdown.
 */
async function daemonStores(dir: string, logs: readonly string[]): Promise<{ store: string; log: string; events: AnyLogEvent[] }> {
  const log = path.join(dir, 'postgresql.log');
  writeFileSync(log, Buffer.concat(logs.map((file) => readFileSync(file))));
  const { events } = await parseLogFile(log, { format: 'stderr', prefix: PREFIX, timezone: 'UTC', target: TARGET });
  const store = path.join(dir, 'store.db');
  const config = path.join(dir, 'pgvigil.yaml');
  writeFileSync(config, stringify({
    // As analyze reads them: the daemon's default redacts literals in what it stores, the report's examples too.
    db: store, listen: `127.0.0.1:${await freePort()}`, redact: 'off',
    targets: [{ name: TARGET, dsn: 'postgres://pgvigil@127.0.0.1:1/postgres', log: { path: log, format: 'stderr', prefix: PREFIX, timezone: 'UTC', start_at: 'beginning' } }],
  }));
  const app = buildApp(loadConfig({ file: config, env: {} }), { clock: systemClock, log: silentLogger() });
  await app.start();
  try {
    // Statement lines are not kept as events: the position says when the whole file is read.
    const readTo = () => app.db.prepare('SELECT offset FROM tailer_offsets').pluck().get() as number | undefined;
    await waitUntil(() => readTo() === statSync(log).size, 60_000, 'the whole log to be read');
  } finally {
    await app.stop();
  }
  return { store, log, events };
}

async function report(file: string, fromMs: number, toMs: number, format: 'json' | 'text' | 'md' | 'html'): Promise<string> {
  const output = path.join(path.dirname(file), `report.${format}`);
  const flags = { db: file, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), format, output, windowGiven: true };
  expect(await runReport(flags, toMs)).toBe(0);
  return readFileSync(output, 'utf8');
}

async function analyzeReport(files: string[]): Promise<Record<string, unknown>> {
  const { code, stdout } = await analyzeCaptured(files, { json: true, target: TARGET, format: 'stderr', prefix: PREFIX, tz: 'UTC' });
  expect(code).toBe(0);
  return (JSON.parse(stdout) as { report: Record<string, unknown> }).report;
}

describe('pgvigil report: the log report of a window from the stored minutes', () => {
  it('over the whole span gives analyze --json\'s sections, over a later window only its minutes', async () => {
    expect(LOG_REPORT_SECTIONS.length).toBeGreaterThan(0);
    const { store: file, log, events } = await daemonStores(testTempDir('report-log-sections'), [WORKLOAD, SESSIONS]);
    const firstMs = events[0]!.tsMs;
    const lastMs = events.at(-1)!.tsMs;

    const whole = JSON.parse(await report(file, firstMs, lastMs, 'json')) as IncidentReport;
    expect(whole.log_report?.sections).toEqual(await analyzeReport([log]));
    expect(whole.log_report?.unreadable_rows).toBe(0);

    const sessionsStartMs = (await parseLogFile(SESSIONS, { format: 'stderr', prefix: PREFIX, timezone: 'UTC' })).events[0]!.tsMs;
    const later = JSON.parse(await report(file, sessionsStartMs, lastMs, 'json')) as IncidentReport;
    expect(later.log_report?.sections).toEqual(await analyzeReport([SESSIONS]));
    expect(later.log_report?.sections).not.toEqual(whole.log_report?.sections);

    const titles = LOG_REPORT_SECTIONS.map((s) => s.key.replace(/_/g, ' ')).map((t) => t.charAt(0).toUpperCase() + t.slice(1));
    const text = await report(file, firstMs, lastMs, 'text');
    expect(text).toMatch(/^What the database was doing: the log report of the window's \d+ stored minute row\(s\), whole minutes$/m);
    for (const title of titles) expect(text).toMatch(new RegExp(`^${title}$`, 'm'));
    const md = await report(file, firstMs, lastMs, 'md');
    for (const title of titles) expect(md).toMatch(new RegExp(`^### ${title}$`, 'm'));
    const html = await report(file, firstMs, lastMs, 'html');
    for (const section of LOG_REPORT_SECTIONS) expect(html).toContain(`<section class="log-section" id="log-${section.key}">`);
  });

  it('a store analyze --db made of the same logs gives the same sections', async () => {
    const dir = testTempDir('report-log-sections');
    const log = path.join(dir, 'postgresql.log');
    writeFileSync(log, Buffer.concat([WORKLOAD, SESSIONS].map((file) => readFileSync(file))));
    const file = path.join(dir, 'analyzed.db');
    const analyzed = await analyzeCaptured([log], { json: true, target: TARGET, format: 'stderr', prefix: PREFIX, tz: 'UTC', db: file });
    expect(analyzed.code).toBe(0);
    const { events } = await parseLogFile(log, { format: 'stderr', prefix: PREFIX, timezone: 'UTC', target: TARGET });
    const stored = JSON.parse(await report(file, events[0]!.tsMs, events.at(-1)!.tsMs, 'json')) as IncidentReport;
    expect(stored.log_report?.sections).toEqual((JSON.parse(analyzed.stdout) as { report: unknown }).report);
  });
});
