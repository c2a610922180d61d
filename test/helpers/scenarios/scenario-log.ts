/**
 * Runs a scenario while the server writes its log into files of the scenario's own: the runner
 * changes log_filename (the logging collector rotates into the new name on reload), runs the
 * scenario, then rotates away. Each file is exactly what the server wrote while the scenario ran,
 * with nothing trimmed; no server start-up noise unless the scenario restarts the server.
 *
 * Never: edit a log file. Fixtures are copies of these files byte for byte.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { LogFormat } from '../../../src/parsers/framer.js';
import type { Translator } from '../../../src/parsers/lang/translator.js';
import type { PgServer, PgVersion } from '../pg-harness.js';
import { waitUntil, type Settings, type SettingValue } from '../pg-server.js';
import { LogWatcher } from './log-watcher.js';
import type { Scenario } from './scenario.js';

export type { LogFormat };

/** File name suffix the logging collector gives each destination. */
export const FORMAT_SUFFIX: Record<LogFormat, string> = { stderr: '.log', csvlog: '.csv', jsonlog: '.json' };

const ROTATION_WAIT_MS = 15_000;

/**
 * Logging settings of the servers scenarios run on, on top of the harness defaults
 * (log_line_prefix '%m [%p] %q%u@%d ', lc_messages C, log_timezone UTC, logging_collector on).
 * One run writes all three formats of the same events.
 */
export function scenarioServerSettings(version: PgVersion): Settings {
  return {
    log_destination: version >= 15 ? 'stderr,csvlog,jsonlog' : 'stderr,csvlog', // jsonlog is new in 15
    deadlock_timeout: '100ms',
    // PG 15-18: a logical slot needs wal_level logical (a restart); PG 19 switches logical
    // decoding on by itself when the first logical slot appears (effective_wal_level), and
    // REPACK (CONCURRENTLY) shows that switch only with wal_level replica.
    wal_level: version >= 19 ? 'replica' : 'logical',
  };
}

export interface ScenarioLog {
  scenario: string;
  /** The server whose log it is. */
  server: PgServer;
  /** Host paths of the files the scenario's log went to, per format. */
  files: Partial<Record<LogFormat, string>>;
  /** Settings from the configuration while the scenario ran, minus machine-specific ones. */
  settings: Record<string, string>;
}

// Paths, ports and connection strings of this machine's temporary clusters: not part of a case.
const MACHINE_SPECIFIC_SETTINGS = new Set([
  'config_file', 'data_directory', 'hba_file', 'ident_file', 'listen_addresses', 'log_directory', 'port',
  'primary_conninfo', 'primary_slot_name', 'unix_socket_directories',
]);

export interface Servers {
  primary: PgServer;
  standby: PgServer | null;
}

/** Runs `scenario` on the server named by its logOf and returns the scenario's log files. */
export async function runScenarioInOwnLog(scenario: Scenario, servers: Servers, translator: Translator | null = null): Promise<ScenarioLog> {
  const server = scenario.logOf === 'standby' ? servers.standby : servers.primary;
  if (!server) throw new Error(`scenario ${scenario.name} logs on the standby, but none was started`);
  const settings = scenario.settings(server.version);
  await rotateInto(server, scenario.name, settings);
  const effective = await configuredSettings(server);
  const log = new LogWatcher(path.join(server.logDir, `${scenario.name}${FORMAT_SUFFIX.stderr}`), translator);
  try {
    await scenario.run({ version: server.version, ...servers, log });
  } finally {
    await rotateInto(server, `after-${scenario.name}`, {}, Object.keys(settings));
  }
  const files: Partial<Record<LogFormat, string>> = {};
  for (const [format, suffix] of Object.entries(FORMAT_SUFFIX) as [LogFormat, string][]) {
    const file = path.join(server.logDir, `${scenario.name}${suffix}`);
    if (fs.existsSync(file)) files[format] = file;
  }
  return { scenario: scenario.name, server, files, settings: effective };
}

async function configuredSettings(server: PgServer): Promise<Record<string, string>> {
  const rows = await server.query<{ name: string; value: string }>(
    "SELECT name, current_setting(name) AS value FROM pg_settings WHERE source = 'configuration file' ORDER BY name",
  );
  return Object.fromEntries(rows.filter((row) => !MACHINE_SPECIFIC_SETTINGS.has(row.name)).map((row) => [row.name, row.value]));
}

/**
 * Sets `settings` (and resets `reset`), points log_filename at `<baseName>.log` and waits until
 * the logging collector has opened it: it is signalled after the postmaster reloaded, so every
 * connection opened afterwards runs with the new settings.
 */
async function rotateInto(server: PgServer, baseName: string, settings: Settings, reset: string[] = []): Promise<void> {
  for (const name of reset) await server.query(`ALTER SYSTEM RESET ${identifier(name)}`);
  for (const [name, value] of Object.entries(settings)) {
    await server.query(`ALTER SYSTEM SET ${identifier(name)} = ${settingLiteral(value)}`);
  }
  await server.query(`ALTER SYSTEM SET log_filename = ${settingLiteral(`${baseName}.log`)}`);
  await server.query('SELECT pg_reload_conf()');
  const file = path.join(server.logDir, `${baseName}.log`);
  await waitUntil(() => fs.existsSync(file), ROTATION_WAIT_MS, `the logging collector of PG ${server.version} to open ${file}`);
}

function identifier(name: string): string {
  if (!/^[a-z_][a-z0-9_.]*$/.test(name)) throw new Error(`invalid setting name ${JSON.stringify(name)}`);
  return name;
}

function settingLiteral(value: SettingValue): string {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (typeof value === 'number') return String(value);
  return `'${value.replace(/'/g, "''")}'`;
}
