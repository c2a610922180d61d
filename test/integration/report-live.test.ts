/**
 * Historical review of an incident on a live PostgreSQL 18, stored by the daemon's own machinery
 * (log tailer, poller, rules) in a store file: a REPEATABLE READ session holds the xmin horizon
 * while rows are deleted, so autovacuum reports dead rows it cannot remove, and a DDL gives up on
 * the lock that session holds (lock_timeout). Afterwards the built `pgvigil report --format html`
 * (the demo's exact call) must name the holder, the database, the lock timeout, and chart both
 * the log (autovacuum) and the samples (the holder's age); the page at / shows the same alert
 * and draws the sampled series.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DateTime } from 'luxon';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { serveStore } from '../helpers/review-store.js';
import { launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { itWithTool } from '../helpers/tools.js';
import { consumeXids, createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules } from './live-rules-rig.js';

const TARGET = 'primary';
const WARN_AGE_XIDS = 1_000;
const WAIT_MS = 30_000;

describe('historical review of a held xmin horizon on a live PostgreSQL 18', () => {
  const dir = suiteTempDir('report-live');
  let server: PgServer;
  let storeFile: string;
  let holderPid = 0;
  let window: { fromMs: number; toMs: number };

  beforeAll(async () => {
    server = await startPrimary({
      version: 18, name: 'report-live',
      settings: { log_lock_waits: true, deadlock_timeout: '100ms', log_autovacuum_min_duration: 0, autovacuum_naptime: '1s' },
    });
    await createMonitorRole(server);
    await server.query('CREATE TABLE orders (id int PRIMARY KEY, note text) WITH (autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0)');
    await server.query('INSERT INTO orders SELECT g, md5(g::text) FROM generate_series(1, 5000) g');

    storeFile = path.join(dir, 'store.db');
    const live = await startLiveRules(server, { 'xmin-horizon-held': { warnAgeXids: WARN_AGE_XIDS, minHeldMs: 0 } }, TARGET, { store: storeFile });
    const db = live.db;
    const startMs = Date.now();
    const holder = await openSession(server);
    const ddl = await openSession(server);
    holderPid = holder.pid;
    try {
      await holder.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.client.query('SELECT count(*) FROM orders');
      await consumeXids(server, WARN_AGE_XIDS + 500);
      await server.query('DELETE FROM orders WHERE id % 2 = 0');
      const count = (sql: string) => (db.prepare(sql).pluck().get() as number);
      await waitUntil(() => count("SELECT count(*) FROM alerts WHERE rule_id = 'xmin-horizon-held'") > 0, WAIT_MS, 'the xmin-horizon-held alert');
      await waitUntil(() => count("SELECT count(*) FROM events WHERE kind = 'autovacuum' AND json_extract(details, '$.tuples_dead_not_removable') > 0") > 0,
        WAIT_MS, 'an autovacuum report with dead rows it could not remove');
      await ddl.client.query("SET lock_timeout = '500ms'");
      await expect(ddl.client.query('ALTER TABLE orders ADD COLUMN shipped boolean')).rejects.toThrow(/lock timeout/);
      await waitUntil(() => count("SELECT count(*) FROM events WHERE kind = 'lock_timeout'") > 0, WAIT_MS, 'the lock timeout in the store');
      await holder.client.query('COMMIT');
      await waitUntil(() => count("SELECT count(*) FROM alerts WHERE rule_id = 'xmin-horizon-held' AND state = 'resolved'") > 0, WAIT_MS, 'the alert to resolve');
    } finally {
      await Promise.all([holder, ddl].map((s) => s.client.end().catch(() => undefined)));
      await live.stop();
    }
    window = { fromMs: startMs - 60_000, toMs: Date.now() + 60_000 };
  }, 180_000);

  afterAll(async () => {
    await destroyAllServers();
  });

  const reportFile = () => path.join(path.dirname(storeFile), 'report.html');

  it('pgvigil report --format html names the holder, the database and the lock timeout, and charts log and samples', () => {
    const iso = (ms: number) => DateTime.fromMillis(ms).toUTC().toISO()!;
    const run = spawnSync(process.execPath, ['bin/pgvigil.js', 'report', '--db', storeFile, '--from', iso(window.fromMs), '--to', iso(window.toMs), '--format', 'html', '-o', reportFile()],
      { encoding: 'utf8', timeout: 30_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const html = readFileSync(reportFile(), 'utf8');
    expect(html).toMatch(new RegExp(`xmin-horizon-held on ${TARGET} <span class="badge">basis: log\\+samples</span></div>\\s*<div>xmin horizon is [\\d,]+ XIDs old, held by session pid ${holderPid} \\(postgres@postgres`));
    // Its own ERROR line names no lock; the wait logged before it does.
    expect(html).toMatch(/lock timeout in ALTER TABLE orders ADD COLUMN shipped boolean \| ERROR: canceling statement due to lock timeout/);
    expect(html).toMatch(new RegExp(`lock wait waiting: pid \\d+ AccessExclusiveLock on relation \\d+ of database \\d+ after [\\d.]+ s, held by ${holderPid}`));
    expect(html).toMatch(/autovacuum postgres\.public\.orders, elapsed [\d.]+ s, [1-9]\d* dead not removable, removable cutoff \d+/);
    for (const chart of ['dead_not_removable', 'removable_cutoff_age', 'xmin_horizon', 'autovacuum_elapsed']) {
      expect(html).toMatch(new RegExp(`id="chart-${chart}"><h3>[^<]*</h3><svg `));
    }
    // The holder is named in the xmin chart's legend, as pg_stat_activity describes it.
    const xminChart = html.slice(html.indexOf('id="chart-xmin_horizon"'), html.indexOf('id="chart-replica_lag"'));
    expect(xminChart).toMatch(new RegExp(`pid ${holderPid} on postgres \\(idle in transaction\\): SELECT count\\(\\*\\) FROM orders`));
    expect(html).toMatch(/id="chart-replica_lag"><h3>[^<]*<\/h3><p class="empty">not sampled<\/p>/);
  });

  itWithTool('chromium', 'the HTML report and the page over the same store render in Chromium', async () => {
    const db = openStore(storeFile, { readonly: true });
    const app = await serveStore(db);
    const url = app.url;
    const browser = await launchChromium();
    try {
      const report = await watchedPage(browser);
      await report.page.goto(pathToFileURL(reportFile()).href);
      expect(await report.page.locator('#chart-xmin_horizon svg.chart path[stroke]').count()).toBeGreaterThan(0);
      await screenshot(report.page, 'report-html-live-xmin-horizon');
      expect(report.problems).toEqual([]);

      const timeline = await watchedPage(browser);
      await timeline.page.goto(`${url}/?from=${window.fromMs}&to=${window.toMs}`);
      await timeline.page.waitForSelector('body[data-ready=true]');
      // The lock timeout's info alert is listed too: the horizon's alert names its holder.
      expect(await timeline.page.locator('#alerts li[data-alert-id]', { hasText: 'xmin-horizon-held' }).first().textContent()).toContain(`held by session pid ${holderPid}`);
      expect(await timeline.page.locator('#series-chart canvas').count()).toBeGreaterThan(0);
      expect(await timeline.page.locator('#series-note').textContent()).not.toContain('not sampled');
      await screenshot(timeline.page, 'timeline-page-live-xmin-horizon');
      expect(timeline.problems).toEqual([]);
    } finally {
      await browser.close();
      await app.close();
      db.close();
    }
  }, 60_000);
});
