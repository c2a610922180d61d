/**
 * One real PostgreSQL cluster in a temporary directory: initdb, configuration, start/stop through
 * pg_ctl as an unprivileged user, logs, SQL. Knows nothing of replication (pg-standby.ts does).
 * Used by `pgvigil demo` and by the tests (test/helpers/pg-harness.ts).
 *
 * Layout of a cluster's temporary directory (host paths):
 *   <base>/data          PGDATA, 0700, owned by the server's user
 *   <base>/log           log_directory, written by the logging collector with log_file_mode 0644
 *   <base>/startup.log   pg_ctl -l: what the postmaster says before the logging collector takes over
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { PgInstall, PgVersion } from './pg-install.js';
import { childPids, delay, freePort, isAlive, pidExists, runCommand, sleepSync, waitUntil } from './processes.js';

export { freePort, waitUntil } from './processes.js';

export type SettingValue = string | number | boolean;
export type Settings = Record<string, SettingValue>;

export interface PgServer {
  readonly version: PgVersion;
  readonly host: string;
  readonly port: number;
  /** Host path of PGDATA. */
  readonly dataDir: string;
  /** Host path of log_directory (logging_collector = on by default). */
  readonly logDir: string;
  /** Current log files in logDir, oldest first (by name: the default log_filename sorts by time). */
  logFiles(): string[];
  /** postgres://... for the superuser `postgres` (trust auth on loopback). */
  dsn(database?: string): string;
  /** Runs one statement on a short-lived connection and returns its rows. */
  query<T = Record<string, unknown>>(sql: string, params?: unknown[], database?: string): Promise<T[]>;
  /** First line of any log file matching pattern; rejects after the deadline with the log's tail. */
  waitForLog(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Signals the postmaster, or the given pid (e.g. a backend); after SIGKILL, waits until it is gone. */
  kill(signal: NodeJS.Signals, pid?: number): Promise<void>;
  /** Stops the server and removes its temporary directory; idempotent. */
  destroy(): Promise<void>;
}

export const SUPERUSER = 'postgres';
const HOST = '127.0.0.1';
const PG_CTL_TIMEOUT_SECONDS = 60;
const POLL_INTERVAL_MS = 100;
const DEFAULT_LOG_WAIT_MS = 15_000;
const LOG_TAIL_LINES = 30;
const LEFTOVER_STOP_WAIT_MS = 5_000;
const KILL_WAIT_MS = 10_000;

/** Defaults that make logs useful and clusters fast; the test's own settings are written after them. */
export function defaultSettings(port: number, logDirForServer: string): Settings {
  return {
    listen_addresses: HOST,
    port,
    unix_socket_directories: '',
    logging_collector: true,
    log_directory: logDirForServer,
    log_file_mode: '0644',
    log_line_prefix: '%m [%p] %q%u@%d ',
    lc_messages: 'C',
    timezone: 'UTC',
    log_timezone: 'UTC',
    fsync: false,
    wal_level: 'replica',
    max_wal_senders: 10,
    max_replication_slots: 10,
  };
}

const PG_HBA = [
  'local all all trust',
  'host all all 127.0.0.1/32 trust',
  'host all all ::1/128 trust',
  'host replication all 127.0.0.1/32 trust',
  'host replication all ::1/128 trust',
  '',
].join('\n');

const liveClusters = new Set<Cluster>();

/**
 * A new running cluster: initdb, defaultSettings, then `settings` (so they win), start. Nothing is
 * left behind when a step fails.
 */
