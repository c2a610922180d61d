/**
 * Real headless Chromium for page tests: Debian's /usr/bin/chromium driven by playwright-core
 * (never a downloaded browser). Gate tests on the `chromium` tool (tools.ts). Collects console
 * errors and failed requests, which a page test asserts are none.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { toolPath } from './tools.js';

/** Screenshots land here (gitignored) for a person to look at. */
export const TEST_OUTPUT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test-output');

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: toolPath('chromium'),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface WatchedPage {
  page: Page;
  /** Console errors, uncaught exceptions and failed requests, in the order they happened. */
  problems: string[];
}

export async function watchedPage(browser: Browser, options: { extraHTTPHeaders?: Record<string, string> } = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()} (${message.location().url})`); });
  page.on('pageerror', (err) => problems.push(`exception: ${err.message}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText ?? ''}`));
  return { page, problems };
}

/** The whole page by default; `fullPage: false` for what the reader sees where the page scrolled to. */
export async function screenshot(page: Page, name: string, { fullPage = true } = {}): Promise<string> {
  fs.mkdirSync(TEST_OUTPUT_DIR, { recursive: true });
  const file = path.join(TEST_OUTPUT_DIR, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}

/** From the open alert's first evidence link to its event on the timeline: the row, once highlighted. */
export async function followFirstEvidence(page: Page): Promise<Locator> {
  const evidence = page.locator('#evidence a[data-event-id]');
  await expect.poll(() => evidence.count()).toBeGreaterThan(0);
  const eventId = await evidence.first().getAttribute('data-event-id');
  await evidence.first().click();
  const row = page.locator(`#ev-${eventId}`);
  await expect.poll(() => row.getAttribute('class')).toContain('highlight');
  return row;
}
