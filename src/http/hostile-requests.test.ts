/**
 * Hostile HTTP requests: oversize, malformed and repeated parameters, path traversal, unicode,
 * numbers past every range, and 1,000 concurrent scrapes of /metrics on a real socket. Path
 * traversal gets an exact status and never a file's content. The
 * contract: a client error is a 4xx with a JSON message, never a 500, never a stack trace, and
 * the server keeps answering.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { silentLogger } from '../lib/logger.js';
import { openStore } from '../store/open-store.js';
import { StoreQueries } from '../store/queries.js';
import { StoreWriter } from '../store/store-writer.js';
import { buildHttpApp } from './build-http-app.js';
import { Metrics } from './metrics.js';
import { HttpServer } from './http-server.js';

const T0 = Date.UTC(2026, 9, 14, 3, 0, 0);
const ROUTES = ['/api/events', '/api/series', '/api/alerts', '/api/report', '/api/alerts/1', '/metrics', '/healthz', '/readyz'];

async function build(): Promise<FastifyInstance> {
  const clock = new ManualClock(T0);
  const db = openStore(':memory:');
  const writer = new StoreWriter(db, clock, silentLogger());
  const metrics = new Metrics({ clock });
  metrics.attachWriter(writer);
  writer.enqueue({
    events: [],
    samples: [{ target: 'db1', name: 'pg_stat_user_tables_n_dead_tup', labels: { datname: 'shop"\\\n', relname: 'ö rders' }, tsMs: T0, value: 1 }],
  });
  writer.flush();
  return buildHttpApp({
    metrics, queries: new StoreQueries(db), clock, listenHost: '127.0.0.1', token: null,
    readiness: { store: () => ({ writable: true, detail: null }), postgres: () => [], logs: () => [] },
  });
}

/** A response that blames the client and tells it why, without leaking the server's insides. */
function expectNoServerError(url: string, status: number, body: string): void {
  expect(status, `${url} -> ${status}: ${body.slice(0, 300)}`).toBeLessThan(500);
  expect(body, url).not.toMatch(/\n\s+at |node_modules|\/src\//);
}

const BIG = 'x'.repeat(100_000);
const HOSTILE_URLS = [
  // oversize
  `/api/events?database=${BIG}`, `/api/series?name=${BIG}`, `/api/series?name=a&labels=${'a=b,'.repeat(20_000)}a=b`, `/api/events?from=${'9'.repeat(5_000)}`,
  // malformed
  '/api/events?from=%zz', '/api/events?%00=1', '/api/events?from=%00', '/api/events?kind=', '/api/events?limit=abc', '/api/events?limit=1.5',
  '/api/series?name=a&labels=%7B', '/api/series?name=a&labels={"a":1}', `/api/series?name=a&labels=${'{"a":'.repeat(10_000)}`, '/api/series?name=a&labels==x',
  '/api/series?name=a&step=0', '/api/series?name=a&step=-1s', '/api/series?name=1a', '/api/report?format=pdf', '/api/alerts?state=FIRING', '/api/events?&&&=&',
  // repeated
  '/api/events?kind=deadlock&kind=lock_wait', '/api/events?limit=1&limit=2', '/api/series?name=a&name=b', '/api/report?from=now-1h&from=now-2h',
  '/api/alerts?state=firing&state=resolved', '/api/series?name=a&step=1s&step=2s', '/api/report?format=json&format=text',
  // numbers past every range
  `/api/events?from=${'9'.repeat(400)}`, '/api/events?from=9000000000000000&to=1', '/api/alerts?from=99999999999999999999&to=0',
  '/api/report?from=8640000000000001', `/api/series?name=a&step=${'9'.repeat(400)}d`, '/api/series?name=a&from=now-99999999999999999999d',
  '/api/events?limit=99999999999999999999', '/api/alerts/99999999999999999999', '/api/alerts/0', '/api/alerts/-1', '/api/alerts/1e3',
  '/api/events?from=-1', '/api/events?from=now-1e3h', '/api/events?from=2026-13-45T99:99:99Z',
  // unicode
  '/api/events?database=%E2%80%AE%F0%9F%90%98', '/api/events?database=%ED%A0%80', '/api/events?database=%FF%FE', '/api/%F0%9F%90%98',
  `/api/series?name=a&labels=${encodeURIComponent('{"datname":"ö\\u0000\\n"}')}`, '/api/events?kind=d%C3%A9adlock',
];

/**
 * Path traversal, with the exact answer each must get: a dot segment that stays inside the app
 * resolves to the route it names (as any URL parser resolves it: `/api/../metrics` is `/metrics`),
 * anything else is a 404 or, for a parameter, a 400. `served` says what the body must be.
 */
const TRAVERSAL: Array<[url: string, status: number, served: 'metrics' | 'page' | 'error']> = [
  ['/api/../metrics', 200, 'metrics'],
  ['/%2e%2e/', 200, 'page'],
  ['/metrics?x=../../etc/passwd', 200, 'metrics'],
  ['/api/%2e%2e/%2e%2e/etc/passwd', 404, 'error'],
  ['/..%2f..%2fetc%2fpasswd', 404, 'error'],
  ['/api/events/../../../../etc/passwd', 404, 'error'],
  ['/../package.json', 404, 'error'],
  ['/%2e%2e/%2e%2e/package.json', 404, 'error'],
  ['/web/../package.json', 404, 'error'],
  ['//metrics', 404, 'error'],
  ['/metrics/', 404, 'error'],
  ['/api/alerts/..%2f..%2fetc%2fpasswd', 400, 'error'],
  ['/api/alerts/%00', 400, 'error'],
];

/** Lines of files a traversal could reach: none may appear in any answer. */
const FILE_CONTENTS = [readFileSync('/etc/passwd', 'utf8').split('\n')[0]!, '"name": "pgvigil"', '"compilerOptions"'];

function expectServed(url: string, res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, served: 'metrics' | 'page' | 'error'): void {
  expect(res.statusCode, `${url}: ${res.body.slice(0, 200)}`).toBe(status);
  for (const content of FILE_CONTENTS) expect(res.body, `${url} returned file content`).not.toContain(content);
  if (served === 'metrics') expect(res.body, url).toMatch(/^# HELP /);
  if (served === 'page') expect(res.body, url).toMatch(/^<!doctype html>/);
  if (served === 'error') {
    expect(res.headers['content-type'], url).toMatch(/^application\/json/);
    expect(JSON.parse(res.body), url).toEqual({ error: status === 404 ? 'not_found' : 'bad_request', message: expect.any(String) });
  }
}

describe('hostile requests (inject)', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await build();
  });
  afterAll(async () => {
    await app.close();
  });

  it.each(HOSTILE_URLS.map((url) => [url.length > 120 ? `${url.slice(0, 100)}... (${url.length} characters)` : url, url]))('%s', async (_name, url) => {
    const res = await app.inject({ method: 'GET', url });
    expectNoServerError(url, res.statusCode, res.body);
    if (res.statusCode >= 400 && res.statusCode !== 404) expect(res.json(), url).toMatchObject({ error: expect.any(String), message: expect.any(String) });
  });

  it.each(TRAVERSAL)('path traversal %s answers %i with no file content', async (url, status, served) => {
    expectServed(url, await app.inject({ method: 'GET', url }), status, served);
  });

  it('answers 4xx to non-GET methods and bodies it does not expect', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'] as const) {
      const res = await app.inject({ method, url: '/api/events', payload: '{"a":' + '['.repeat(10_000), headers: { 'content-type': 'application/json' } });
      expectNoServerError(`${method} /api/events`, res.statusCode, res.body);
    }
  });

  it('never answers 500 to random query strings on any route', async () => {
    const param = fc.oneof(fc.constantFrom('from', 'to', 'kind', 'limit', 'name', 'labels', 'step', 'state', 'format', 'target', 'database'), fc.string({ maxLength: 8 }));
    const value = fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'binary', maxLength: 30 }), fc.bigInt().map(String), fc.double().map(String),
      fc.constantFrom('now', 'now-1h', 'now-0ms', '1s', '{}', '{"a":"b"}', 'a=b', ''));
    await fc.assert(fc.asyncProperty(fc.constantFrom(...ROUTES), fc.array(fc.tuple(param, value), { maxLength: 4 }), async (route, params) => {
      const url = `${route}?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
      const res = await app.inject({ method: 'GET', url });
      expectNoServerError(url, res.statusCode, res.body);
    }), { numRuns: 400 });
  });
});

describe('1,000 concurrent scrapes on a real socket', () => {
  let app: FastifyInstance;
  let server: HttpServer;
  beforeAll(async () => {
    app = await build();
    server = new HttpServer(app, '127.0.0.1', 0);
    await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('answers every one with the whole exposition, then still answers', async () => {
    const agent = new http.Agent({ keepAlive: false, maxSockets: 1_000 });
    const url = `${server.url}/metrics`;
    const results = await Promise.all(Array.from({ length: 1_000 }, () => getText(url, agent)));
    agent.destroy();
    const statuses = new Map<number, number>();
    for (const r of results) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    expect(Object.fromEntries(statuses)).toEqual({ 200: 1_000 });
    // Self-metrics move between scrapes; the sample, with its label values escaped, is in each.
    const sample = 'pg_stat_user_tables_n_dead_tup{target="db1",datname="shop\\"\\\\\\n",relname="ö rders"} 1';
    expect(results.filter((r) => !r.body.includes(sample)).map((r) => r.body.slice(0, 2_000))).toEqual([]);
    expect((await getText(`${server.url}/healthz`)).status).toBe(200);
  });
});

function getText(url: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    }).on('error', reject);
  });
}
