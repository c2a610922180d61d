/**
 * `pgvigil demo` end to end, as an operator runs it (the built CLI, --duration instead of
 * Ctrl-C) on a real PostgreSQL 18 primary and streaming standby: the alerts the incident is about
 * fire, naming the horizon's holder, the databases held back, the recovery conflict's reason and
 * the lock queue ended by lock_timeout; the terminal tells it; and nothing is left running or on
 * disk but the store and the report asked for.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../src/store/open-store.js';
import { serveStore } from '../helpers/review-store.js';
import { launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { dashboardFiles, exposedFamilies, metricNamesIn, panelQueries } from '../helpers/dashboards.js';
import { freePort } from '../helpers/pg-processes.js';
import { itWithTool } from '../helpers/tools.js';

/** The incident's acts end at 70 s (ACTS.over); the rest is the quiet after it, which must stay quiet. */
const DURATION_S = 95;
const RUN_TIMEOUT_MS = 150_000;
const SCRAPE_INTERVAL_MS = 5_000;
/**
 * Series the demo's scenario cannot show, each for its reason; dashboards.test.ts still checks
 * that pgvigil has them. Anything else a panel queries must be in the run's exposition.
 */
const NOT_IN_THIS_SCENARIO: Record<string, string> = {
  pg_stat_progress_repack_heap_tuples_scanned: 'REPACK exists from PostgreSQL 19; the demo runs 18',
  pg_stat_progress_repack_heap_tuples_written: 'REPACK exists from PostgreSQL 19; the demo runs 18',
  pg_stat_progress_vacuum_heap_blocks_scanned: 'only while a vacuum runs; the demo\'s tables vacuum in milliseconds',
  pg_replication_slots_catalog_xmin_age_xids: 'only for a logical slot; the demo has a physical one',
};
const DEMO_TEMP_DIR = /^pgvigil-(demo-|pg18-demo-primary-|pg18-standby-)/;
/** README's screenshots: UPDATE_SCREENSHOTS=1 writes this run's into docs/images/. */
const README_IMAGES = path.resolve('docs/images');

interface AlertRow { rule_id: string; target: string; state: string; summary: string }

