/**
 * The log report at each `redact` level, on logs written by real servers: the log-report workload
 * (statements of both protocols, errors with their STATEMENT, temp files, a lock wait), a deadlock
 * (its processes' queries) and lock waits. At `statements` no statement text is folded, printed or
 * stored, yet the queries group and rank as at `off`, each under its fingerprint.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../domain/index.js';
import type { RedactLevel } from '../../lib/redact.js';
import { readCase } from '../../../test/helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../../../test/helpers/scenarios/parse-log.js';
import { STATEMENT_TEXT_REDACTED } from './fingerprint.js';
import { LOG_REPORT_SECTIONS } from './index.js';
import { LogReportFold } from './log-report-fold.js';
import { foldByMinute } from './minute-folds.js';
import type { QueriesResult } from './queries.js';
import { reportableEvent } from './reportable-event.js';
import { DEFAULT_REPORT_LIMITS } from './section.js';
import { mergeStoredMinutes } from './stored-log-report.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../test/fixtures');
const CASES = ['log-report/pg18-stderr-log-report-workload', 'logs/pg18-stderr-deadlock', 'logs/pg18-stderr-lock-waits-and-lock-timeout', 'logs/pg18-stderr-temp-files-sort'];

async function recorded(): Promise<AnyLogEvent[]> {
  const events: AnyLogEvent[] = [];
  for (const folder of CASES) {
    const dir = path.join(FIXTURES, folder);
    const fixture = readCase(dir);
    events.push(...(await parseLogFile(path.join(dir, fixture.log_file), { format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone })).events);
  }
  return events;
}

function reportAt(events: readonly AnyLogEvent[], level: RedactLevel): Record<string, unknown> {
  const fold = new LogReportFold();
  for (const event of events) fold.add(reportableEvent(event, level));
  return fold.results();
}

/** Words of the statements these logs ran: none may be in a report at `statements`. */
const STATEMENT_WORDS = /\b(SELECT|INSERT|UPDATE|DELETE|BEGIN|LOCK TABLE|pg_sleep|generate_series|ORDER BY)\b/i;

/** Every string of `value` that names a statement: the queries' texts, examples, waiters' statements... */
function statementStrings(value: unknown, key = ''): string[] {
  if (typeof value === 'string') return /statement|text|example|query/.test(key) ? [value] : [];
  if (Array.isArray(value)) return value.flatMap((item) => statementStrings(item, key));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => statementStrings(v, k));
  return [];
}

describe('the log report at each redact level', () => {
  it('groups and ranks the queries alike at off, literals and statements', async () => {
    const events = await recorded();
    const ranked = (level: RedactLevel) => (reportAt(events, level).queries as QueriesResult).by_total_time.map((row) => [row.fingerprint, row.count, row.total_ms]);
    const off = ranked('off');
    expect(off.length).toBeGreaterThan(10);
    expect(ranked('literals')).toEqual(off);
    expect(ranked('statements')).toEqual(off);
  });

  it('holds no statement text at statements: each statement is the marker of its fingerprint', async () => {
    const report = reportAt(await recorded(), 'statements');
    const texts = statementStrings(report);
    expect(texts.some((text) => text.startsWith(STATEMENT_TEXT_REDACTED))).toBe(true);
    expect(texts.filter((text) => STATEMENT_WORDS.test(text))).toEqual([]);
    expect(JSON.stringify(report)).not.toMatch(STATEMENT_WORDS);
    for (const row of (report.queries as QueriesResult).by_count) expect(row.text).toBe(`${STATEMENT_TEXT_REDACTED} #${row.fingerprint}`);
  });

  it('stores no statement text at statements in the per-minute rows `report --from --to` reads', async () => {
    const rows = foldByMinute((await recorded()).map((e) => reportableEvent(e, 'statements')), LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS);
    expect(rows.map((row) => row.states).join('\n')).not.toMatch(STATEMENT_WORDS);
    const stored = mergeStoredMinutes(rows, LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS).sections;
    expect((stored.queries as QueriesResult).by_total_time.map((row) => row.fingerprint)).toEqual((reportAt(await recorded(), 'off').queries as QueriesResult).by_total_time.map((row) => row.fingerprint));
  });
});
