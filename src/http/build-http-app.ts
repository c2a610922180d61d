/**
 * HTTP: builds pgvigil's fastify app (/metrics, /healthz, /readyz, /api/*, the timeline page at /) WITHOUT listening, so
 * tests drive it with inject() and app.ts decides where it listens (http-server.ts).
 * Owns routing, auth (the Host check of loopback listeners, the bearer token) and error shapes. Everything served comes from memory (metrics) or a
 * store through StoreReads (API): the local one, or the central one for `pgvigil serve`, which
 * has no metrics or readiness of its own to serve.
 */
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../domain/index.js';
import { silentLogger, type Logger } from '../lib/logger.js';
import type { StoreReads } from '../store/store-reads.js';
import { acceptsGzip } from './accept-encoding.js';
import { registerApiRoutes } from './api-routes.js';
import { registerSilenceRoutes } from './silence-routes.js';
import type { Silences } from '../store/silences.js';
import type { MetricsEncoding } from './metrics.js';
import { isLoopback } from '../lib/listen-address.js';
import { requireBearer } from './auth.js';
import { requireLoopbackHost } from './host-check.js';
import { serveApiToThisHostOnly } from './this-host-only.js';
import { readiness, type ReadinessSources } from './readiness.js';
import { registerTimelinePage } from './timeline-page.js';

export interface HttpAppOptions {
  /** /metrics; none: no route (a read-only `pgvigil serve` collects nothing). */
  metrics?: { readonly contentType: string; renderChunks(encoding: MetricsEncoding): Promise<Buffer[]> };
  queries: StoreReads;
  /** /readyz; none: no route (`pgvigil serve` has no writer, poller or tailer to report on). */
  readiness?: ReadinessSources;
  clock: Clock;
  /** Where the app will listen; on a non-loopback host without a token the API serves this host only (this-host-only.ts). */
  listenHost: string;
  /** Bearer token of the API (read with readTokenFile); null for none. */
  token: string | null;
  /** Bearer token of /metrics alone; null or absent: /metrics is open (Prometheus' default). */
  metricsToken?: string | null;
  /** Serve HTTPS with this certificate (chain) and key, PEM; null or absent: plain HTTP. */
  tls?: { cert: string; key: string } | null;
  /** /api/silences over the daemon's own store, with the targets and rules a silence may name; absent for `serve`. */
  silences?: { store: Silences; targets: readonly string[]; rules: readonly string[] };
  /** A non-loopback host without a token is allowed (http.allow_unauthenticated). */
  allowUnauthenticated?: boolean;
  logger?: Logger;
}

export async function buildHttpApp(options: HttpAppOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    ...(options.tls ? { https: { cert: options.tls.cert, key: options.tls.key } } : {}),
    loggerInstance: (options.logger ?? silentLogger()) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    // Unknown query parameters are errors (a typo must not silently widen a query).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } },
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
  // First: a request a page of another site made does not even learn whether a token is needed.
  requireLoopbackHost(app, options.listenHost);
  // A network address without a token: /metrics to everyone, the API to this host alone.
  if (options.token === null && !isLoopback(options.listenHost) && options.allowUnauthenticated !== true) serveApiToThisHostOnly(app, options.listenHost);
  requireBearer(app, { api: options.token, metrics: options.metricsToken ?? null }, { secure: Boolean(options.tls) });

  app.get('/healthz', async () => ({ status: 'alive' }));
  const sources = options.readiness;
  if (sources) {
    app.get('/readyz', async (_request, reply) => {
      const state = readiness(sources);
      return reply.code(state.ready ? 200 : 503).send(state);
    });
  }
  const metrics = options.metrics;
  // The cached chunks as they are (Metrics renders and compresses once per change, not per
  // scrape), no copy. Gzip when the client takes it, as Prometheus does: 62 KB instead of 1.7 MB
  // at 14k series (bench/metrics.ts).
  // Written to the socket directly: through reply.send they would go through a Readable, 0.4-0.6
  // ms more per curl-timed scrape here (a copy into one buffer costs as much). No hook of the
  // reply's runs after the hijack; none is needed (the bearer check is onRequest).
  if (metrics) {
    app.get('/metrics', async (request, reply) => {
      const encoding: MetricsEncoding = acceptsGzip(request.headers['accept-encoding']) ? 'gzip' : 'identity';
      const chunks = await metrics.renderChunks(encoding);
      reply.hijack();
      reply.raw.writeHead(200, {
        'content-type': metrics.contentType,
        'content-length': chunks.reduce((sum, chunk) => sum + chunk.length, 0),
        vary: 'accept-encoding',
        ...(encoding === 'gzip' ? { 'content-encoding': 'gzip' } : {}),
      });
      for (const chunk of chunks) reply.raw.write(chunk);
      reply.raw.end();
    });
  }
  registerApiRoutes(app, options.queries, options.clock);
  if (options.silences) registerSilenceRoutes(app, options.silences.store, options.clock, options.silences);
  registerTimelinePage(app);
  await app.ready();
  return app;
}

function errorHandler(this: FastifyInstance, error: FastifyError, _request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error.validation) {
    const where = error.validationContext ?? 'request';
    return reply.code(400).send({ error: 'bad_request', message: `${where}: ${error.message.replace(/^(querystring|params|body)\/?/, '')}` });
  }
  const status = error.statusCode ?? 500;
  // The central store is down: the client may retry; nothing here failed.
  if (status === 503) {
    this.log.warn({ err: error.message }, 'API request found the store unavailable');
    return reply.code(503).send({ error: 'store_unavailable', message: error.message });
  }
  if (status >= 400 && status < 500) return reply.code(status).send({ error: error.code === 'bad_request' ? 'bad_request' : 'client_error', message: error.message });
  this.log.error({ err: error }, 'API request failed');
  return reply.code(500).send({ error: 'internal_error', message: 'internal error; see the pgvigil log' });
}
