/**
 * CLI entry: parses arguments with commander and dispatches to a subcommand. Returns the exit
 * code (src/cli/exit-codes.ts) instead of calling process.exit, so tests can call it.
 *
 * The daemon's and check's modules (HTTP server, PostgreSQL client, config schema, rules) load
 * when their command runs: `pgvigil analyze` on a small file would otherwise spend most of its
 * time loading them.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError } from '../config/config-error.js';
import type { ConfigOverrides } from '../config/load-config.js';
import { analyzeCommand } from './analyze.js';
import { centralCommand } from './central.js';
import { demoCommand } from './demo.js';
import { reportCommand } from './report.js';
import { rulesCommand } from './rules.js';
import { serveCommand } from './serve.js';
import { EXIT } from './exit-codes.js';

interface ConfigFlags {
  config?: string;
  dsn?: string;
  log?: string;
  db?: string;
  listen?: string;
  logLevel?: string;
}

function addConfigFlags(command: Command): Command {
  return command
    .option('-c, --config <file>', 'YAML config file (env PGVIGIL_CONFIG)')
    .option('--dsn <conninfo>', 'the server: a libpq URL or "host=... port=... user=... dbname=..." (env PGVIGIL_DSN; default: PG* variables)')
    .option('--log <path>', "server log file or log_directory (env PGVIGIL_LOG; default: the server's log_directory, when readable here)")
    .option('--db <file>', 'SQLite store (env PGVIGIL_DB; default ./pgvigil.db)')
    .option('--listen <host:port>', 'HTTP address (env PGVIGIL_LISTEN; default 127.0.0.1:9899)')
    .addOption(new Option('--log-level <level>', "pgvigil's own log level (env PGVIGIL_LOG_LEVEL)").choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']));
}

async function configFrom(flags: ConfigFlags) {
  const { loadConfig } = await import('../config/load-config.js');
  const overrides: ConfigOverrides = { dsn: flags.dsn, log: flags.log, db: flags.db, listen: flags.listen, log_level: flags.logLevel };
  return loadConfig({ file: flags.config ?? null, flags: overrides });
}

export function buildCli(setExitCode: (code: number) => void): Command {
  const program = new Command('pgvigil')
    .description('PostgreSQL log and metrics analyzer: names the cause when vacuum, replication or locks go wrong')
    .version(process.env.npm_package_version ?? '0.1.0')
    .showHelpAfterError()
    .exitOverride();

  addConfigFlags(program.command('run').description('run the daemon: tail the log, poll statistics, fire rules, serve /metrics')).action(
    async (flags: ConfigFlags) => {
      const config = await configFrom(flags);
      const [{ runDaemon }, { createLogger }] = await Promise.all([import('./run.js'), import('../lib/logger.js')]);
      const terminal = process.stderr.isTTY === true;
      setExitCode(await runDaemon(config, createLogger(config.logLevel, terminal), { terminal }));
    },
  );

  addConfigFlags(program.command('check').description('validate the config and every connection, one line per aspect with a hint')).action(
    async (flags: ConfigFlags) => {
      const config = await configFrom(flags);
      const [{ runChecks }, { checkExitCode, formatCheckResults }] = await Promise.all([import('./check.js'), import('./check-results.js')]);
      const results = await runChecks(config);
      process.stdout.write(`${formatCheckResults(results)}\n`);
      setExitCode(checkExitCode(results));
    },
  );

  program.addCommand(analyzeCommand(setExitCode));
  program.addCommand(reportCommand(setExitCode));
  program.addCommand(centralCommand(setExitCode));
  program.addCommand(serveCommand(setExitCode));
  program.addCommand(rulesCommand(setExitCode));
  program.addCommand(demoCommand(setExitCode));

  return program;
}

export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.OK;
  const program = buildCli((code) => { exitCode = code; });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here with exit code 0; usage errors with 1, which we make 2.
      return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`pgvigil: ${err.message}\n`);
      return EXIT.USAGE;
    }
    process.stderr.write(`pgvigil: internal error: ${(err as Error).stack ?? String(err)}\n`);
    return EXIT.INTERNAL;
  }
}
