/**
 * `pgvigil serve --store postgres://...`: the API and the timeline page of a fleet from the
 * central PostgreSQL 18 store, read as the read-only role of docs/fleet.md with exactly its
 * GRANTs. Two sidecar stores, filled by the real pipeline (`pgvigil analyze --rules --db` over
 * logs recorded from real servers) plus sampled series, are forwarded by the built CLI
 * (`pgvigil central forward`); then the built `pgvigil serve` over the central store answers each
 * endpoint for each target with the same JSON as `pgvigil serve --store <that store>.db` (ids
 * aside: central ids are the local id and the store's number), narrows by --target and
 * --cluster, keeps the daemon's auth rules, and the timeline page shows both targets' alerts.
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORE_SLOTS } from '../../src/central/central-reads.js';
import { migrateCentral } from '../../src/central/migrate-central.js';
import type { Sample } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { openStore } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { followFirstEvidence, launchChromium, screenshot, watchedPage } from '../helpers/browser.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { documentedGrants } from '../helpers/fleet-grants.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-processes.js';
import { freePort } from '../helpers/pg-server.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { itWithTool } from '../helpers/tools.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PGVIGIL = path.join(ROOT, 'bin/pgvigil.js');
const log = (scenario: string) => path.join(ROOT, 'test/fixtures/logs', `pg18-stderr-${scenario}`, `${scenario}.log`);

const STORES = {
  east: { logs: [log('backend-killed-crash-restart'), log('standby-feedback-holds-vacuum')], cluster: 'eu' },
  west: { logs: [log('logical-slot-holds-catalogs'), log('server-killed-crash-recovery')], cluster: 'us' },
} as const;
type TargetName = keyof typeof STORES;
const TARGETS = Object.keys(STORES) as TargetName[];
const SERIES = 'pg_stat_user_tables_n_dead_tup';
const STEP_MS = 60_000;
const TOKEN = 'serve-central-test-token-0123456789';

type Json = Record<string, unknown>;
interface LogReport {
  minute_rows: number;
  unreadable_rows: number;
  sections: Json;
}

describe('pgvigil serve over the central store of two targets', () => {
  const dir = suiteTempDir('serve-central');
  const storeFile = (name: TargetName) => path.join(dir, `${name}.db`);
  /** Per target, a window holding all its events, alerts and samples. */
  const windows = {} as Record<TargetName, { fromMs: number; toMs: number }>;
  let central: PgServer;
  let fleet: DaemonProcess;
  const local = {} as Record<TargetName, DaemonProcess>;
  const started: DaemonProcess[] = [];
  const as = (role: 'pgvigil_forward' | 'pgvigil_reader') => central.dsn().replace('//postgres@', `//${role}@`);

  async function serve(args: string[]): Promise<DaemonProcess> {
    const daemon = await spawnDaemon(args, { command: 'serve' });
    started.push(daemon);
    await daemon.waitForLog(/^serving \/api and the timeline page read-only/, 30_000);
    return daemon;
  }

  beforeAll(async () => {
    for (const name of TARGETS) {
      const { code, stderr } = await analyzeCaptured([...STORES[name].logs], { rules: true, db: storeFile(name), target: name, json: true });
      expect(stderr).toBe('');
      expect(code).toBe(0);
      windows[name] = addSamples(storeFile(name), name);
    }
    central = await startPrimary({ version: 18, name: 'central' });
    const admin = new pg.Client({ connectionString: central.dsn() });
    await admin.connect();
    await migrateCentral(admin, Date.now());
    await admin.query(documentedGrants());
    for (const name of TARGETS) {
      const forward = spawnSync(process.execPath, [PGVIGIL, 'central', 'forward', '--db', storeFile(name), '--dsn', as('pgvigil_forward')], { encoding: 'utf8' });
      expect(forward.stderr).toBe('');
      expect(forward.status).toBe(0);
      // As a sidecar with `cluster` in its config records it.
      await admin.query('UPDATE pgvigil.targets SET cluster = $1 WHERE target = $2', [STORES[name].cluster, name]);
    }
    await admin.end();
    fleet = await serve(['--store', as('pgvigil_reader')]);
    for (const name of TARGETS) local[name] = await serve(['--store', storeFile(name)]);
  }, 180_000);

  afterAll(async () => {
    for (const daemon of started) {
      daemon.child.kill('SIGTERM');
      await daemon.exit;
    }
    await destroyAllServers();
  });

  const get = async (daemon: DaemonProcess, pathAndQuery: string, headers: Record<string, string> = {}): Promise<Json> => {
    const response = await fetch(`${daemon.url}${pathAndQuery}`, { headers });
    const body = await response.json() as Json;
    expect(response.status, `${pathAndQuery}: ${JSON.stringify(body)}`).toBe(200);
    return body;
  };
  const range = (name: TargetName) => `from=${windows[name].fromMs}&to=${windows[name].toMs}`;
  const events = (body: Json) => body.events as Json[];
  const alerts = (body: Json) => body.alerts as Json[];

  it('serves each target\'s events, by kind and database too, as its own store does', async () => {
    for (const name of TARGETS) {
      const counts: number[] = [];
      for (const filter of ['', '&kind=autovacuum', '&kind=server_crash', '&database=postgres']) {
        const query = `/api/events?${range(name)}&limit=10000${filter}`;
        const fromStore = await get(local[name], query);
        const fromCentral = await get(fleet, `${query}&target=${name}`);
        expect(events(fromCentral).length, query).toBe(events(fromStore).length);
        expect(localIds(fromCentral)).toEqual(fromStore);
        counts.push(events(fromStore).length);
      }
      expect(counts[0]).toBeGreaterThan(20);
      expect(counts[1]).toBeGreaterThan(0);
    }
  });

  it('serves each target\'s alerts, and each alert with its transitions, incident and evidence, as its own store does', async () => {
    const all = alerts(await get(fleet, '/api/alerts?limit=1000'));
    expect(all.map((a) => `${a.target} ${a.rule_id}`).sort()).toEqual(['east server-crashed', 'west server-crashed']);
    for (const name of TARGETS) {
      for (const query of [`/api/alerts?${range(name)}`, '/api/alerts?state=firing', '/api/alerts?state=resolved']) {
        const fromStore = await get(local[name], query);
        const fromCentral = alerts(await get(fleet, query)).filter((a) => a.target === name);
        expect(localIds({ alerts: fromCentral }), query).toEqual(fromStore);
      }
      for (const alert of all.filter((a) => a.target === name)) {
        const detail = await get(fleet, `/api/alerts/${alert.id}`);
        expect((detail.evidence as { events: Json[] }).events.length).toBeGreaterThan(0);
        expect(localIds(detail)).toEqual(await get(local[name], `/api/alerts/${localId(alert.id)}`));
      }
    }
    expect((await fetch(`${fleet.url}/api/alerts/${99 * STORE_SLOTS + 1}`)).status).toBe(404);
  });

  it('serves each target\'s downsampled series for a window as its own store does', async () => {
    for (const name of TARGETS) {
      for (const step of ['60s', '5m']) {
        const query = `/api/series?name=${SERIES}&${range(name)}&step=${step}`;
        const fromStore = await get(local[name], query);
        const fromCentral = await get(fleet, `${query}&target=${name}`);
        expect((fromStore.series as Array<{ points: unknown[] }>)[0]!.points.length).toBeGreaterThan(1);
        expect(fromCentral).toEqual(fromStore);
      }
    }
  });

  it('serves each target\'s incident report with the same alerts, timeline, summary, charts and log report', async () => {
    for (const name of TARGETS) {
      const query = `/api/report?${range(name)}&target=${name}`;
      const fromStore = await get(local[name], query);
      const fromCentral = await get(fleet, query);
      expect((fromCentral.alerts as unknown[]).length).toBeGreaterThan(0);
      // Report ids are positions in a fleet report (docs/fleet.md), store ids in a store's. The log
      // report is the store's, merged from the same minutes: the store reads an hour inside the
      // window from the row that merges its minutes, the central store from the minutes, so only
      // the count of rows merged differs.
      const { log_report: centralLog, ...central } = fromCentral as Json & { log_report: LogReport };
      const { log_report: storeLog, ...store } = fromStore as Json & { log_report: LogReport };
      expect(withoutRefs(central)).toEqual(withoutRefs(store));
      expect(storeLog.minute_rows).toBeGreaterThan(0);
      expect(centralLog.minute_rows).toBeGreaterThanOrEqual(storeLog.minute_rows);
      expect(centralLog.sections).toEqual(storeLog.sections);
      expect(centralLog.unreadable_rows).toBe(0);
      // Not an empty report: some section counted something.
      expect(JSON.stringify(storeLog.sections)).toMatch(/":[1-9]/);
      const html = await fetch(`${fleet.url}${query}&format=html`);
      expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });

  it('narrows what it serves with --target and --cluster', async () => {
    const westOnly = await serve(['--store', as('pgvigil_reader'), '--target', 'west']);
    const euOnly = await serve(['--store', as('pgvigil_reader'), '--cluster', 'eu']);
    expect(alerts(await get(westOnly, '/api/alerts')).map((a) => a.target)).toEqual(['west']);
    expect(new Set(alerts(await get(euOnly, '/api/alerts')).map((a) => a.target))).toEqual(new Set(['east']));
    expect(events(await get(westOnly, `/api/events?${range('east')}&target=east`))).toEqual([]);
    expect(events(await get(euOnly, `/api/events?${range('east')}`)).every((e) => e.target === 'east')).toBe(true);
    expect((await get(westOnly, `/api/series?name=${SERIES}&${range('east')}&target=east`)).series).toEqual([]);
    const both = `from=${Math.min(windows.east.fromMs, windows.west.fromMs)}&to=${Math.max(windows.east.toMs, windows.west.toMs)}`;
    expect(((await get(westOnly, `/api/series?name=${SERIES}&${both}`)).series as Json[]).map((s) => s.target)).toEqual(['west']);
    expect((await get(euOnly, `/api/report?${range('west')}&target=west`)).alerts).toEqual([]);
  }, 120_000);

  it('refuses to start on a database without the pgvigil schema, and a file store with central filters', async () => {
    await central.query('CREATE DATABASE not_central');
    const missing = spawnSync(process.execPath, [PGVIGIL, 'serve', '--store', central.dsn('not_central'), '--listen', `127.0.0.1:${await freePort()}`], { encoding: 'utf8', timeout: 30_000 });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('run `pgvigil central migrate --dsn ...` as its owner first');
    const filtered = spawnSync(process.execPath, [PGVIGIL, 'serve', '--store', storeFile('east'), '--target', 'east'], { encoding: 'utf8', timeout: 30_000 });
    expect(filtered.status).toBe(2);
    expect(filtered.stderr).toContain('--cluster and --target narrow the central store');
  }, 120_000);

  it('keeps the daemon\'s auth rules: on a network address without a token the API is this host\'s alone, the token guards it', async () => {
    const port = await freePort();
    const open = spawn(process.execPath, [PGVIGIL, 'serve', '--store', as('pgvigil_reader'), '--listen', `0.0.0.0:${port}`]);
    try {
      // From this host, naming it: served (kubectl port-forward); another host is refused (src/http/this-host-only.test.ts).
      await waitUntil(async () => (await fetch(`http://127.0.0.1:${port}/api/alerts`).catch(() => null))?.status === 200, 30_000, 'the API served to this host');
    } finally {
      open.kill('SIGTERM');
    }
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const configFile = path.join(dir, 'serve.yaml');
    writeFileSync(configFile, `http_token_file: ${tokenFile}\n`);
    const guarded = await serve(['--store', as('pgvigil_reader'), '--config', configFile]);
    expect((await fetch(`${guarded.url}/api/alerts`)).status).toBe(401);
    expect(alerts(await get(guarded, '/api/alerts', { authorization: `Bearer ${TOKEN}` }))).toHaveLength(2);
    // Read-only: nothing to scrape, nothing to report readiness of.
    expect((await fetch(`${guarded.url}/metrics`)).status).toBe(404);
  }, 120_000);

  itWithTool('chromium', 'opens the timeline page over both targets, with both targets\' alerts and no console error', async () => {
    const fromMs = Math.min(...TARGETS.map((t) => windows[t].fromMs));
    const toMs = Math.max(...TARGETS.map((t) => windows[t].toMs));
    const browser = await launchChromium();
    try {
      const { page, problems } = await watchedPage(browser);
      await page.goto(`${fleet.url}/?from=${fromMs}&to=${toMs}`);
      await page.waitForSelector('body[data-ready=true]');
      const items = page.locator('#alerts li[data-alert-id]');
      await expect.poll(() => items.count()).toBe(2);
      const texts = (await items.allTextContents()).join('\n');
      expect(texts).toMatch(/server-crashed on east/);
      expect(texts).toMatch(/server-crashed on west/);
      await page.selectOption('#series-name', SERIES);
      await expect.poll(() => page.locator('#series-chart canvas').count()).toBeGreaterThan(0);
      await screenshot(page, 'serve-central-timeline');

      // From a west alert to its evidence on the timeline: the ids of /api/alerts/:id and /api/events agree.
      await page.locator('#alerts li', { hasText: 'on west' }).click();
      const row = await followFirstEvidence(page);
      expect(await row.locator('td').nth(1).textContent()).toBe('west');
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);

  // Last: it stops the central server.
  it('answers 503 naming the store while the central database is down, and serves again once it is back', async () => {
    await central.stop('fast');
    try {
      const response = await fetch(`${fleet.url}/api/alerts`);
      const body = await response.json() as Json;
      expect({ status: response.status, error: body.error }).toEqual({ status: 503, error: 'store_unavailable' });
      expect(body.message).toMatch(/^central store 127\.0\.0\.1:\d+\/postgres is unreachable \(.+\); each request tries again$/);
    } finally {
      await central.start();
    }
    await expect.poll(async () => (await fetch(`${fleet.url}/api/alerts`)).status, { timeout: 20_000 }).toBe(200);
    expect(alerts(await get(fleet, '/api/alerts'))).toHaveLength(2);
    expect(fleet.output()).toContain('API request found the store unavailable');
  }, 120_000);
});

/** Ten minutes of one table's dead tuples (one NULL), a sample at each step's start: what forwarding keeps of them is all of them. */
function addSamples(file: string, target: TargetName): { fromMs: number; toMs: number } {
  const db = openStore(file);
  try {
    const first = db.prepare('SELECT min(ts_ms) FROM events').pluck().get() as number;
    const last = db.prepare('SELECT max(max(ts_ms), (SELECT max(updated_ms) FROM alerts)) FROM events').pluck().get() as number;
    const base = Math.ceil(first / STEP_MS) * STEP_MS;
    const clock = new ManualClock(base);
    const writer = new StoreWriter(db, clock, silentLogger());
    const samples: Sample[] = Array.from({ length: 10 }, (_, i) => ({
      target, name: SERIES, labels: { datname: 'shop', schemaname: 'public', relname: 'orders' }, tsMs: base + i * STEP_MS, value: i === 4 ? null : i * 100 + (target === 'east' ? 1 : 2),
    }));
    writer.enqueue({ samples });
    expect(writer.flush()).toBe(true);
    return { fromMs: first - 3_600_000, toMs: Math.max(last, base + 10 * STEP_MS) + 3_600_000 };
  } finally {
    db.close();
  }
}

/** A central id as the local id it was forwarded from (its store's number is the remainder). */
function localId(id: unknown): number {
  return Math.floor((id as number) / STORE_SLOTS);
}

/** A central answer with every alert and event id turned back into the store's own. */
function localIds(body: Json): Json {
  const event = (e: Json) => ({ ...e, id: localId(e.id) });
  const alert = (a: Json) => ({ ...a, id: localId(a.id) });
  const out: Json = { ...body };
  if (Array.isArray(body.events)) out.events = (body.events as Json[]).map(event);
  if (Array.isArray(body.alerts)) out.alerts = (body.alerts as Json[]).map(alert);
  if (typeof body.evidence === 'object' && body.evidence !== null) {
    const evidence = body.evidence as { event_ids: number[]; events: Json[] };
    Object.assign(out, alert(body), { evidence: { ...evidence, event_ids: evidence.event_ids.map(localId), events: evidence.events.map(event) } });
  }
  return out;
}

/** A report without the ids that name its alerts and events. */
function withoutRefs(report: Json): Json {
  return {
    ...report,
    alerts: (report.alerts as Json[]).map(({ id: _id, evidence, ...rest }) => ({ ...rest, evidence: { ...(evidence as Json), event_ids: (evidence as { event_ids: unknown[] }).event_ids.length } })),
    timeline: (report.timeline as Json[]).map(({ ref: _ref, evidence_of: evidenceOf, ...rest }) => ({ ...rest, evidence_of: (evidenceOf as unknown[]).length })),
  };
}
