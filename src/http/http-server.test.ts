/**
 * HTTPS (http.tls) with a real client on a real socket: a self-signed certificate this test makes
 * with openssl, trusted by the client as its CA.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { openStore } from '../store/open-store.js';
import { StoreQueries } from '../store/queries.js';
import { buildHttpApp } from './build-http-app.js';
import { HttpServer } from './http-server.js';

const TOKEN = 'a-token-of-sufficient-length-0123';

/** Status, headers and body of a request (a GET without `payload`), or the client's error. */
function request(url: string, options: https.RequestOptions, payload?: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method: payload === undefined ? 'GET' : 'POST', ...options }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const get = async (url: string, options: https.RequestOptions) => {
  const { status, body } = await request(url, options);
  return { status, body };
};

describe('HttpServer with http.tls', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-https-'));
  let server: HttpServer;
  let ca: Buffer;

  beforeAll(async () => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=pgvigil-test',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', 'server.key', '-out', 'server.crt',
    ], { cwd: dir, stdio: 'pipe' });
    ca = readFileSync(path.join(dir, 'server.crt'));
    const tls = { cert: ca.toString('utf8'), key: readFileSync(path.join(dir, 'server.key'), 'utf8') };
    const app = await buildHttpApp({ queries: new StoreQueries(openStore(':memory:')), clock: new ManualClock(0), listenHost: '127.0.0.1', token: TOKEN, tls });
    server = new HttpServer(app, '127.0.0.1', 0);
    await server.start();
  });

  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves HTTPS to a client that trusts the certificate, the token still asked for', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(await get(`${server.url}/healthz`, { ca })).toEqual({ status: 200, body: '{"status":"alive"}' });
    expect((await get(`${server.url}/api/events`, { ca })).status).toBe(401);
    expect((await get(`${server.url}/api/events`, { ca, headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('sets the page\'s session cookie Secure: the browser sends it back over HTTPS only', async () => {
    const login = await request(`${server.url}/login`, { ca, headers: { 'content-type': 'application/x-www-form-urlencoded' } }, `token=${TOKEN}`);
    expect(login.status).toBe(303);
    expect(login.headers['set-cookie']?.[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
  });

  it('is refused by a client that does not trust the certificate, and speaks no plain HTTP', async () => {
    await expect(get(`${server.url}/healthz`, {})).rejects.toThrow(/self-signed|self signed/);
    const plain = get(server.url.replace('https:', 'http:') + '/healthz', {}).then((r) => r.status, (err: Error) => err.message);
    // A TLS server answers plain HTTP with a 400 or hangs up; never the page.
    expect(await plain).not.toBe(200);
  });
});