export async function startNewCluster(install: PgInstall, name: string, settings: Settings, options: { fromTemplate?: boolean } = {}): Promise<Cluster> {
  const cluster = await Cluster.create(install, name);
  try {
    if (options.fromTemplate) await cluster.copyDataDir(await initdbTemplate(install));
    else await cluster.initdb();
    cluster.appendSettings('pgvigil defaults', defaultSettings(cluster.port, cluster.serverPath(cluster.logDir)));
    cluster.appendSettings('settings chosen by the caller', settings);
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
function initdbOptions(version: PgVersion): string[] {
  // PG 14+: --no-instructions.
  return ['-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync', ...(version >= 14 ? ['--no-instructions'] : [])];
}

const templates = new Map<string, Promise<string>>();

/**
 * A data directory that initdb made once for this installation, which test clusters copy instead
 * of running initdb each: initdb takes about 1 s of CPU here against 0.15 s for the copy, and a
 * test suite starts dozens of clusters. It stays under tmpRoot for later runs, named after the
 * initdb command and options; it is made in a directory of its own and renamed into place, so a
 * test process beside this one sees a whole template or none.
 */
function initdbTemplate(install: PgInstall): Promise<string> {
  const made = JSON.stringify([install.command('initdb', initdbOptions(install.version)), PG_HBA]);
  const dir = path.join(install.tmpRoot, `pgvigil-initdb-pg${install.version}-${createHash('sha256').update(made).digest('hex').slice(0, 12)}`);
  let template = templates.get(dir);
  if (template === undefined) {
    template = makeTemplate(install, dir);
    templates.set(dir, template);
  }
  return template;
}

async function makeTemplate(install: PgInstall, dir: string): Promise<string> {
  const whole = (): boolean => fs.existsSync(path.join(dir, 'PG_VERSION'));
  if (whole()) return dir;
  const scratch = await Cluster.create(install, 'initdb-template');
  try {
    await scratch.initdb();
    try {
      fs.renameSync(scratch.dataDir, dir);
    } catch (error) {
      // Another test process renamed its own first: use that one.
      if (!whole()) throw error;
    }
  } finally {
    await scratch.destroy();
  }
  return dir;
}

let safetyNetInstalled = false;
let signalsOwnedByCaller = false;

/**
 * For a program that handles SIGINT/SIGTERM itself and destroys (or keeps) its clusters there:
 * the signal part of the safety net then stays out of the way; the 'exit' part remains.
 */
export function leaveSignalsToCaller(): void {
  signalsOwnedByCaller = true;
}

export class Cluster implements PgServer {
  readonly host = HOST;
  readonly dataDir: string;
  readonly logDir: string;
  private destroyed = false;
  private readonly destroyHooks: Array<() => Promise<void>> = [];

  private constructor(
    readonly install: PgInstall,
    readonly baseDir: string,
    readonly port: number,
  ) {
    this.dataDir = path.join(baseDir, 'data');
    this.logDir = path.join(baseDir, 'log');
    liveClusters.add(this);
    installSafetyNet();
  }

  get version(): PgVersion {
    return this.install.version;
  }

  /** Makes the temporary directory (data dir left empty for initdb or a base backup to fill). */
  static async create(install: PgInstall, name: string): Promise<Cluster> {
    const port = await freePort();
    const label = name.replace(/[^A-Za-z0-9-]+/g, '-');
    const baseDir = fs.mkdtempSync(path.join(install.tmpRoot, `pgvigil-pg${install.version}-${label}-`));
    const cluster = new Cluster(install, baseDir, port);
    fs.chmodSync(baseDir, 0o755);
    fs.mkdirSync(cluster.dataDir, { mode: 0o700 });
    fs.mkdirSync(cluster.logDir, { mode: 0o755 });
    for (const dir of [baseDir, cluster.dataDir, cluster.logDir]) chownTo(dir, install.owner);
    return cluster;
  }

  async initdb(): Promise<void> {
    await this.run('initdb', ['-D', this.serverPath(this.dataDir), ...initdbOptions(this.install.version)]);
    this.writeOwned(path.join(this.dataDir, 'pg_hba.conf'), PG_HBA);
  }

  /** Fills the empty data directory with a copy of `template` (an initdb'd one), owners and modes kept. */
  async copyDataDir(template: string): Promise<void> {
    await runCommand({ file: 'cp', args: ['-a', `${template}/.`, this.dataDir] });
  }

  /** Appends settings to postgresql.conf; later lines win, so callers append defaults first. */
  appendSettings(comment: string, settings: Settings): void {
    const lines = Object.entries(settings).map(([key, value]) => `${checkSettingName(key)} = ${formatSetting(value)}`);
    fs.appendFileSync(path.join(this.dataDir, 'postgresql.conf'), `\n# ${comment}\n${lines.join('\n')}\n`);
  }

  serverPath(hostPath: string): string {
    return this.install.serverPath(hostPath);
  }

  writeOwned(file: string, content: string): void {
    fs.writeFileSync(file, content, { mode: 0o600 });
    chownTo(file, this.install.owner);
  }

  logFiles(): string[] {
    if (!fs.existsSync(this.logDir)) return [];
    return fs
      .readdirSync(this.logDir, { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort()
      .map((file) => path.join(this.logDir, file));
  }

  dsn(database = 'postgres'): string {
    return `postgres://${SUPERUSER}@${this.host}:${this.port}/${encodeURIComponent(database)}`;
  }

  async query<T = Record<string, unknown>>(sql: string, params: unknown[] = [], database = 'postgres'): Promise<T[]> {
    const client = new pg.Client({ host: this.host, port: this.port, user: SUPERUSER, database });
    // A server killed under the client emits 'error' on an idle client; the failing query already
    // rejects with it, so the event must not also crash the test process.
    client.on('error', () => undefined);
    await client.connect();
    try {
      const result = await client.query(sql, params);
      return result.rows as T[];
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async waitForLog(pattern: RegExp, timeoutMs = DEFAULT_LOG_WAIT_MS): Promise<string> {
    // A /g or /y pattern keeps lastIndex between test() calls and would skip matches.
    const matcher = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (const file of this.logFiles()) {
        const line = readLines(file).find((candidate) => matcher.test(candidate));
        if (line !== undefined) return line;
      }
      if (Date.now() >= deadline) {
        throw new Error(`no log line of PG ${this.version} on port ${this.port} matched ${pattern} within ${timeoutMs} ms\n${this.logTail()}`);
      }
      await delay(POLL_INTERVAL_MS);
    }
  }

  async start(): Promise<void> {
    if (this.destroyed) throw new Error(`PG ${this.version} cluster ${this.baseDir} was destroyed`);
    try {
      await this.run('pg_ctl', [
        'start', '-w', '-s',
        '-t', String(PG_CTL_TIMEOUT_SECONDS),
        '-D', this.serverPath(this.dataDir),
        '-l', this.serverPath(path.join(this.baseDir, 'startup.log')),
      ]);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${this.logTail()}`, { cause: error });
    }
  }

  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    if (this.postmasterPid() === undefined) return;
    await this.run('pg_ctl', ['stop', '-w', '-s', '-m', mode, '-t', String(PG_CTL_TIMEOUT_SECONDS), '-D', this.serverPath(this.dataDir)]);
  }

  async restart(): Promise<void> {
    await this.stop('fast');
    await this.start();
  }

  async kill(signal: NodeJS.Signals, pid?: number): Promise<void> {
    const target = pid ?? this.postmasterPid();
    if (target === undefined) throw new Error(`PG ${this.version} on port ${this.port} is not running: nothing to ${signal}`);
    // A SIGKILLed postmaster leaves its children running until they notice; a start() before they
    // are gone fails on the shared memory they still hold. Until it is reaped (by init: pg_ctl
    // detached it), the postmaster's pid still answers kill(pid, 0), and a new postmaster takes
    // postmaster.pid for a live server. So wait until every pid is gone, zombies included.
    const doomed = signal === 'SIGKILL' ? [target, ...childPids(target)] : [];
    process.kill(target, signal);
    await waitUntil(() => doomed.every((doomedPid) => !pidExists(doomedPid)), KILL_WAIT_MS, `pids ${doomed.join(', ')} to be gone after SIGKILL`);
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    try {
      await this.stop('fast');
    } catch {
      // A cluster that will not stop cleanly is being thrown away anyway: force it.
      this.forceStop();
    }
    this.destroyed = true;
    liveClusters.delete(this);
    fs.rmSync(this.baseDir, { recursive: true, force: true });
    for (const hook of this.destroyHooks) await hook();
  }

  /** Stops the server and forgets it, leaving its directory (data and logs) to look at; idempotent. */
  async stopAndKeep(): Promise<void> {
    if (this.destroyed) return;
    await this.stop('fast');
    this.destroyed = true;
    liveClusters.delete(this);
  }

  /** Runs after destroy() removed the cluster (e.g. a standby dropping its slot on the primary). */
  onDestroy(hook: () => Promise<void>): void {
    this.destroyHooks.push(hook);
  }

  /** Synchronous immediate shutdown for the exit safety net. */
  forceStop(): void {
    const pid = this.postmasterPid();
    if (pid !== undefined) process.kill(pid, 'SIGQUIT');
  }

  /** The running postmaster's pid from postmaster.pid, or undefined when none runs. */
  postmasterPid(): number | undefined {
    let content: string;
    try {
      content = fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8');
    } catch {
      return undefined;
    }
    const pid = Number(content.split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined;
  }

  private logTail(): string {
    const files = [path.join(this.baseDir, 'startup.log'), ...this.logFiles().slice(-1)];
    return files
      .filter((file) => fs.existsSync(file))
      .map((file) => `--- tail of ${file}\n${readLines(file).slice(-LOG_TAIL_LINES).join('\n')}`)
      .join('\n');
  }

  private run(program: string, args: string[]): Promise<string> {
    return runCommand(this.install.command(program, args));
  }
}

function installSafetyNet(): void {
  if (safetyNetInstalled) return;
  safetyNetInstalled = true;
  process.on('exit', stopLeftoverClusters);
  // Vitest ends its fork workers with SIGTERM (and Ctrl-C sends SIGINT), where 'exit' never fires.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = (): void => {
      if (signalsOwnedByCaller) return;
      stopLeftoverClusters();
      process.off(signal, onSignal);
      // Alone, we replaced the default action (terminate): restore and re-raise it.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

/**
 * Immediate shutdown of servers a test forgot (or could not) destroy, then removal of their
 * directories. Synchronous, as 'exit' handlers must be.
 */
function stopLeftoverClusters(): void {
  for (const cluster of liveClusters) {
    try {
      cluster.forceStop();
      const deadline = Date.now() + LEFTOVER_STOP_WAIT_MS;
      while (cluster.postmasterPid() !== undefined && Date.now() < deadline) sleepSync(POLL_INTERVAL_MS);
      if (cluster.postmasterPid() === undefined) fs.rmSync(cluster.baseDir, { recursive: true, force: true });
    } catch {
      // Nothing more can be done while exiting; the next cluster may still be stopped.
    }
  }
  liveClusters.clear();
}

function checkSettingName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_.]*$/.test(name)) throw new Error(`invalid PostgreSQL setting name ${JSON.stringify(name)}`);
  return name;
}

function formatSetting(value: SettingValue): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'number') return String(value);
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export function chownTo(file: string, owner: { uid: number; gid: number }): void {
  if (process.getuid?.() === 0) fs.lchownSync(file, owner.uid, owner.gid);
}

function readLines(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n');
  } catch {
    return []; // rotated away between listing and reading
  }
}
