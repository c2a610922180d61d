/**
 * postJson against real sockets: a receiver that trickles its answer meets the deadline, and the
 * proxy environment (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) is honoured through a real local proxy
 * that records what it was asked. Receivers are named `alerts.example.com`, which resolves
 * nowhere here: a request that reached one went through the proxy.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { RecordingProxy } from '../../test/helpers/recording-proxy.js';
import { postJson, type PostOptions } from './http-post.js';
import { proxyRouteFor } from './proxy-agent.js';

const NOW_MS = Date.UTC(2026, 11, 3, 12, 0, 0);
const post = (url: string, more: Partial<PostOptions> = {}) => postJson({ url, body: '{"kind":"alert"}', timeoutMs: 5_000, accepted: [200], nowMs: NOW_MS, ...more });

async function listen(server: http.Server, host = '127.0.0.1'): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return (server.address() as AddressInfo).port;
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A receiver that answers 200 and keeps each request's Host header and body. */
function receiver(): { server: http.Server; received: Array<{ host: string | undefined; body: string }> } {
  const received: Array<{ host: string | undefined; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (text: string) => { body += text; });
    req.on('end', () => {
      received.push({ host: req.headers.host, body });
      res.writeHead(200).end('{}');
    });
  });
  return { server, received };
}

function setProxyEnv(env: { http?: string; https?: string; no?: string }): void {
  // Lowercase wins over uppercase: set both so the machine's own settings cannot interfere.
  for (const [name, value] of [['http_proxy', env.http], ['https_proxy', env.https], ['no_proxy', env.no], ['all_proxy', undefined]] as const) {
    vi.stubEnv(name, value ?? '');
    vi.stubEnv(name.toUpperCase(), value ?? '');
  }
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('postJson deadline', () => {
  it('gives up on a receiver that trickles a byte at a time, reported as a retry that says why', async () => {
    const timers: NodeJS.Timeout[] = [];
    const trickler = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Never silent long enough for the idle timeout, never done.
      timers.push(setInterval(() => res.write(' '), 50));
    });
    const port = await listen(trickler);
    try {
      const result = await post(`http://127.0.0.1:${port}/hook`, { timeoutMs: 2_000, deadlineMs: 400 });
      expect(result).toEqual({ outcome: 'retry', status: null, retryAfterMs: null, reason: expect.stringMatching(/^ETIMEDOUT: timed out: no complete answer within the 400 ms deadline/) });
    } finally {
      for (const timer of timers) clearInterval(timer);
      await close(trickler);
    }
  });
});

