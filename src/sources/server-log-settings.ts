/**
 * How and where the server writes its log, read from pg_settings when the target is reachable at
 * start-up, so an operator never has to copy log_line_prefix or log_filename into pgvigil's config,
 * and on the database host may leave the log out altogether. Settings given in the config win;
 * when the server cannot be asked, the tailer auto-detects the format and prefix.
 */
import path from 'node:path';
import pg from 'pg';
import type { Target } from '../config/load-config.js';
import type { LogSourceConfig } from '../config/schema.js';
import { POLL_LOCK_TIMEOUT_MS } from '../collectors/collector.js';
import { clientConfigFor } from '../lib/pg-connection.js';
import type { LogFormat } from '../parsers/framer.js';
import { debianLogFilename } from './distribution-log.js';
import { LOCALE_DIR_SETTING, readLocaleDir } from './server-language.js';

export interface LogSettings {
  format: LogFormat | 'auto';
  prefix: string | null;
  timezone: string | null;
  /** log_filename for a log directory (config, else the server's); null for a single file. */
  logFilename: string | null;
  /** Where the settings came from, for the start-up log line. */
  origin: 'config' | 'server' | 'auto-detect';
}

// data_directory needs pg_read_all_settings (in pg_monitor); without it the row is simply absent.
const SETTINGS_SQL = `SELECT name, setting FROM pg_settings WHERE name IN ('log_line_prefix', 'log_timezone', 'log_destination',
  'logging_collector', 'log_directory', 'log_filename', 'data_directory', 'lc_messages', 'server_version_num', 'cluster_name')`;

/** The pseudo-setting under which the file the collector writes now (pg_current_logfile()) is kept. */
export const CURRENT_LOGFILE = 'pg_current_logfile';

export async function readServerLogSettings(target: Target, timeoutMs = 3_000): Promise<Record<string, string>> {
  // The poller's lock_timeout too: a start-up read must not queue behind a DDL any more than a poll.
  const client = new pg.Client({ ...clientConfigFor(target), connectionTimeoutMillis: timeoutMs, statement_timeout: timeoutMs, lock_timeout: POLL_LOCK_TIMEOUT_MS });
  // A server shutting down between two of these queries sends FATAL 57P01 to an idle client, an
  // 'error' event that ended the whole process without a listener; the next query rejects with it
  // instead, and the caller says why the settings could not be read.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string; setting: string }>(SETTINGS_SQL);
    const settings: Record<string, string> = Object.fromEntries(rows.map((r) => [r.name, r.setting]));
    // PG 17+: pg_monitor may call it; before, only superusers (or a GRANT EXECUTE). Without it the
    // settings above locate the directory as well.
    const current = await client.query<{ file: string | null }>('SELECT pg_current_logfile() AS file').catch(() => null);
    const file = current?.rows[0]?.file;
    if (file) settings[CURRENT_LOGFILE] = file;
    const localeDir = await readLocaleDir(client);
    if (localeDir !== null) settings[LOCALE_DIR_SETTING] = localeDir;
    return settings;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The log directory the server's logging collector writes to, as an absolute path, or null when
 * the server does not say (no collector: stderr goes wherever the service manager sends it).
 * Pure; whether the directory is on this host is for the caller to find out.
 */
export function serverLogDirectory(server: Readonly<Record<string, string>>): string | null {
  if (server.logging_collector !== 'on') return null;
  const dataDirectory = server.data_directory;
  const current = server[CURRENT_LOGFILE];
  // Both are relative to the data directory unless absolute.
  const located = (file: string): string | null =>
    path.isAbsolute(file) ? file : dataDirectory ? path.resolve(dataDirectory, file) : null;
  if (current) return located(path.dirname(current));
  return server.log_directory ? located(server.log_directory) : null;
}

/**
 * Combines the configured log source with what the server reported (empty when it could not be
 * asked). Pure. The format follows the file when the config says auto and the file name tells
 * (.csv, .json); otherwise the server's first destination.
 */
export function resolveLogSettings(log: LogSourceConfig, server: Readonly<Record<string, string>>, sourceIsDirectory: boolean): LogSettings {
  const fromServer = Object.keys(server).length > 0;
  let format: LogSettings['format'] = log.format;
  if (format === 'auto') {
    if (/\.csv$/.test(log.path)) format = 'csvlog';
    else if (/\.json$/.test(log.path)) format = 'jsonlog';
    else if (fromServer) {
      const destinations = (server.log_destination ?? 'stderr').split(',').map((d) => d.trim());
      // A log directory holding several destinations' files is read as stderr, the richest prefix source.
      format = destinations.includes('stderr') ? 'stderr' : destinations.includes('csvlog') ? 'csvlog' : destinations.includes('jsonlog') ? 'jsonlog' : 'auto';
    }
  }
  const prefix = log.prefix ?? (format === 'stderr' ? server.log_line_prefix ?? null : null);
  const timezone = log.timezone ?? server.log_timezone ?? null;
  // A log_filename makes the tailer read a directory: the server's applies only to one. Without
  // a logging collector the server's log_filename names nothing: Debian's file is named for its cluster.
  const logFilename = log.filename_pattern ?? (sourceIsDirectory ? debianLogFilename(server) ?? server.log_filename ?? null : null);
  const origin = log.prefix !== null || log.format !== 'auto' ? 'config' : fromServer ? 'server' : 'auto-detect';
  return { format, prefix, timezone, logFilename, origin };
}
