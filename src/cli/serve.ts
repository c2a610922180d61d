/**
 * `pgvigil serve --store <file.db | postgres://...>`: the HTTP API and the timeline page over a
 * store, read-only, with no collectors: a copied sidecar store, or the whole fleet from the
 * central PostgreSQL store (narrowed by --cluster and --target). Listening and the token come
 * from the same config, environment and checks as `pgvigil run`.
 */
import { Command, Option } from 'commander';
import { isPostgresUrl } from '../lib/conninfo.js';
import { EXIT } from './exit-codes.js';

interface ServeFlags {
  /** Default: the config's db (with -c or PGVIGIL_CONFIG). */
  store?: string;
  config?: string;
  listen?: string;
  cluster?: string;
  target?: string;
  logLevel?: string;
}

export function serveCommand(setExitCode: (code: number) => void): Command {
  return new Command('serve')
    .description('serve the HTTP API and the timeline page over a store, read-only: a SQLite store file or the central PostgreSQL store')
    .option('--store <store>', "a SQLite store file, or the central PostgreSQL store as a postgres:// URL (read-only role: docs/fleet.md); default: the config's db")
    .option('-c, --config <file>', 'YAML config file for db (the store `run` writes), listen, http_token_file and http.allow_unauthenticated (env PGVIGIL_CONFIG)')
    .option('--listen <host:port>', 'HTTP address (env PGVIGIL_LISTEN; default 127.0.0.1:9899)')
    .option('--cluster <name>', 'only the targets of this cluster (central store)')
    .option('--target <name>', 'only this target (central store)')
    .addOption(new Option('--log-level <level>', "pgvigil's own log level (env PGVIGIL_LOG_LEVEL)").choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']))
    .action(async (flags: ServeFlags) => {
      setExitCode(await runServe(flags));
    });
}

async function runServe(flags: ServeFlags): Promise<number> {
  const [{ loadConfig }, { buildServeApp }, { runUntilSignalled }, { createLogger }, { systemClock }] = await Promise.all([
    import('../config/load-config.js'), import('../serve-app.js'), import('./run.js'), import('../lib/logger.js'), import('../domain/clock.js'),
  ]);
  const configFile = flags.config ?? process.env.PGVIGIL_CONFIG ?? null;
  const config = loadConfig({ file: configFile, flags: { listen: flags.listen, log_level: flags.logLevel } });
  const store = storeToServe(flags, configFile === null ? null : config.dbPath);
  if (typeof store !== 'string') {
    process.stderr.write(`pgvigil serve: ${store.problem}\n`);
    return EXIT.USAGE;
  }
  const terminal = process.stderr.isTTY === true;
  const log = createLogger(config.logLevel, terminal);
  const filter = { cluster: flags.cluster ?? null, target: flags.target ?? null };
  return runUntilSignalled(() => buildServeApp(config, { store, filter }, { clock: systemClock, log }), log, { terminal });
}

/** The store to serve: --store, else the config's db (`configDb`, null without a config file). */
export function storeToServe(flags: Pick<ServeFlags, 'store' | 'cluster' | 'target'>, configDb: string | null): string | { problem: string } {
  const store = flags.store ?? configDb;
  if (store === null) return { problem: 'give the store: --store FILE.db|postgres://..., or -c with the config `pgvigil run` was given (its db)' };
  if (!isPostgresUrl(store) && (flags.cluster !== undefined || flags.target !== undefined)) {
    return { problem: '--cluster and --target narrow the central store: give --store postgres://...' };
  }
  return store;
}
