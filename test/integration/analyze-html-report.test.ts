/**
 * `pgvigil analyze --rules --format html -o report.html` of a real PostgreSQL 18 log, opened in
 * Chromium as a pgBadger user would: a couple of minutes of pgbench plus the bench's incident loop
 * (lock waits, timeouts, deadlocks, errors, temp files, checkpoints, autovacuum churn), with every
 * statement, connection, checkpoint, temp file and lock wait logged, and a statement whose text
 * is an HTML injection. The page loads with no console error, every section a pgBadger user looks
 * for has its heading, every chart has drawn, and the injected markup is text, not elements.
 * UPDATE_SCREENSHOTS=1 writes README's screenshot.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { driveLoad } from '../../bench/lib/load.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { destroyAllServers, startPrimary } from '../helpers/pg-harness.js';
import { itWithTool } from '../helpers/tools.js';

/** Three minutes of per-minute buckets at least: the charts have lines, not single dots. */
const LOAD_SECONDS = 130;
/** No single quote: the log shows the statement as it was written, with no doubled quote to undo. */
const HOSTILE = '</script><img src=x onerror="document.title=this.tagName">';
const README_IMAGES = path.resolve('docs/images');

/** The headings a pgBadger user looks for, in the page's order. */
const SECTION_HEADINGS = [/^Overview$/, /^Alerts \(causes\): \d+$/, /^Queries: [\d,]+$/, /^Errors: [\d,]+$/, /^Sessions and connections: [\d,]+$/, /^Checkpoints: [\d,]+/, /^Temporary files: [\d,]+$/, /^Autovacuum and autoanalyze$/, /^Locks, deadlocks and cancellations$/];

describe('analyze --format html of a real PostgreSQL 18 log', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-analyze-html-'));
  const reportFile = path.join(dir, 'report.html');
  let code: number | null = null;
  let stderr = '';

  beforeAll(async () => {
    const server = await startPrimary({
      version: 18,
      name: 'analyze-html',
      settings: {
        log_min_duration_statement: 0, log_connections: true, log_disconnections: true, log_checkpoints: true, log_temp_files: 0,
        log_lock_waits: true, log_autovacuum_min_duration: 0, deadlock_timeout: '100ms', autovacuum_naptime: '1s', checkpoint_timeout: '30s',
      },
    });
    try {
      // Statement text is user data: a literal and an error message that carry markup.
      await server.query(`SELECT '${HOSTILE}' AS hostile`);
      await server.query(`SELECT '${HOSTILE}'::int`).catch(() => undefined);
      await driveLoad({ host: server.host, port: server.port, user: 'postgres', database: 'postgres' }, LOAD_SECONDS, () => undefined, { tps: 50 });
      await server.stop('fast');
      const logs = server.logFiles().filter((f) => f.endsWith('.log'));
      ({ code, stderr } = await analyzeCaptured(logs, { rules: true, outputFormat: 'html', outputFile: reportFile }));
    } finally {
      await destroyAllServers();
    }
  }, LOAD_SECONDS * 1000 + 120_000);

  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  itWithTool('chromium', 'opens with no console error, every section and chart drawn, the injected markup shown as text', async () => {
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const browser = await launchChromium();
    try {
      const { page, problems } = await watchedPage(browser);
      await page.goto(pathToFileURL(reportFile).href);
      expect(problems).toEqual([]);

      const headings = await page.locator('section.log-section > h2').allTextContents();
      expect(headings).toHaveLength(SECTION_HEADINGS.length);
      SECTION_HEADINGS.forEach((heading, i) => expect(headings[i]).toMatch(heading));

      const charts = page.locator('.chart-box');
      expect(await charts.count()).toBeGreaterThan(0);
      for (const chart of await charts.all()) {
        const title = await chart.locator('h3').textContent();
        expect(await chart.locator('p.empty').count(), `${title} says it is empty`).toBe(0);
        const drawn = await chart.locator('svg.chart g.line path').evaluateAll((paths) => paths.filter((p) => (p.getAttribute('d') ?? '').length > 1).length);
        expect(drawn, `${title} has a drawn line`).toBeGreaterThan(0);
      }
      expect(await page.locator('#chart-query_duration_percentiles g.line > title').allTextContents()).toEqual(['p50', 'p95', 'max']);

      expect(await page.locator('img').count()).toBe(0);
      expect(await page.title()).not.toBe('IMG');
      expect(await page.locator('body').textContent()).toContain(HOSTILE);

      // README's picture: what a pgBadger user looks for first, the queries with their charts.
      await page.setViewportSize({ width: 1280, height: 1100 });
      await page.locator('#queries').evaluate((section) => section.scrollIntoView());
      const shot = await screenshot(page, 'analyze-report', { fullPage: false });
      if (process.env.UPDATE_SCREENSHOTS === '1') {
        fs.mkdirSync(README_IMAGES, { recursive: true });
        fs.copyFileSync(shot, path.join(README_IMAGES, 'analyze-report.png'));
      }
    } finally {
      await browser.close();
    }
  }, 60_000);
});
