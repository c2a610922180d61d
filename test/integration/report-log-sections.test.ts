/**
 * What the database was doing, from the store: two real PostgreSQL 18 logs (the log report's
 * workload, then sessions and errors four minutes later, one server name) stored through the
 * daemon's writer with the log report folded per minute, then `pgvigil report --from --to`.
 * The contract: over the whole span its sections are `pgvigil analyze --json`'s `report` of the
 * same logs; over a sub-window, those of that window's minutes alone.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/report.js';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { IncidentReport } from '../../src/report/incident-report.js';
import { LOG_REPORT_SECTIONS } from '../../src/report/log-report/index.js';
import { ReportMinutesWriter } from '../../src/report/log-report/report-minutes-writer.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';
import { testTempDir } from '../helpers/temp-dir.js';

const CASES = path.join('test', 'fixtures', 'log-report');
const WORKLOAD = path.join(CASES, 'pg18-stderr-log-report-workload', 'log-report-workload.log');
const SESSIONS = path.join(CASES, 'pg18-stderr-sessions-and-errors', 'sessions-and-errors.log');
const TARGET = 'pg18';
/** Events per commit, as the tailer hands them over in pieces. */
const BATCH = 37;

/** The logs' events stored the way `pgvigil run` stores them, the report minutes folded from its commits. */
async function storeLogs(file: string, logs: readonly string[]): Promise<AnyLogEvent[]> {
  const events: AnyLogEvent[] = [];
  for (const log of logs) events.push(...(await parseLogFile(log, { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC', target: TARGET })).events);
  const db = openStore(file);
  const clock = new ManualClock(events[0]!.tsMs);
  const writer = new StoreWriter(db, clock, silentLogger());
  const minutes = new ReportMinutesWriter(db, writer, clock, silentLogger());
  await minutes.start();
  await writer.start();
  for (let at = 0; at < events.length; at += BATCH) {
    writer.enqueue({ events: events.slice(at, at + BATCH) });
    writer.flush();
  }
  await writer.stop();
  await minutes.stop();
  db.close();
  return events;
}

async function report(file: string, fromMs: number, toMs: number, format: 'json' | 'text' | 'md' | 'html'): Promise<string> {
  const output = path.join(path.dirname(file), `report.${format}`);
  const flags = { db: file, from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString(), format, output, windowGiven: true };
  expect(await runReport(flags, toMs)).toBe(0);
  return readFileSync(output, 'utf8');
}

async function analyzeReport(files: string[]): Promise<Record<string, unknown>> {
  const { code, stdout } = await analyzeCaptured(files, { json: true, target: TARGET });
  expect(code).toBe(0);
  return (JSON.parse(stdout) as { report: Record<string, unknown> }).report;
}

describe('pgvigil report: the log report of a window from the stored minutes', () => {
  it('over the whole span gives analyze --json\'s sections, over a later window only its minutes', async () => {
    expect(LOG_REPORT_SECTIONS.length).toBeGreaterThan(0);
    const file = path.join(testTempDir('report-log-sections'), 'store.db');
    const events = await storeLogs(file, [WORKLOAD, SESSIONS]);
    const firstMs = events[0]!.tsMs;
    const lastMs = events.at(-1)!.tsMs;

    const whole = JSON.parse(await report(file, firstMs, lastMs, 'json')) as IncidentReport;
    expect(whole.log_report?.sections).toEqual(await analyzeReport([WORKLOAD, SESSIONS]));
    expect(whole.log_report?.unreadable_rows).toBe(0);

    const sessionsStartMs = events.find((e) => e.source.file === SESSIONS)!.tsMs;
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
});
