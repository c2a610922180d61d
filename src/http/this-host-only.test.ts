import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { isLoopbackPeer, serveApiToThisHostOnly } from './this-host-only.js';

async function app() {
  const server = Fastify();
  serveApiToThisHostOnly(server, '0.0.0.0:9899');
  for (const path of ['/metrics', '/healthz', '/readyz', '/api/alerts', '/']) server.get(path, async () => ({ path }));
  await server.ready();
  return server;
}

describe('a network listener without a token', () => {
  it('serves /metrics and /healthz to every host, the API, /readyz and the page to none but this one', async () => {
    const server = await app();
    const from = (remoteAddress: string, url: string, host = 'pgvigil.example.net:9899') => server.inject({ url, remoteAddress, headers: { host } });
    for (const url of ['/metrics', '/healthz', '/metrics?x=1']) expect((await from('10.1.2.3', url)).statusCode, url).toBe(200);
    for (const url of ['/api/alerts', '/readyz', '/', '/api/alerts?state=firing']) {
      const refused = await from('10.1.2.3', url);
      expect(refused.statusCode, url).toBe(403);
      expect(refused.json().message).toMatch(/^pgvigil on 0\.0\.0\.0:9899 has no API token: .* Set http_token_file \(PGVIGIL_HTTP_TOKEN_FILE\)/);
    }
    // kubectl port-forward and a curl on the host arrive from loopback, naming it.
    expect((await from('127.0.0.1', '/api/alerts', 'localhost:9899')).statusCode).toBe(200);
    expect((await from('::ffff:127.0.0.1', '/', '127.0.0.1:9899')).statusCode).toBe(200);
    expect((await from('::1', '/readyz', '[::1]:9899')).statusCode).toBe(200);
    // A page of another site whose name resolves here: from loopback, but not naming it.
    expect((await from('127.0.0.1', '/api/alerts', 'rebind.attacker.example')).statusCode).toBe(403);
    await server.close();
  });

  it('tells a loopback peer from another', () => {
    expect(['127.0.0.1', '127.8.9.1', '::1', '::ffff:127.0.0.1'].map(isLoopbackPeer)).toEqual([true, true, true, true]);
    expect(['10.0.0.1', '::ffff:10.0.0.1', 'fe80::1', undefined].map(isLoopbackPeer)).toEqual([false, false, false, false]);
  });
});
