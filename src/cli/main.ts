/**
 * CLI entry: parses arguments with commander and dispatches to a subcommand. Returns the exit
 * code (src/cli/exit-codes.ts) instead of calling process.exit, so tests can call it.
 *
 * Each command's module loads only when that command runs (all of them for help and for a name
 * that is not a command, so help and usage errors list every one), and the daemon's and check's
 * modules (HTTP server, PostgreSQL client, config schema, rules) when their action runs:
 * `pgvigil analyze` on a small file would otherwise spend most of its time loading them.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { durationTextToMs } from '../config/duration.js';
import type { Config, ConfigOverrides } from '../config/load-config.js';
import type { CheckResult } from './check-results.js';
import { EXIT } from './exit-codes.js';

type CommandFactory = (setExitCode: (code: number) => void) => Command;

/** The commands defined in their own modules, in the order help lists them (after run and check). */
const COMMAND_MODULES: Record<string, () => Promise<CommandFactory>> = {
  analyze: async () => (await import('./analyze.js')).analyzeCommand,
  report: async () => (await import('./report.js')).reportCommand,
  central: async () => (await import('./central.js')).centralCommand,
  serve: async () => (await import('./serve.js')).serveCommand,
  rules: async () => (await import('./rules.js')).rulesCommand,
  demo: async () => (await import('./demo.js')).demoCommand,
};

/** The command modules `argv` needs: only the named command's; every one for help or an unknown name. */
async function commandFactories(argv: readonly string[]): Promise<CommandFactory[]> {
  const named = argv[0];
  if (named === 'run' || named === 'check' || named === 'notify' || named === 'silence') return [];
  const names = named !== undefined && Object.hasOwn(COMMAND_MODULES, named) ? [named] : Object.keys(COMMAND_MODULES);
  return Promise.all(names.map((name) => COMMAND_MODULES[name]!()));
}

interface ConfigFlags {
  config?: string;
  name?: string;
  dsn?: string;
  log?: string;
  logPattern?: string;
  db?: string;
  listen?: string;
  logLevel?: string;
}

