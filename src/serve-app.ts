/**
 * `pgvigil serve`: the HTTP API and the timeline page over a store, and nothing else: no
 * collectors, tailer, rules, notifiers or forwarder, and no writes. The store is a sidecar's
 * SQLite file (a copy, say), opened read-only, or the central PostgreSQL store of a fleet, read in
 * read-only sessions (docs/fleet.md). Listening and auth are the daemon's (config checks in
 * load-config.ts, the guard in build-http-app.ts).
 */
import type pg from 'pg';
import type { CentralFilter } from './central/central-reads.js';
import type { Config } from './config/load-config.js';
import type { Clock, Component } from './domain/index.js';
import { buildHttpApp } from './http/build-http-app.js';
import { HttpServer } from './http/http-server.js';
import { conninfoToUrl, isPostgresUrl } from './lib/conninfo.js';
import type { Logger } from './lib/logger.js';
import type { StoreReads } from './store/store-reads.js';

export interface ServeOptions {
  /** A SQLite store file, or the central store's postgres:// URL. */
  store: string;
  /** Which targets of the central store to serve. */
  filter: CentralFilter;
}

export interface ServeApp extends Component {
  /** http://host:port once started. */
  readonly url: string | null;
}

interface OpenReads {
  reads: StoreReads;
  close(): Promise<void>;
}

export function buildServeApp(config: Config, { store, filter }: ServeOptions, { clock, log }: { clock: Clock; log: Logger }): ServeApp {
  let http: HttpServer | null = null;
  let opened: OpenReads | null = null;
  return {
    name: 'serve',
    get url() {
      return http?.url ?? null;
    },
    async start() {
      opened = isPostgresUrl(store) ? await openCentral(store, filter, log) : await openFile(store);
      const app = await buildHttpApp({
        queries: opened.reads, clock, listenHost: config.listen.host, token: config.httpToken, tls: config.httpTls,
        allowUnauthenticated: config.httpAllowUnauthenticated, logger: log.child({ component: 'http' }),
      });
      http = new HttpServer(app, config.listen.host, config.listen.port);
      await http.start();
      log.info({ url: http.url, filter }, `serving /api and the timeline page read-only on ${http.url}`);
    },
    async stop() {
      await http?.stop();
      await opened?.close();
    },
  };
}

async function openFile(file: string): Promise<OpenReads> {
  const [{ openStore }, { StoreQueries }] = await Promise.all([import('./store/open-store.js'), import('./store/queries.js')]);
  const db = openStore(file, { readonly: true });
  return { reads: new StoreQueries(db), close: async () => { db.close(); } };
}

async function openCentral(dsn: string, filter: CentralFilter, log: Logger): Promise<OpenReads> {
  const [{ default: pgModule }, { connectionHint, describeConnection, pgClientConfig }, { requireCentralSchema }, { CentralReads }, { unreachableAsUnavailable }] = await Promise.all([
    import('pg'), import('./lib/pg-connection.js'), import('./central/migrate-central.js'), import('./central/central-reads.js'),
    import('./central/unreachable-reads.js'),
  ]);
  const url = conninfoToUrl(dsn);
  if (!url.ok) throw Object.assign(new Error(`--store: ${url.problem}`), { code: 'CENTRAL_DSN' });
  const config: pg.PoolConfig = {
    ...pgClientConfig(url.url, {
      application_name: 'pgvigil serve', connectionTimeoutMillis: 10_000, statement_timeout: 60_000,
      // Every session read-only, even for a role that could write.
      options: '-c default_transaction_read_only=on',
    }),
    max: 4,
  };
  const pool = new pgModule.Pool(config);
  // An idle connection the server closed (a restart) is replaced on the next request.
  pool.on('error', (err) => log.warn({ err }, 'central store connection lost'));
  try {
    const client = await pool.connect();
    try {
      await requireCentralSchema(client);
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw Object.assign(new Error(`central store ${describeConnection(config)}: ${(err as Error).message} (hint: ${connectionHint(err)})`, { cause: err }), { code: 'CENTRAL_UNREADABLE' });
  }
  return { reads: unreachableAsUnavailable(new CentralReads(pool, filter), `central store ${describeConnection(config)}`), close: () => pool.end() };
}
