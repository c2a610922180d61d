import { gunzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withoutLiveValues } from '../../test/helpers/exposition.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { AlertStore } from '../store/alert-store.js';
import { openStore } from '../store/open-store.js';
import { StoreQueries } from '../store/queries.js';
import { StoreWriter } from '../store/store-writer.js';
import { MAX_WINDOW_MS } from './api-routes.js';
import { buildHttpApp, type HttpAppOptions } from './build-http-app.js';
import { Metrics } from './metrics.js';
import type { ReadinessSources } from './readiness.js';

// Response bodies are checked field by field with toMatchObject/toEqual.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Body = any;

/** Prometheus 2.42's scrape Accept header. */
const PROMETHEUS_ACCEPT = 'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);
const TOKEN = 'a-token-of-sufficient-length-0123';

function deadlock(tsMs: number, database: string): AnyLogEvent {
  return {
    kind: 'deadlock', target: 'db1', tsMs, pid: 7, database, user: 'app', level: 'ERROR', sqlstate: '40P01', message: 'deadlock detected',
    details: { processes: [], context: null, pid: 7, database, user: 'app', statement: 'UPDATE t SET x = 1' }, source: { file: '/log/pg.log', offset: 100, line: null },
  };
}

const okSources: ReadinessSources = {
  store: () => ({ writable: true, detail: null }),
  postgres: () => [{ target: 'db1', reachable: true, detail: null }],
  logs: () => [{ target: 'db1', source: '/var/log/postgresql', reading: true, detail: null }],
};

async function build(overrides: Partial<HttpAppOptions> = {}) {
  const clock = new ManualClock(T0 + 60_000);
  const db = openStore(':memory:');
  const writer = new StoreWriter(db, clock, silentLogger());
  const metrics = new Metrics({ clock });
  metrics.attachWriter(writer);
  writer.enqueue({
    // crm's server writes German (lc_messages = de_DE): its event was read through the catalog.
    events: [deadlock(T0, 'shop'), { ...deadlock(T0 + 1_000, 'crm'), message: 'Verklemmung entdeckt', language: 'de' }],
    samples: [0, 10_000, 20_000, 30_000].map((dt, i) => ({ target: 'db1', name: 'pg_stat_user_tables_n_dead_tup', labels: { datname: 'shop', relname: 'orders' }, tsMs: T0 + dt, value: i * 10 })),
  });
  writer.flush();
  const alerts = new AlertStore(db, []);
  alerts.fire({ ruleId: 'deadlocks', dedupKey: 'deadlocks/db1', severity: 'warning', target: 'db1', labels: { database: 'shop' }, summary: '2 deadlocks', evidence: { eventIds: [1, 2], series: [], facts: { deadlocks: 2 } } }, T0 + 2_000);
  const app = await buildHttpApp({ metrics, queries: new StoreQueries(db), readiness: okSources, clock, listenHost: '127.0.0.1', token: null, ...overrides });
  return { app, clock };
}