function addConfigFlags(command: Command): Command {
  return command
    .option('-c, --config <file>', 'YAML config file (env PGVIGIL_CONFIG)')
    .option('--name <name>', "the server's name in alerts, notifications and series (env PGVIGIL_NAME; default: the dsn's host-port, this machine's name for a local server)")
    .option('--dsn <conninfo>', 'the server: a libpq URL or "host=... port=... user=... dbname=..." (env PGVIGIL_DSN; default: PG* variables)')
    .option('--log <path>', "server log file or log_directory (env PGVIGIL_LOG; default: the server's log_directory, when readable here)")
    .option('--log-pattern <pattern>', "with a log_directory: the file names to read, as the server's log_filename (strftime escapes), e.g. postgresql-16-main.log (env PGVIGIL_LOG_PATTERN)")
    .option('--db <file>', 'SQLite store (env PGVIGIL_DB; default ./pgvigil.db)')
    .option('--listen <host:port>', 'HTTP address (env PGVIGIL_LISTEN; default 127.0.0.1:9899)')
    .addOption(new Option('--log-level <level>', "pgvigil's own log level (env PGVIGIL_LOG_LEVEL)").choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']));
}

async function configFrom(flags: ConfigFlags) {
  const { loadConfig } = await import('../config/load-config.js');
  const overrides: ConfigOverrides = { name: flags.name, dsn: flags.dsn, log: flags.log, log_pattern: flags.logPattern, db: flags.db, listen: flags.listen, log_level: flags.logLevel };
  return loadConfig({ file: flags.config ?? null, flags: overrides });
}

/**
 * An added command does not inherit the program's exitOverride (only `.command()` children do):
 * without it a usage error of `analyze` or `report` exits 1, not 2, through commander's own exit.
 */
function withExitOverride(command: Command): Command {
  command.exitOverride();
  for (const sub of command.commands) withExitOverride(sub);
  return command;
}

/** The CLI for `argv` (the arguments after `pgvigil`), with the command modules it needs. */
export async function buildCli(argv: readonly string[], setExitCode: (code: number) => void): Promise<Command> {
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

  addConfigFlags(program.command('check').description('validate the config and every connection, one line per aspect with a hint'))
    .option('--notify', 'also send a test alert, triggered then resolved, through every configured notifier (as pgvigil notify test)')
    .action(async (flags: ConfigFlags & { notify?: boolean }) => {
      const config = await configFrom(flags);
      const [{ runChecks }, { checkExitCode, formatCheckResults }] = await Promise.all([import('./check.js'), import('./check-results.js')]);
      const results = [...await runChecks(config), ...(flags.notify ? await notifyTest(config) : [])];
      process.stdout.write(`${formatCheckResults(results)}\n`);
      setExitCode(checkExitCode(results));
    });

  const notify = program.command('notify').description('the notifiers of the config');
  addConfigFlags(notify.command('test').description('send a test alert, triggered then resolved, through every configured notifier and print each answer')).action(
    async (flags: ConfigFlags) => {
      const config = await configFrom(flags);
      const { checkExitCode, formatCheckResults } = await import('./check-results.js');
      const results = await notifyTest(config);
      process.stdout.write(results.length === 0
        ? 'no notifier is configured (notify.pagerduty, notify.alertmanager, notify.webhooks)\n'
        : `${formatCheckResults(results)}\n`);
      setExitCode(results.length === 0 ? EXIT.FAILURE : checkExitCode(results));
    },
  );

  const silence = program.command('silence').description('maintenance windows: alerts of a target (or one rule) are recorded and shown, not delivered');
  const io = { stdout: (t: string) => process.stdout.write(t), stderr: (t: string) => process.stderr.write(t) };
  addConfigFlags(silence.command('add').description('silence a target, or one rule on it, from now for a while'))
    .requiredOption('--target <name>', 'the target, as named in the config (--name)')
    .option('--rule <id>', 'only this rule (default: every rule of the target)')
    .requiredOption('--for <duration>', 'how long: 30m, 2h, 1d (at most 30 days)', durationArgument)
    .requiredOption('--comment <text>', 'why, for whoever reads the page or the report')
    .action(async (flags: ConfigFlags & { target: string; rule?: string; for: number; comment: string }) => {
      const { silenceAdd } = await import('./silence.js');
      setExitCode(silenceAdd(await configFrom(flags), flags, Date.now(), io));
    });
  addConfigFlags(silence.command('list').description('silences in force, to come, and ended in the last day')).action(async (flags: ConfigFlags) => {
    const { silenceList } = await import('./silence.js');
    setExitCode(silenceList(await configFrom(flags), Date.now(), io));
  });
  addConfigFlags(silence.command('expire').description('end a silence now').argument('<id>', 'its number, as list shows it', (text: string) => {
    const id = Number(text.replace(/^#/, ''));
    if (!Number.isSafeInteger(id) || id < 1) throw new InvalidArgumentError('a silence number such as 3');
    return id;
  })).action(async (id: number, flags: ConfigFlags) => {
    const { silenceExpire } = await import('./silence.js');
    setExitCode(silenceExpire(await configFrom(flags), id, Date.now(), io));
  });

  for (const factory of await commandFactories(argv)) program.addCommand(withExitOverride(factory(setExitCode)));

  return program;
}

/** `--for 2h`: a duration with its unit (config/duration.ts), at most 30 days. */
function durationArgument(text: string): number {
  const ms = durationTextToMs(text);
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0 || ms > 30 * 86_400_000) {
    throw new InvalidArgumentError('a duration such as 30m, 2h or 1d, up to 30 days');
  }
  return ms;
}

async function notifyTest(config: Config): Promise<CheckResult[]> {
  const [{ buildNotifiers }, { sendTestNotifications }, { systemClock }] = await Promise.all([
    import('../notify/build-notifiers.js'), import('../notify/test-notification.js'), import('../domain/clock.js'),
  ]);
  return sendTestNotifications(buildNotifiers(config), config.targets[0]!.name, systemClock);
}

/** Set when writing stdout failed other than by its reader going away (guardStdout). */
let stdoutFailed = false;
let stdoutGuarded = false;

/**
 * A reader of stdout that goes away (`pgvigil report ... | head`) ends the output, not the
 * command with a stack trace; any other failure to write it is said on stderr and fails the run.
 */
function guardStdout(): void {
  if (stdoutGuarded) return;
  stdoutGuarded = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') return;
    if (!stdoutFailed) process.stderr.write(`pgvigil: writing to stdout failed: ${err.message}\n`);
    stdoutFailed = true;
  });
}

export async function main(argv: string[]): Promise<number> {
  let exitCode: number = EXIT.OK;
  guardStdout();
  try {
    const program = await buildCli(argv, (code) => { exitCode = code; });
    await program.parseAsync(argv, { from: 'user' });
    return stdoutFailed && exitCode === EXIT.OK ? EXIT.FAILURE : exitCode;
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
