/**
 * A listener on a network address with no API token (a container's 0.0.0.0, as Prometheus needs to
 * scrape it): /metrics and /healthz are served to every host, as Prometheus and health checks
 * expect, and everything else (the API, /readyz, the page) only to a client on this host that
 * names it: `kubectl port-forward`, `docker exec ... curl`, an operator's curl on the host. The
 * client's address proves it is here; the Host header that it is no page of another site that
 * pointed its name at this address (DNS rebinding). A token, once set, serves all of it to
 * every host that has the token (auth.ts).
 */
import type { FastifyInstance } from 'fastify';
import { isLoopback } from '../lib/listen-address.js';
import { hostName, LOOPBACK_NAMES } from './host-check.js';

/** Paths every host may read without a token. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/metrics', '/healthz']);

const HOST_NAMES_OF_HERE = new Set(LOOPBACK_NAMES);

/** Whether a peer address is this host (`::ffff:127.0.0.1` is IPv4's loopback on a dual-stack socket). */
export function isLoopbackPeer(address: string | undefined): boolean {
  return address !== undefined && isLoopback(address.replace(/^::ffff:/i, ''));
}

export function serveApiToThisHostOnly(app: FastifyInstance, listen: string): void {
  app.addHook('onRequest', async (request, reply) => {
    if (OPEN_PATHS.has(request.url.split('?')[0]!)) return;
    const header = request.headers.host;
    if (isLoopbackPeer(request.socket.remoteAddress) && (header === undefined || HOST_NAMES_OF_HERE.has(hostName(header)))) return;
    await reply.code(403).send({
      error: 'forbidden',
      message: `pgvigil on ${listen} has no API token: /metrics and /healthz are served to every host, the API and the page only to this host ` +
        '(as localhost, e.g. through kubectl port-forward). Set http_token_file (PGVIGIL_HTTP_TOKEN_FILE) to serve them to whoever has the token.',
    });
  });
}