describe('pgvigil demo', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-demo-test-'));
  const store = path.join(dir, 'store.db');
  let stdout = '';
  let stderr = '';
  let exitCode: number | null = null;
  let tempBefore: Set<string>;
  let db: Db;
  /** Every family the daemon's /metrics showed during the run. */
  const exposed = new Set<string>();

  beforeAll(async () => {
    tempBefore = new Set(fs.readdirSync(os.tmpdir()).filter((name) => DEMO_TEMP_DIR.test(name)));
    const listen = `127.0.0.1:${await freePort()}`;
    const child = spawn(process.execPath, [
      'bin/pgvigil.js', 'demo', '--duration', String(DURATION_S), '--listen', listen, '--db', store, '--report', path.join(dir, 'report.html'),
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const scrape = async () => {
      const response = await fetch(`http://${listen}/metrics`).catch(() => null);
      if (response?.ok) for (const name of exposedFamilies(await response.text())) exposed.add(name);
    };
    const scraper = setInterval(() => void scrape(), SCRAPE_INTERVAL_MS);
    exitCode = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearInterval(scraper);
    db = openStore(store, { readonly: true });
  }, RUN_TIMEOUT_MS + 10_000);

  afterAll(() => {
    db?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const alerts = (ruleId: string) => db.prepare('SELECT rule_id, target, state, summary FROM alerts WHERE rule_id = ? ORDER BY id').all(ruleId) as AlertRow[];

  it('ends by itself after --duration, with exit code 0', () => {
    expect({ exitCode, stderr }).toEqual({ exitCode: 0, stderr: '' });
  });

  it('names what holds the xmin horizon on the primary, and vacuum held back in both databases', () => {
    const byTarget = Object.fromEntries(alerts('xmin-horizon-held').map((a) => [a.target, a.summary]));
    expect(byTarget.primary).toMatch(/^xmin horizon is [\d,]+ XIDs old, held by physical slot standby_\d+ \(a standby's hot_standby_feedback.*\); vacuum cannot remove rows deleted since, in every database$/);
    // The standby's report query holds the primary's horizon through feedback, not the standby's own tables.
    expect(byTarget.standby).toBeUndefined();
    // Autovacuum's own reports: rows it could not remove, in shop and in billing.
    const heldBack = db.prepare(`SELECT DISTINCT json_extract(details, '$.database') FROM events
      WHERE target = 'primary' AND kind = 'autovacuum' AND json_extract(details, '$.tuples_dead_not_removable') > 0`).pluck().all();
    expect(heldBack).toEqual(expect.arrayContaining(['shop', 'billing']));
  });

  it('says vacuum was held back, as one alert however the cutoff moved, naming the standby\'s slot', () => {
    const held = alerts('vacuum-held-back');
    expect(held.map((a) => a.target)).toEqual(['primary']);
    // The stored summary is the last update: by then one database may already have been released.
    // A server-wide holder shows in whichever databases autovacuum visited meanwhile (template1 too).
    expect(held[0]?.summary).toMatch(/^vacuum held back in (\d databases \((?=[^)]*\b(billing|shop)\b)[a-z0-9_, ]+\)|database (billing|shop)) for \d+ s .*; held by physical slot standby_\d+/);
  });

  it('stays quiet once the incident is over: no alert of warning or worse starts after it', () => {
    const over = /^(\d\d:\d\d:\d\d) {2}the incident is over; pgvigil keeps watching$/m.exec(stdout)?.[1];
    expect(over).toBeDefined();
    // The demo prints local wall-clock seconds; the run started today (DateTime's default), well before midnight or not at all.
    const overMs = DateTime.fromFormat(over!, 'HH:mm:ss').toMillis() + 1_000;
    const after = db.prepare(`SELECT rule_id, summary, started_ms FROM alerts WHERE started_ms >= ? AND severity IN ('warning', 'error', 'critical')`).all(overMs);
    expect(after).toEqual([]);
    // And it was watched for a while: the run went on past the incident.
    expect(db.prepare('SELECT max(ts_ms) FROM events').pluck().get() as number).toBeGreaterThan(overMs + 15_000);
  });

  it('names the recovery conflict replay waits on as the cause of the lag, and the standby query it cancelled', () => {
    // Replay waits on the reader no longer than max_standby_streaming_delay, by the server's own
    // setting: replay-stalled stays quiet; the lag the wait causes is the alert, and names the wait.
    expect(alerts('replay-stalled')).toEqual([]);
    // Lag counts from when the DROP's WAL arrived (not from the last commit before it), so it passes
    // 10 s for 5 s near the 15 s at which the reader is cancelled: the alert's latest summary may
    // already name the unlink replay does next.
    expect(alerts('replica-lag-over-lb-limit')[0]?.summary).toMatch(
      /^standby is \d+ s behind the primary, past the 10 s at which load balancers drop it: replay (waiting on a lock held by standby query pid \d+|stalled probably on unlink of build_logs)/,
    );
    const cancelled = db.prepare(`SELECT message, json_extract(details, '$.reason') AS reason, database FROM events
      WHERE target = 'standby' AND kind = 'recovery_conflict'`).all();
    expect(cancelled).toContainEqual({ message: 'canceling statement due to conflict with recovery', reason: 'lock', database: 'shop' });
  });

  it('names the ALTER TABLE stuck in the lock queue with the queries behind it, ended by lock_timeout', () => {
    const [queue] = alerts('drop-blocks-lock-queue');
    // Named once the poller's catalog cache knows the table (lock-names-live.test.ts proves the naming).
    expect(queue?.summary).toMatch(/^ALTER TABLE orders has waited \d+ s for AccessExclusiveLock(?: on shop\.public\.orders \(relation \d+ of database \d+\))? behind pid \d+ and blocks [3-9] queries queued behind it$/);
    expect(queue?.state).toBe('resolved');
    const timeouts = db.prepare(`SELECT json_extract(details, '$.statement') FROM events WHERE target = 'primary' AND kind = 'lock_timeout'`).pluck().all();
    expect(timeouts).toEqual(['ALTER TABLE orders ADD COLUMN note text']);
  });

  it('tells the story in the terminal: each alert as it fires (with its page) and resolves, then the report', () => {
    for (const rule of ['xmin-horizon-held', 'replica-lag-over-lb-limit', 'drop-blocks-lock-queue']) {
      expect(stdout).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d  FIRING   ${rule} \\(\\w+, (primary|standby)\\): .+\\n {9}http://127\\.0\\.0\\.1:\\d+/api/alerts/\\d+$`, 'm'));
    }
    expect(stdout).toMatch(/^\d\d:\d\d:\d\d {2}RESOLVED drop-blocks-lock-queue \(primary\): ALTER TABLE orders/m);
    const report = /^\d\d:\d\d:\d\d {2}report: (\S+)/m.exec(stdout)?.[1];
    expect(report).toMatch(new RegExp(`^${dir}/report\\.(html|json)$`));
    expect(fs.readFileSync(report!, 'utf8')).toContain('ALTER TABLE orders has waited');
    expect(stdout).toContain(`store: ${store}\n`);
  });

  itWithTool('chromium', 'shows the incident in the HTML report and on the timeline page, in a real browser', async () => {
    const reportFile = path.join(dir, 'report.html');
    const app = await serveStore(db);
    const url = app.url;
    const browser = await launchChromium();
    try {
      const report = await watchedPage(browser);
      await report.page.goto(pathToFileURL(reportFile).href);
      const text = await report.page.locator('body').innerText();
      expect(text).toMatch(/held by physical slot standby_\d+/); // the horizon's holder
      for (const database of ['shop', 'billing']) expect(text).toContain(database);
      expect(text).toContain('recovery conflict on lock');
      expect(text).toMatch(/lock[ _]timeout/);
      expect(await report.page.locator('svg.chart path[stroke]').count()).toBeGreaterThan(0);
      const reportShot = await screenshot(report.page, 'demo-report', { fullPage: false });
      expect(report.problems).toEqual([]);

      const timeline = await watchedPage(browser);
      const firstAlertMs = db.prepare('SELECT min(started_ms) FROM alerts').pluck().get() as number;
      await timeline.page.goto(`${url}/?from=${firstAlertMs - 60_000}&to=${Date.now()}`);
      await timeline.page.waitForSelector('body[data-ready=true]');
      const listed = await timeline.page.locator('#alerts li[data-alert-id]').allTextContents();
      for (const rule of ['xmin-horizon-held', 'replica-lag-over-lb-limit', 'drop-blocks-lock-queue']) expect(listed.join('\n')).toContain(rule);
      const pageShot = await screenshot(timeline.page, 'demo-timeline-page', { fullPage: false });
      expect(timeline.problems).toEqual([]);
      if (process.env.UPDATE_SCREENSHOTS === '1') {
        fs.mkdirSync(README_IMAGES, { recursive: true });
        fs.copyFileSync(reportShot, path.join(README_IMAGES, 'demo-report.png'));
        fs.copyFileSync(pageShot, path.join(README_IMAGES, 'demo-timeline-page.png'));
      }
    } finally {
      await browser.close();
      await app.close();
    }
  }, 60_000);

  it.each(dashboardFiles())('every metric %s queries is in the exposition of the run', (file) => {
    expect(exposed.size).toBeGreaterThan(100);
    const missing = panelQueries(file).flatMap(({ title, expr }) => metricNamesIn(expr).filter((name) => !exposed.has(name) && !(name in NOT_IN_THIS_SCENARIO)).map((name) => `${title}: ${name}`));
    expect(missing).toEqual([]);
  });

  it('leaves no process and no temporary directory behind', () => {
    const leftDirs = fs.readdirSync(os.tmpdir()).filter((name) => DEMO_TEMP_DIR.test(name) && !tempBefore.has(name));
    expect(leftDirs).toEqual([]);
    const serverDirs = [...stdout.matchAll(/\(log (\S+)\/log\)/g)].map((m) => m[1]!);
    expect(serverDirs).toHaveLength(2);
    // The daemon's command line names the store; the servers' name their data directories.
    const running = processCommandLines().filter((line) => [store, ...serverDirs].some((needle) => line.includes(needle)));
    expect(running).toEqual([]);
  });
});

function processCommandLines(): string[] {
  return fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      return [fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')];
    } catch {
      return []; // exited while we looked
    }
  });
}
