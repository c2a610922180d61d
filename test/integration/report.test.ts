/**
 * Historical review: a REPACK that lost its run at the swap on a real PostgreSQL 19rc1 (the
 * recorded log), stored and judged the way the daemon does it, then reviewed afterwards with the
 * built `pgvigil report`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { testTempDir } from '../helpers/temp-dir.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { parseReportTime } from '../../src/cli/report.js';
import { silentLogger } from '../../src/lib/logger.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { caseName, FIXTURES_DIR, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

async function storeWithRepackLostAtSwap(file: string): Promise<{ startMs: number; endMs: number }> {
  const dir = path.join(FIXTURES_DIR, caseName(19, 'stderr', 'repack-lock-timeout-at-swap'));
  const fixture = readCase(dir);
  const { events } = await parseLogFile(path.join(dir, fixture.log_file), { format: 'stderr', prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: 'pg19' });
  const db = openStore(file);
  const clock = new ManualClock(events[0]!.tsMs);
  const writer = new StoreWriter(db, clock, silentLogger());
  writer.enqueue({ events });
  writer.flush();
  const engine = new RuleEngine({
    rules: buildRules(RULES_DEFAULTS), views: new StoreRuleViewSource(db, { targets: [{ name: 'pg19', cluster: null }], staleAfterMs: 5_000 }),
    alerts: new AlertStore(db, []), clock, log: silentLogger(),
  });
  const endMs = events.at(-1)!.tsMs;
  engine.evaluate(endMs + 1_000);
  db.close();
  return { startMs: events[0]!.tsMs, endMs: endMs + 1_000 };
}

function pgvigil(args: string[]) {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('pgvigil report', () => {
  it('names the alert, puts the log events around it on a timeline and summarises the window', async () => {
    const file = path.join(testTempDir('report'), 'store.db');
    const { startMs, endMs } = await storeWithRepackLostAtSwap(file);
    const window = ['--db', file, '--from', DateTime.fromMillis(startMs - 60_000).toUTC().toISO()!, '--to', DateTime.fromMillis(endMs + 60_000).toUTC().toISO()!];

    const text = pgvigil(['report', ...window]);
    expect(text.code).toBe(EXIT.OK);
    expect(text.stdout).toMatch(/^Alerts \(1\)$/m);
    expect(text.stdout).toMatch(/^ {2}#1 WARNING repack-lost-at-swap on pg19: REPACK \(CONCURRENTLY\) of repack_swap\.accounts threw away/m);
    const timeline = text.stdout.slice(text.stdout.indexOf('Timeline'));
    const order = ['ddl', 'lock_wait', 'lock_timeout', 'alert_firing'].map((what) => timeline.search(new RegExp(` pg19 ${what} `)));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text.stdout).toMatch(/^Lock timeouts \(1\) by lock$/m);

    const json = JSON.parse(pgvigil(['report', ...window, '--json']).stdout) as { alerts: Array<{ rule: string; state: string }>; summary: { events_by_kind: Record<string, number> } };
    expect(json.alerts).toMatchObject([{ rule: 'repack-lost-at-swap', state: 'firing' }]);
    expect(json.summary.events_by_kind.lock_timeout).toBe(1);

    const before = pgvigil(['report', '--db', file, '--from', DateTime.fromMillis(startMs - 7_200_000).toUTC().toISO()!, '--to', DateTime.fromMillis(startMs - 3_600_000).toUTC().toISO()!]);
    expect(before.stdout).toContain('none fired in this window');
  });

  it('says what is wrong with a bad window or a missing store', () => {
    expect(pgvigil(['report', '--from', 'yesterday-ish']).code).toBe(EXIT.USAGE);
    const missing = pgvigil(['report', '--db', '/nonexistent/pgvigil.db']);
    expect(missing.code).toBe(EXIT.FAILURE);
    expect(missing.stderr).toContain('/nonexistent/pgvigil.db');
  });

  it('run where no store is, says there is none at ./pgvigil.db and how to name one, and creates none', () => {
    const cwd = testTempDir('report-cwd');
    const { PGVIGIL_DB: _ignored, ...env } = process.env;
    const result = spawnSync(process.execPath, [path.resolve('bin/pgvigil.js'), 'report', '--from', '2h', '--to', 'now'],
      { cwd, encoding: 'utf8', timeout: 30_000, env });
    expect(result.status).toBe(EXIT.FAILURE);
    expect(result.stderr).toBe(`pgvigil report: ${path.join(cwd, 'pgvigil.db')}: no pgvigil store here. Point at the store that ` +
      '`pgvigil run` or `npm start` printed when it started, with --db <file> or PGVIGIL_DB.\n');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('reads times as ISO 8601 or durations before now', () => {
    const now = Date.UTC(2026, 10, 30, 12);
    expect(parseReportTime('now', now)).toBe(now);
    expect(parseReportTime('6h', now)).toBe(now - 6 * 3_600_000);
    expect(parseReportTime('-30m', now)).toBe(now - 30 * 60_000);
    expect(parseReportTime('2026-11-30T10:00:00Z', now)).toBe(Date.UTC(2026, 10, 30, 10));
    expect(parseReportTime('soon', now)).toBeNull();
  });
});