describe('postJson through a proxy', () => {
  const plain = receiver();
  let proxy: RecordingProxy;
  const certDir = mkdtempSync(path.join(tmpdir(), 'pgvigil-proxy-tls-'));
  const sniSeen: string[] = [];
  let tlsReceiver: https.Server;

  beforeAll(async () => {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=alerts.example.com',
      '-addext', 'subjectAltName=DNS:alerts.example.com', '-keyout', 'server.key', '-out', 'server.crt',
    ], { cwd: certDir, stdio: 'pipe' });
    const cert = readFileSync(path.join(certDir, 'server.crt'));
    const key = readFileSync(path.join(certDir, 'server.key'));
    tlsReceiver = https.createServer({
      cert, key,
      // The name the client asked for in its TLS hello: it reached this server through the tunnel.
      SNICallback: (servername, cb) => {
        sniSeen.push(servername);
        cb(null, undefined);
      },
    }, (_req, res) => res.writeHead(200).end());
    const plainPort = await listen(plain.server);
    const tlsPort = await listen(tlsReceiver);
    proxy = new RecordingProxy({ 'alerts.example.com:80': plainPort, 'alerts.example.com:443': tlsPort });
    await proxy.start();
  });

  afterAll(async () => {
    await proxy.stop();
    await close(plain.server);
    await close(tlsReceiver);
    rmSync(certDir, { recursive: true, force: true });
  });

  it('sends an http receiver its POST through HTTP_PROXY as an absolute URI', async () => {
    setProxyEnv({ http: proxy.url });
    const result = await post('http://alerts.example.com/hook?team=db');
    expect(result).toEqual({ outcome: 'accepted', status: 200 });
    expect(proxy.requests).toContain('POST http://alerts.example.com/hook?team=db');
    expect(plain.received.at(-1)).toEqual({ host: 'alerts.example.com', body: '{"kind":"alert"}' });
  });

  it('tunnels an https receiver through HTTPS_PROXY with CONNECT, TLS end to end', async () => {
    setProxyEnv({ https: proxy.url });
    const result = await post('https://alerts.example.com/hook');
    // The receiver's certificate is self-signed and pgvigil trusts only the system's CAs: the
    // refusal proves the TLS handshake was with the receiver itself, not with the proxy.
    expect(result).toMatchObject({ outcome: 'retry', status: null, reason: expect.stringMatching(/^DEPTH_ZERO_SELF_SIGNED_CERT: via proxy http:\/\/127\.0\.0\.1:\d+: self-signed certificate/) });
    expect(proxy.requests).toContain('CONNECT alerts.example.com:443');
    expect(sniSeen).toContain('alerts.example.com');
  });

  it('names the proxy when the proxy itself cannot be reached', async () => {
    const gone = http.createServer();
    const port = await listen(gone);
    await close(gone);
    setProxyEnv({ http: `http://user:secret@127.0.0.1:${port}` });
    const result = await post('http://alerts.example.com/hook');
    expect(result).toMatchObject({ outcome: 'retry', status: null, reason: expect.stringMatching(new RegExp(`^via proxy http://127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`)) });
    expect(JSON.stringify(result)).not.toContain('secret');
  });

  it('reaches a NO_PROXY receiver directly while the others still go through the proxy', async (ctx) => {
    const address = Object.values(networkInterfaces()).flat().find((a) => a?.family === 'IPv4' && !a.internal)?.address;
    // A loopback receiver is never proxied, so the direct one must listen on another address.
    if (address === undefined) return ctx.skip('no non-loopback IPv4 address on this machine');
    const direct = receiver();
    const port = await listen(direct.server, address);
    try {
      setProxyEnv({ http: proxy.url, no: `intranet.invalid, ${address}:${port}` });
      const before = proxy.requests.length;
      expect(await post(`http://${address}:${port}/direct`)).toEqual({ outcome: 'accepted', status: 200 });
      expect(await post('http://alerts.example.com/proxied')).toEqual({ outcome: 'accepted', status: 200 });
      expect(direct.received).toHaveLength(1);
      expect(proxy.requests.slice(before)).toEqual(['POST http://alerts.example.com/proxied']);
    } finally {
      await close(direct.server);
    }
  });
});

describe('proxyRouteFor', () => {
  const PROXY = 'http://proxy.corp:3128';
  it.each([
    ['no NO_PROXY', '', 'https://events.pagerduty.com/v2/enqueue', true],
    ['a host', 'events.pagerduty.com', 'https://events.pagerduty.com/v2/enqueue', false],
    ['a host, other hosts', 'events.pagerduty.com', 'https://am.example.com/api/v2/alerts', true],
    ['a domain suffix', '.example.com', 'https://am.example.com/api/v2/alerts', false],
    ['a wildcard domain', '*.example.com', 'https://am.eu.example.com/api/v2/alerts', false],
    ['a domain suffix, not the bare domain', '.example.com', 'https://example.com/hook', true],
    ['everything', '*', 'https://events.pagerduty.com/v2/enqueue', false],
    ['a host and port, that port', 'am.example.com:9093', 'http://am.example.com:9093/api/v2/alerts', false],
    ['a host and port, another port', 'am.example.com:9093', 'http://am.example.com:9094/api/v2/alerts', true],
    ['a list with spaces', 'intranet, .example.com', 'https://hooks.example.com/x', false],
    ['loopback, never proxied', '', 'http://127.0.0.1:9093/api/v2/alerts', false],
    ['localhost, never proxied', '', 'http://localhost:9093/api/v2/alerts', false],
    ['IPv6 loopback, never proxied', '', 'http://[::1]:9093/api/v2/alerts', false],
  ])('NO_PROXY with %s', (_what, noProxy, url, proxied) => {
    setProxyEnv({ http: PROXY, https: PROXY, no: noProxy });
    expect(proxyRouteFor(new URL(url))?.proxy ?? null).toBe(proxied ? PROXY : null);
  });

  it('is direct when no proxy is set', () => {
    setProxyEnv({});
    expect(proxyRouteFor(new URL('https://events.pagerduty.com/v2/enqueue'))).toBeNull();
  });
});