describe('HTTP app', () => {
  let app: FastifyInstance;
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url });
    const json = String(res.headers['content-type'] ?? '').startsWith('application/json');
    return { status: res.statusCode, body: (json ? res.json() : res.body) as Body, headers: res.headers };
  };

  beforeAll(async () => {
    ({ app } = await build());
  });
  afterAll(() => app.close());

  it('says it is alive and ready, aspect by aspect', async () => {
    expect(await get('/healthz')).toMatchObject({ status: 200, body: { status: 'alive' } });
    const ready = await get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ ready: true, aspects: [{ aspect: 'store', state: 'ok' }, { aspect: 'postgres', target: 'db1', state: 'ok' }, { aspect: 'log', target: 'db1', state: 'ok' }] });
  });

  it('serves the Prometheus exposition', async () => {
    const res = await get('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.body).toContain('pg_stat_user_tables_n_dead_tup{target="db1",datname="shop",relname="orders"} 30\n');
    expect(res.body).toContain('pg_log_deadlocks_total{target="db1",datname="shop"} 1\n');
  });

  it('serves /metrics gzip\'d to a client that takes gzip (Prometheus does), the same exposition', async () => {
    const scrape = (headers: Record<string, string>) => app.inject({ method: 'GET', url: '/metrics', headers });
    const identity = await scrape({});
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.headers.vary).toBe('accept-encoding');
    const gzipped = await scrape({ 'accept-encoding': 'gzip', accept: PROMETHEUS_ACCEPT });
    expect(gzipped.statusCode).toBe(200);
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(Number(gzipped.headers['content-length'])).toBe(gzipped.rawPayload.length);
    expect(gzipped.rawPayload.length).toBeLessThan(identity.rawPayload.length);
    const inflated = gunzipSync(gzipped.rawPayload).toString('utf8');
    expect(withoutLiveValues(inflated)).toBe(withoutLiveValues(identity.body));
    expect(inflated).toContain('pg_stat_user_tables_n_dead_tup{target="db1",datname="shop",relname="orders"} 30\n');
    // gzip refused by weight: identity.
    expect((await scrape({ 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding']).toBeUndefined();
  });

  it('lists events with filters, newest first, by default from the last hour', async () => {
    const all = await get('/api/events');
    expect(all.status).toBe(200);
    expect(all.body.events.map((e: { database: string }) => e.database)).toEqual(['crm', 'shop']);
    expect(all.body).toMatchObject({ from_ms: T0 + 60_000 - 3_600_000, to_ms: T0 + 60_000, truncated: false });
    expect(all.body.events[1]).toMatchObject({ kind: 'deadlock', ts_ms: T0, sqlstate: '40P01', source: { file: '/log/pg.log', offset: 100 } });
    const shop = await get('/api/events?kind=deadlock&database=shop&limit=1&from=now-2m&to=now');
    expect(shop.body.events).toHaveLength(1);
    expect(shop.body.truncated).toBe(true);
    expect((await get(`/api/events?from=${T0 + 500}`)).body.events).toHaveLength(1);
  });

  it("says in which language an event's message was written, only when it is not English", async () => {
    const [crm, shop] = (await get('/api/events')).body.events;
    expect(crm).toMatchObject({ database: 'crm', message: 'Verklemmung entdeckt', language: 'de' });
    expect(shop).not.toHaveProperty('language');
    const evidence = (await get('/api/alerts/1')).body.evidence.events;
    expect(evidence.map((e: { language?: string }) => e.language ?? null)).toEqual([null, 'de']);
    const timeline = (await get('/api/report')).body.timeline;
    expect(timeline.map((e: { language?: string }) => e.language ?? null)).toEqual([null, 'de', null]);
    expect(timeline[0]).not.toHaveProperty('language');
  });

  it('returns series downsampled to the step', async () => {
    const res = await get(`/api/series?name=pg_stat_user_tables_n_dead_tup&labels=relname=orders&from=${T0}&to=${T0 + 40_000}&step=20s`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      name: 'pg_stat_user_tables_n_dead_tup', from_ms: T0, to_ms: T0 + 40_000, step_ms: 20_000,
      series: [{ target: 'db1', labels: { datname: 'shop', relname: 'orders' }, points: [[T0 + 10_000, 10], [T0 + 30_000, 30]] }],
    });
    expect((await get('/api/series?name=pg_stat_user_tables_n_dead_tup&labels={"relname":"lines"}')).body.series).toEqual([]);
  });

  it('lists alerts and shows one with its evidence', async () => {
    const list = await get('/api/alerts?state=firing');
    expect(list.body.alerts).toEqual([expect.objectContaining({ rule_id: 'deadlocks', state: 'firing', summary: '2 deadlocks', started_ms: T0 + 2_000 })]);
    const detail = await get(`/api/alerts/${list.body.alerts[0].id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.evidence.facts).toEqual({ deadlocks: 2 });
    expect(detail.body.evidence.events.map((e: { database: string }) => e.database)).toEqual(['shop', 'crm']);
    expect(detail.body.transitions).toEqual([{ ts_ms: T0 + 2_000, to: 'firing' }]);
    expect((await get('/api/alerts?state=resolved')).body.alerts).toEqual([]);
    expect(await get('/api/alerts/4242')).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });

  it('reports a past window as `pgvigil report` does: alerts, timeline, summary; as JSON, text, HTML or Markdown', async () => {
    const report = await get('/api/report');
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({ from: new Date(T0 + 60_000 - 86_400_000).toISOString(), target: null, timeline_omitted: 0 });
    expect(report.body.alerts).toEqual([expect.objectContaining({ rule: 'deadlocks', state: 'firing', summary: '2 deadlocks' })]);
    expect(report.body.timeline.map((e: { what: string }) => e.what)).toEqual(['deadlock', 'deadlock', 'alert_firing']);
    expect(report.body.summary.events_by_kind.deadlock).toBe(2);

    const text = await get(`/api/report?from=${T0}&to=${T0 + 1_500}&format=text`);
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body).toMatch(/^pgvigil report: 2026-10-14T03:00:00.000Z to 2026-10-14T03:00:01.500Z\n/);
    // The alert fired after this window.
    expect(text.body).toContain('Alerts (0)\n  none fired in this window\n');
    expect(text.body).toContain('Timeline (2 entries)\n');

    const html = await get('/api/report?format=html');
    expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(html.body).toMatch(/<div class="alert warning firing" id="alert-1">/);
    expect((await get('/api/report?format=md')).body).toMatch(/^- \*\*#1 WARNING deadlocks\*\* on `db1` \(firing, basis log\): 2 deadlocks$/m);

    const other = await get('/api/report?target=db2');
    expect(other.body).toMatchObject({ target: 'db2', alerts: [], timeline: [] });
  });

  it('has the page zoom out no further than the API reads', async () => {
    const script = String((await get('/ui/timeline.js')).body);
    const days = /^const MAX_WINDOW_MS = (\d+) \* 86_400_000;$/m.exec(script)?.[1];
    expect(Number(days) * 86_400_000).toBe(MAX_WINDOW_MS);
  });

  it('serves the timeline page and its assets from the package, uPlot included', async () => {
    const page = await get('/');
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const assets = [...String(page.body).matchAll(/(?:src|href)="(\/ui\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.sort()).toEqual(['/ui/timeline.css', '/ui/timeline.js', '/ui/uPlot.iife.min.js', '/ui/uPlot.min.css']);
    for (const asset of assets) expect((await get(asset)).status).toBe(200);
    expect((await get('/ui/uPlot.iife.min.js')).body).toContain('uPlot');
  });

  it.each([
    ['/api/report?from=now-8d', /longer than 7 days/],
    ['/api/events?from=now-32d', /longer than 31 days: use a shorter window/],
    ['/api/series?name=pg_x&from=now-32d&step=1d', /longer than 31 days/],
    ['/api/report?format=pdf', /format/],
    ['/api/report?form=now-1h', /must NOT have additional properties/],
    ['/api/events?kind=vacuum', /kind/],
    ['/api/events?limit=0', /limit/],
    ['/api/events?limit=abc', /limit/],
    ['/api/events?limit=10001', /limit/],
    ['/api/events?from=yesterday', /^from="yesterday" is not a time/],
    ['/api/events?from=now&to=now-1h', /is after to/],
    ['/api/events?databse=shop', /must NOT have additional properties/],
    ['/api/events?database=', /database/],
    ['/api/series', /must have required property 'name'/],
    ['/api/series?name=pg-x', /name/],
    ['/api/series?name=pg_x&step=fast', /^step="fast" is not a duration/],
    ['/api/series?name=pg_x&step=1ms&from=now-1d', /more than 11000 points/],
    ['/api/series?name=pg_x&step=0', /step must be at least 1 ms/],
    ['/api/series?name=pg_x&labels=relname', /not name=value/],
    ['/api/series?name=pg_x&labels={"a":1}', /object of strings/],
    ['/api/alerts?state=open', /state/],
    ['/api/alerts/abc', /id/],
    ['/api/alerts/0', /id/],
  ])('answers %s with 400 and a message', async (url, message) => {
    const res = await get(url);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('bad_request');
    expect(res.body.message).toMatch(message);
  });

  it('answers 404 for unknown routes', async () => {
    expect(await get('/api/nothing')).toMatchObject({ status: 404, body: { error: 'not_found' } });
  });
});

describe('HTTP app readiness', () => {
  it('is not ready while a part fails or is unknown, and says what to do', async () => {
    const { app } = await build({
      readiness: {
        store: () => ({ writable: false, detail: 'SQLITE_FULL' }),
        postgres: () => [{ target: 'db1', reachable: null, detail: null }, { target: 'db2', reachable: false, detail: 'ECONNREFUSED' }],
        logs: () => [{ target: 'db1', source: null, reading: null, detail: null }],
      },
    });
    const res = await app.inject('/readyz');
    expect(res.statusCode).toBe(503);
    const body = res.json() as { ready: boolean; aspects: Array<{ aspect: string; target: string | null; state: string; hint: string }> };
    expect(body.ready).toBe(false);
    expect(body.aspects.map((a) => [a.aspect, a.target, a.state])).toEqual([
      ['store', null, 'failing'], ['postgres', 'db1', 'unknown'], ['postgres', 'db2', 'failing'], ['log', 'db1', 'disabled'],
    ]);
    expect(body.aspects[0]!.hint).toMatch(/SQLITE_FULL.*free disk space/);
    expect(body.aspects[2]!.hint).toMatch(/ECONNREFUSED.*pg_hba.conf/);
    await app.close();
  });
});

describe('HTTP app token', () => {
  it('beyond loopback without a token, serves /metrics to every host and the API to this host only', async () => {
    const { app } = await build({ listenHost: '0.0.0.0' });
    const status = async (url: string, remoteAddress: string) => (await app.inject({ url, remoteAddress, headers: { host: remoteAddress === '127.0.0.1' ? 'localhost:9899' : 'db1.example.net:9899' } })).statusCode;
    expect(await status('/metrics', '10.0.0.7')).toBe(200);
    expect(await status('/api/events', '10.0.0.7')).toBe(403);
    expect(await status('/api/events', '127.0.0.1')).toBe(200);
    await app.close();
  });

  it('serves every route without a token beyond loopback when allowUnauthenticated is set', async () => {
    const { app } = await build({ listenHost: '0.0.0.0', allowUnauthenticated: true });
    expect((await app.inject('/api/events')).statusCode).toBe(200);
    await app.close();
  });

  it('requires the bearer token everywhere but /healthz and /metrics', async () => {
    const { app } = await build({ listenHost: '0.0.0.0', token: TOKEN });
    const status = async (url: string, authorization?: string) => (await app.inject({ url, headers: authorization ? { authorization } : {} })).statusCode;
    expect(await status('/healthz')).toBe(200);
    expect(await status('/metrics')).toBe(200);
    expect(await status('/metrics?x=1')).toBe(200);
    expect(await status('/readyz')).toBe(401);
    expect(await status('/api/events')).toBe(401);
    expect(await status('/api/events', `Bearer ${TOKEN}x`)).toBe(401);
    expect(await status('/api/events', `Basic ${TOKEN}`)).toBe(401);
    expect(await status('/api/events', `Bearer ${TOKEN}`)).toBe(200);
    // The scheme is case-insensitive.
    expect(await status('/api/events', `bearer ${TOKEN}`)).toBe(200);
    expect(await status('/api/events', `BEARER  ${TOKEN}`)).toBe(200);
    const denied = await app.inject('/api/alerts');
    expect(denied.headers['www-authenticate']).toBe('Bearer');
    expect(denied.json()).toMatchObject({ error: 'unauthorized' });
    await app.close();
  });

  it('guards /metrics with its own token when one is set, and only /metrics', async () => {
    const metricsToken = 'a-metrics-token-0123456789';
    const { app } = await build({ metricsToken });
    const status = async (url: string, authorization?: string) => (await app.inject({ url, headers: authorization ? { authorization } : {} })).statusCode;
    expect(await status('/metrics')).toBe(401);
    expect(await status('/metrics', `Bearer ${TOKEN}`)).toBe(401);
    expect(await status('/metrics', `Bearer ${metricsToken}`)).toBe(200);
    expect((await app.inject('/metrics')).json()).toMatchObject({ message: expect.stringContaining('http.metrics_token_file') });
    // The API on loopback stays without a token; /healthz stays open.
    expect(await status('/api/events')).toBe(200);
    expect(await status('/healthz')).toBe(200);
    await app.close();
    const both = (await build({ listenHost: '0.0.0.0', token: TOKEN, metricsToken })).app;
    expect((await both.inject({ url: '/metrics', headers: { authorization: `Bearer ${metricsToken}` } })).statusCode).toBe(200);
    expect((await both.inject({ url: '/api/events', headers: { authorization: `Bearer ${metricsToken}` } })).statusCode).toBe(401);
    await both.close();
  });
});

describe('HTTP app login (the page with a token set)', () => {
  const login = (app: FastifyInstance, token: string) => app.inject({
    method: 'POST', url: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ token }).toString(),
  });

  it('answers the page with the login form, and the right token with a session cookie that opens what the token opens', async () => {
    const metricsToken = 'a-metrics-token-0123456789';
    const { app } = await build({ listenHost: '0.0.0.0', token: TOKEN, metricsToken });
    const form = await app.inject('/');
    expect(form.statusCode).toBe(401);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.body).toContain('<form method="post" action="/login">');
    // Other routes keep answering JSON to a client without the token.
    expect((await app.inject('/api/events')).json()).toMatchObject({ error: 'unauthorized' });

    const wrong = await login(app, `${TOKEN}x`);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toContain('not the token');

    const right = await login(app, TOKEN);
    expect(right.statusCode).toBe(303);
    expect(right.headers.location).toBe('/');
    const setCookie = String(right.headers['set-cookie']);
    expect(setCookie).toMatch(/^pgvigil_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(setCookie).not.toContain(TOKEN);
    const cookie = setCookie.split(';')[0]!;
    for (const url of ['/', '/api/events', '/readyz', '/ui/timeline.js']) expect((await app.inject({ url, headers: { cookie } })).statusCode, url).toBe(200);
    // Not /metrics, which has its own token; and a made-up or another token's cookie opens nothing.
    expect((await app.inject({ url: '/metrics', headers: { cookie } })).statusCode).toBe(401);
    expect((await app.inject({ url: '/api/events', headers: { cookie: 'pgvigil_session=made-up' } })).statusCode).toBe(401);
    await app.close();
    const other = (await build({ listenHost: '0.0.0.0', token: `${TOKEN}-other` })).app;
    expect((await other.inject({ url: '/api/events', headers: { cookie } })).statusCode).toBe(401);
    await other.close();
  });

  it('has no login without an API token', async () => {
    const { app } = await build();
    expect((await app.inject('/')).statusCode).toBe(200);
    expect((await login(app, TOKEN)).statusCode).toBe(404);
    await app.close();
  });
});

describe('HTTP app Host check (DNS rebinding)', () => {
  const status = async (app: FastifyInstance, host: string | null, url = '/api/events') => {
    const res = await app.inject({ url, headers: host === null ? {} : { host } });
    return res.statusCode;
  };

  it('answers a loopback listener only under loopback names or its listen host, any port', async () => {
    const { app } = await build({ listenHost: '127.0.0.1' });
    for (const host of ['localhost', 'localhost:9899', 'LOCALHOST:9899', '127.0.0.1:9899', '127.0.0.1', '[::1]:9899', '[::1]']) expect(await status(app, host), host).toBe(200);
    for (const host of ['evil.example', 'evil.example:9899', '127.0.0.1.evil.example', 'localhost.evil.example:9899', '[::2]:9899']) {
      expect(await status(app, host), host).toBe(421);
    }
    // /metrics and the page too: a page of another site reads none of them.
    for (const url of ['/metrics', '/', '/healthz', '/api/alerts']) expect(await status(app, 'evil.example:9899', url), url).toBe(421);
    const refused = await app.inject({ url: '/api/events', headers: { host: 'evil.example:9899' } });
    expect(refused.json()).toMatchObject({ error: 'misdirected_request' });
    await app.close();
  });

  it('takes the configured loopback host, IPv6 in brackets or not', async () => {
    for (const listenHost of ['127.0.0.2', '::1', '[::1]']) {
      const { app } = await build({ listenHost });
      const named = listenHost.includes(':') ? '[::1]:9899' : `${listenHost}:9899`;
      expect(await status(app, named), listenHost).toBe(200);
      expect(await status(app, 'evil.example'), listenHost).toBe(421);
      await app.close();
    }
  });

  it('leaves other listeners to the token: their names are not known', async () => {
    const { app } = await build({ listenHost: '0.0.0.0', token: TOKEN });
    const res = await app.inject({ url: '/api/events', headers: { host: 'pgvigil.internal:9899', authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    await app.close();
  });
});
