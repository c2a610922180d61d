/**
 * Historical review: a REPACK that lost its run at the swap on a real PostgreSQL 19rc1 (the
 * recorded log), stored and judged the way the daemon does it, then reviewed afterwards with the
 * built `pgvigil report`.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { testTempDir } from '../helpers/temp-dir.js';
import { EXIT } from '../../src/cli/exit-codes.js';
import { parseReportTime } from '../../src/cli/report.js';
import { launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { storeFromRecordedLog } from '../helpers/review-store.js';
import { FIXTURES_DIR } from '../helpers/scenarios/fixture-case.js';
import { itWithTool } from '../helpers/tools.js';

function storeWithRepackLostAtSwap(file: string): Promise<{ startMs: number; endMs: number }> {
  return storeFromRecordedLog(file, { major: 19, format: 'stderr', scenario: 'repack-lock-timeout-at-swap', target: 'pg19' });
}

/** Inside a test: removed when it ends. */
function tempStore(): string {
  return path.join(testTempDir('report'), 'store.db');
}

function windowArgs(file: string, { startMs, endMs }: { startMs: number; endMs: number }): string[] {
  return ['--db', file, '--from', DateTime.fromMillis(startMs - 60_000).toUTC().toISO()!, '--to', DateTime.fromMillis(endMs + 60_000).toUTC().toISO()!];
}

