/**
 * The timeline page in real headless Chromium, over a store holding a real crash: a backend of
 * PostgreSQL 18 killed with SIGKILL (the recorded log), stored and judged the way the daemon does
 * it, served by pgvigil's HTTP app behind a bearer token like /api.
 */
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildHttpApp } from '../../src/http/build-http-app.js';
import { Metrics } from '../../src/http/metrics.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreQueries } from '../../src/store/queries.js';
import { followFirstEvidence, launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { storeFromRecordedLog } from '../helpers/review-store.js';
import { describeWithTool } from '../helpers/tools.js';

const TOKEN = 'timeline-page-test-token-0123456789';

/** An info alert a second after the crash's, in the same state: newer, less severe. */
function addLaterInfoAlert(file: string): void {
  const writable = openStore(file);
  try {
    writable.prepare(`INSERT INTO alerts (rule_id, dedup_key, severity, state, target, labels, summary, evidence, started_ms, updated_ms, resolved_ms)
      SELECT 'statement-timeouts', 'statement-timeouts/pg18/x', 'info', state, target, '{}', '2 statements cancelled by statement_timeout',
             '{"eventIds":[],"series":[],"facts":{}}', started_ms + 1000, updated_ms + 1000, resolved_ms
      FROM alerts WHERE rule_id = 'server-crashed'`).run();
  } finally {
    writable.close();
  }
}

describeWithTool('chromium', 'timeline page', () => {
  let db: Db;
  let app: FastifyInstance;
  let url: string;
  let startMs: number;
  let endMs: number;
  const dir = suiteTempDir('page');

  beforeAll(async () => {
    const file = path.join(dir, 'store.db');
    ({ startMs, endMs } = await storeFromRecordedLog(file, { major: 18, format: 'stderr', scenario: 'backend-killed-crash-restart', target: 'pg18' }));
    addLaterInfoAlert(file);
    db = openStore(file, { readonly: true });
    // Days after the crash, as when someone reviews it: the page has to find it.
    const clock = new ManualClock(endMs + 3 * 86_400_000);
    app = await buildHttpApp({
      metrics: new Metrics({ clock }), queries: new StoreQueries(db), clock, listenHost: '127.0.0.1', token: TOKEN,
      readiness: { store: () => ({ writable: true, detail: null }), postgres: () => [], logs: () => [] },
    });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    db?.close();
  });

  it('is guarded by the API token like /api', async () => {
    expect((await fetch(`${url}/`)).status).toBe(401);
    const page = await fetch(`${url}/`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="/ui/uPlot.iife.min.js">');
  });

  it('shows the crash alert, narrows the timeline by a filter and goes from the alert to its evidence and back', async () => {
    const browser = await launchChromium();
    try {
      const { page, problems } = await watchedPage(browser, { extraHTTPHeaders: { authorization: `Bearer ${TOKEN}` } });
      await page.goto(`${url}/`);
      await page.waitForSelector('body[data-ready=true]');

      const alerts = page.locator('#alerts li[data-alert-id]');
      await expect.poll(() => alerts.count()).toBe(2);
      // The crash (critical) above the info alert that came after it.
      expect(await alerts.allTextContents()).toEqual([
        expect.stringMatching(/#1 server-crashed on pg18.*client backend pid 25928 was killed by signal 9/),
        expect.stringMatching(/#2 statement-timeouts on pg18/),
      ]);
      const alert = alerts.first();
      // Days later, the page opens on the crash: its log and its alert (judged 1 s after the last
      // line) span about a second, shown with 5 s around it, not the 10 minutes of a sampled alert.
      const shown = new URL(page.url()).searchParams;
      expect(Number(shown.get('to')) - Number(shown.get('from'))).toBeLessThan(15_000);
      expect(Number(shown.get('from'))).toBeGreaterThan(startMs - 6_000);
      expect(await page.locator('#events-chart canvas').count()).toBeGreaterThan(0);
      expect(await page.locator('#series-note').textContent()).toContain('not sampled');
      await screenshot(page, 'timeline-page-crash');

      const rows = page.locator('#events tbody tr');
      const all = await rows.count();
      expect(all).toBeGreaterThan(5);
      await page.selectOption('#filters [name=kind]', 'checkpoint');
      await expect.poll(() => rows.count()).toBe(2);
      expect(await page.locator('#events tbody td.kind').allTextContents()).toEqual(['checkpoint', 'checkpoint']);
      await page.selectOption('#filters [name=kind]', '');
      await expect.poll(() => rows.count()).toBe(all);

      await alert.click();
      const row = await followFirstEvidence(page);
      expect(await row.locator('td.kind').textContent()).toBe('server_crash');
      await screenshot(page, 'timeline-page-crash-evidence', { fullPage: false });

      // And back: the evidence row names its alert and opens it.
      await page.locator('#alert-detail').evaluate((panel) => { panel.hidden = true; });
      await row.locator('a.evidence-of').click();
      expect(await page.locator('#alert-detail').isVisible()).toBe(true);
      expect(await page.locator('#alert-detail h2').first().textContent()).toContain('#1 server-crashed');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);

  it('works with a token set: the token typed once in the login form, then an HttpOnly, SameSite=Strict cookie', async () => {
    const browser = await launchChromium();
    try {
      const { page, problems } = await watchedPage(browser);
      await page.goto(`${url}/`);
      await page.fill('#token', `${TOKEN}x`);
      await page.click('button[type=submit]');
      expect(await page.locator('p.error').textContent()).toContain('not the token');
      await page.fill('#token', TOKEN);
      await page.click('button[type=submit]');
      await page.waitForSelector('body[data-ready=true]');
      await expect.poll(() => page.locator('#alerts li[data-alert-id]').count()).toBe(2);
      const [cookie, ...more] = await page.context().cookies();
      expect(more).toEqual([]);
      expect(cookie).toMatchObject({ name: 'pgvigil_session', httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(cookie!.value).not.toContain(TOKEN);
      // No script on the page reads it.
      expect(await page.evaluate('document.cookie')).toBe('');
      // Reloaded, the page needs no login again.
      await page.reload();
      await page.waitForSelector('body[data-ready=true]');
      // The two 401s of the login form's round trips are the only failed loads.
      expect(problems.filter((p) => !/401/.test(p))).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
