/**
 * DNS rebinding: a page on another site can point its own name at 127.0.0.1 and have the
 * visitor's browser fetch pgvigil under that name; the browser, seeing one origin, lets the page
 * read the answers (the stored statements, users and alerts of /api). Only the Host header tells
 * such a request apart, so a listener on loopback answers only requests that name it: localhost,
 * 127.0.0.1, [::1] or the configured listen host, with any port. A request without a Host (HTTP
 * 1.0 health checks) comes from no browser and passes.
 *
 * A listener on another address is reached under names pgvigil cannot know (DNS, proxies); there
 * the bearer token guards the API (auth.ts).
 */
import type { FastifyInstance } from 'fastify';
import { isLoopback } from '../lib/listen-address.js';

/** How a client on this host names it. */
export const LOOPBACK_NAMES: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** The host part of a Host header, lower-cased: `[::1]:9899` -> `[::1]`, `Localhost:80` -> `localhost`. */
export function hostName(header: string): string {
  const host = header.trim().toLowerCase();
  if (host.startsWith('[')) {
    const close = host.indexOf(']');
    return close === -1 ? host : host.slice(0, close + 1);
  }
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** Host names a loopback listener on `listenHost` answers to. */
export function allowedHostNames(listenHost: string): Set<string> {
  const bare = listenHost.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return new Set([...LOOPBACK_NAMES, bare.includes(':') ? `[${bare}]` : bare]);
}

/** Refuses (421) every request to a loopback listener whose Host names another host. No-op for other listeners. */
export function requireLoopbackHost(app: FastifyInstance, listenHost: string): void {
  if (!isLoopback(listenHost)) return;
  const allowed = allowedHostNames(listenHost);
  app.addHook('onRequest', async (request, reply) => {
    const header = request.headers.host;
    if (header === undefined || allowed.has(hostName(header))) return;
    await reply.code(421).send({
      error: 'misdirected_request',
      message: `this pgvigil listens on ${listenHost} and answers requests for ${[...allowed].join(', ')} only, not ${JSON.stringify(header)} (a page of another site must not read it)`,
    });
  });
}