function pgvigil(args: string[]) {
  const result = spawnSync(process.execPath, ['bin/pgvigil.js', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('pgvigil report', () => {
  it('names the alert, puts the log events around it on a timeline and summarises the window', async () => {
    const file = tempStore();
    const { startMs, endMs } = await storeWithRepackLostAtSwap(file);
    const window = windowArgs(file, { startMs, endMs });

    const text = pgvigil(['report', ...window]);
    expect(text.code).toBe(EXIT.OK);
    expect(text.stdout).toMatch(/^Alerts \(1\)$/m);
    expect(text.stdout).toMatch(/^ {2}#1 ERROR repack-lost-at-swap on pg19: REPACK \(CONCURRENTLY\) of repack_swap\.accounts threw away/m);
    const timeline = text.stdout.slice(text.stdout.indexOf('Timeline'));
    const order = ['ddl', 'lock_wait', 'lock_timeout', 'alert_firing'].map((what) => timeline.search(new RegExp(` pg19 ${what} `)));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(text.stdout).toMatch(/^Lock timeouts \(1\) by lock$/m);

    const json = JSON.parse(pgvigil(['report', ...window, '--json']).stdout) as { alerts: Array<{ rule: string; state: string }>; summary: { events_by_kind: Record<string, number> } };
    expect(json.alerts).toMatchObject([{ rule: 'repack-lost-at-swap', state: 'firing' }]);
    expect(json.summary.events_by_kind.lock_timeout).toBe(1);
    expect(JSON.parse(pgvigil(['report', ...window, '--format', 'json']).stdout)).toEqual(json);

    const md = pgvigil(['report', ...window, '--format', 'md']).stdout;
    expect(md).toMatch(/^- \*\*#1 ERROR repack-lost-at-swap\*\* on `pg19` \(firing, basis log\)/m);
    expect(md).toMatch(/^\| \S+ \| pg19 \| lock_timeout \| .*lock timeout: AccessExclusiveLock on relation .*evidence of #1 \|$/m);

    const before = pgvigil(['report', '--db', file, '--from', DateTime.fromMillis(startMs - 7_200_000).toUTC().toISO()!, '--to', DateTime.fromMillis(startMs - 3_600_000).toUTC().toISO()!]);
    expect(before.stdout).toContain('none fired in this window');
  });

  it('writes one self-contained HTML file whose alert links to its evidence on the timeline and back', async () => {
    const file = tempStore();
    const window = windowArgs(file, await storeWithRepackLostAtSwap(file));
    const out = path.join(path.dirname(file), 'report.html');
    expect(pgvigil(['report', ...window, '--format', 'html', '-o', out]).code).toBe(EXIT.OK);
    const html = readFileSync(out, 'utf8');

    // Nothing to fetch: readable offline and attachable to a ticket.
    expect(html).not.toMatch(/<script|<link|@import|url\(/i);
    expect(html.replace(/xmlns="http:\/\/www\.w3\.org\/2000\/svg"/g, '')).not.toMatch(/https?:\/\//);
    const alert = html.slice(html.indexOf('id="alert-1"'), html.indexOf('</div>\n<h2>Charts'));
    expect(alert).toContain('REPACK (CONCURRENTLY) of repack_swap.accounts threw away');
    const evidence = [...alert.matchAll(/href="#event-(\d+)"/g)].map((m) => m[1]);
    expect(evidence).toHaveLength(3);
    for (const id of evidence) expect(html).toMatch(new RegExp(`<tr id="event-${id}"[^>]*>.*href="#alert-1">evidence of #1</a>`));
    expect(html).toMatch(/lock timeout: AccessExclusiveLock on relation 16569/);
    // The logged lock wait is drawn; the sampled charts say why they are empty.
    expect(html).toMatch(/id="chart-lock_waits"><h3>[^<]*<\/h3><svg /);
    expect(html).toMatch(/id="chart-xmin_horizon"><h3>[^<]*<\/h3><p class="empty">not sampled<\/p>/);
  });

  itWithTool('chromium', 'the HTML report renders in Chromium with its charts and no console error', async () => {
    const file = tempStore();
    const window = windowArgs(file, await storeWithRepackLostAtSwap(file));
    const out = path.join(path.dirname(file), 'report.html');
    expect(pgvigil(['report', ...window, '--format', 'html', '-o', out]).code).toBe(EXIT.OK);
    const browser = await launchChromium();
    try {
      const { page, problems } = await watchedPage(browser);
      await page.goto(pathToFileURL(out).href);
      expect(await page.locator('svg.chart path[stroke]').count()).toBeGreaterThan(0);
      expect(await page.locator('svg.chart rect.alert-period').count()).toBeGreaterThan(0);
      await page.locator('#alert-1 .evidence a').last().click();
      const target = page.locator('tr:target');
      await expect.poll(() => target.count()).toBe(1);
      expect(await target.textContent()).toContain('lock timeout');
      await screenshot(page, 'report-html-repack-lost-at-swap');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('charts the log alone from a store that `pgvigil analyze --db` wrote over an old log', () => {
    const file = tempStore();
    const log = path.join(FIXTURES_DIR, 'pg18-stderr-autovacuum-held-back-by-snapshot', 'autovacuum-held-back-by-snapshot.log');
    expect(pgvigil(['analyze', '--db', file, log]).code).toBe(EXIT.OK);
    const html = pgvigil(['report', '--db', file, '--from', '2026-11-30T07:00:00Z', '--to', '2026-11-30T08:00:00Z', '--format', 'html']).stdout;
    // The recorded run: a snapshot held while 5,000 rows were deleted, then let go.
    expect(html).toMatch(/autovacuum postgres\.public\.av_held, elapsed [\d.]+ s, 5000 dead not removable, removable cutoff \d+/);
    const deadRows = html.slice(html.indexOf('id="chart-dead_not_removable"'), html.indexOf('id="chart-removable_cutoff_age"'));
    expect(deadRows).toMatch(/<svg [^>]*>.*>5k<\/text>.*<path d="M[^"]+" fill="none"/);
    for (const sampled of ['xmin_horizon', 'replica_lag', 'slot_retained_wal']) {
      expect(html).toMatch(new RegExp(`id="chart-${sampled}"><h3>[^<]*</h3><p class="empty">not sampled</p>`));
    }
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
  it('without --from and --to, reviews a store analyze made of an old log over the log\'s own span, and says so', () => {
    // The log ends at 2026-11-30T07:13:55.988Z, more than a day before any run of this test.
    const file = tempStore();
    const log = path.resolve('test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');
    expect(spawnSync(process.execPath, ['bin/pgvigil.js', 'analyze', '--rules', '--db', file, log], { encoding: 'utf8', timeout: 60_000 }).status).toBe(EXIT.OK);

    const moved = pgvigil(['report', '--db', file]);
    expect(moved.code).toBe(EXIT.OK);
    // The log's events run from 07:13:45.144 to 07:13:55.988; the margin is 5% of that, at least 1 s.
    expect(moved.stderr).toContain("nothing in the last 24h; the store's data ends at 2026-11-30T07:13:55.988Z, so this is 2026-11-30T07:13:44.144Z to 2026-11-30T07:13:56.988Z");
    expect(moved.stdout).toContain('pgvigil report: 2026-11-30T07:13:44.144Z to 2026-11-30T07:13:56.988Z');
    expect(moved.stdout).toMatch(/Timeline \([1-9]\d* entries\)/);

    const asked = pgvigil(['report', '--db', file, '--from', '24h']);
    expect(asked.stderr).toBe('');
    expect(asked.stdout).toContain('Timeline (0 entries)');
  });
});
