import { describe, expect, it } from 'vitest';
import { logSourceSchema } from '../config/schema.js';
import { CURRENT_LOGFILE, resolveLogSettings, serverLogDirectory } from './server-log-settings.js';

const log = (fields: Record<string, unknown>) => logSourceSchema.parse({ path: '/var/log/postgresql', ...fields });
const server = { log_line_prefix: '%m [%p] %q%u@%d ', log_timezone: 'Europe/Paris', log_destination: 'stderr', log_filename: 'postgresql-%a.log' };
const DIRECTORY = true;
const FILE = false;

describe('resolveLogSettings', () => {
  it('takes the prefix, zone and a directory\'s file names from the server when the config leaves them out', () => {
    expect(resolveLogSettings(log({}), server, DIRECTORY))
      .toEqual({ format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'Europe/Paris', logFilename: 'postgresql-%a.log', origin: 'server' });
  });

  it('lets the config win over the server', () => {
    expect(resolveLogSettings(log({ prefix: '%t [%p] ', timezone: 'UTC', filename_pattern: 'pg-%H.log' }), server, DIRECTORY))
      .toEqual({ format: 'stderr', prefix: '%t [%p] ', timezone: 'UTC', logFilename: 'pg-%H.log', origin: 'config' });
  });

  it('keeps a single file a single file: the server\'s log_filename is for a directory', () => {
    expect(resolveLogSettings(log({ path: '/var/log/postgresql/postgresql-15-main.log' }), server, FILE)).toMatchObject({ logFilename: null });
  });

  it('auto-detects when the server could not be asked', () => {
    expect(resolveLogSettings(log({}), {}, DIRECTORY)).toEqual({ format: 'auto', prefix: null, timezone: null, logFilename: null, origin: 'auto-detect' });
  });

  it('follows a csvlog-only server, and a .csv/.json file name', () => {
    expect(resolveLogSettings(log({}), { ...server, log_destination: 'csvlog' }, DIRECTORY)).toMatchObject({ format: 'csvlog', prefix: null });
    expect(resolveLogSettings(log({ path: '/pg/log/postgresql.json' }), server, FILE)).toMatchObject({ format: 'jsonlog', prefix: null });
  });
});

describe('serverLogDirectory', () => {
  const collector = { logging_collector: 'on', data_directory: '/var/lib/pgsql/18/data', log_directory: 'log' };

  it('resolves a relative log_directory against data_directory (RHEL and initdb defaults)', () => {
    expect(serverLogDirectory(collector)).toBe('/var/lib/pgsql/18/data/log');
  });

  it('keeps an absolute log_directory', () => {
    expect(serverLogDirectory({ ...collector, log_directory: '/var/log/postgresql' })).toBe('/var/log/postgresql');
  });

  it('prefers the directory of the file the collector writes now', () => {
    expect(serverLogDirectory({ ...collector, [CURRENT_LOGFILE]: 'pg_log/postgresql-Tue.log' })).toBe('/var/lib/pgsql/18/data/pg_log');
  });

  it('says nothing without a logging collector, or when a relative directory has no data_directory to resolve against', () => {
    expect(serverLogDirectory({ ...collector, logging_collector: 'off' })).toBeNull();
    expect(serverLogDirectory({ logging_collector: 'on', log_directory: 'log' })).toBeNull();
  });
});
