/**
 * How the server writes its log, read from pg_settings when the target is reachable at start-up,
 * so an operator never has to copy log_line_prefix into pgvigil's config. Settings given in the
 * config win; when the server cannot be asked, the tailer auto-detects the format and prefix.
 */
import pg from 'pg';
import type { Target } from '../config/load-config.js';
import type { LogSourceConfig } from '../config/schema.js';
import { clientConfigFor } from '../lib/pg-connection.js';
import type { LogFormat } from '../parsers/framer.js';

export interface LogSettings {
  format: LogFormat | 'auto';
  prefix: string | null;
  timezone: string | null;
  /** Where the settings came from, for the start-up log line. */
  origin: 'config' | 'server' | 'auto-detect';
}

const SETTINGS_SQL = `SELECT name, setting FROM pg_settings WHERE name IN ('log_line_prefix', 'log_timezone', 'log_destination')`;

export async function readServerLogSettings(target: Target, timeoutMs = 3_000): Promise<Record<string, string>> {
  const client = new pg.Client({ ...clientConfigFor(target), connectionTimeoutMillis: timeoutMs, statement_timeout: timeoutMs });
  try {
    await client.connect();
    const { rows } = await client.query<{ name: string; setting: string }>(SETTINGS_SQL);
    return Object.fromEntries(rows.map((r) => [r.name, r.setting]));
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Combines the configured log source with what the server reported (empty when it could not be
 * asked). Pure. The format follows the file when the config says auto and the file name tells
 * (.csv, .json); otherwise the server's first destination.
 */
export function resolveLogSettings(log: LogSourceConfig, server: Readonly<Record<string, string>>): LogSettings {
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
  const origin = log.prefix !== null || log.format !== 'auto' ? 'config' : fromServer ? 'server' : 'auto-detect';
  return { format, prefix, timezone, origin };
}
