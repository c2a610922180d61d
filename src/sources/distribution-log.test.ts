import { describe, expect, it } from 'vitest';
import { debianLogFilename } from './distribution-log.js';
import { locateServerLog } from './locate-server-log.js';
import { resolveLogSettings } from './server-log-settings.js';
import { logSourceSchema } from '../config/schema.js';

// What a Debian 15 cluster made by pg_createcluster reports (recorded from one, PG 15.20).
const DEBIAN = {
  logging_collector: 'off', cluster_name: '15/main', data_directory: '/var/lib/postgresql/15/main',
  log_directory: 'log', log_filename: 'postgresql-%Y-%m-%d_%H%M%S.log', log_destination: 'stderr', log_line_prefix: '%m [%p] %q%u@%d ',
};

describe('debianLogFilename', () => {
  it.each([
    ['cluster_name', DEBIAN, 'postgresql-15-main.log'],
    ['the data directory, cluster_name cleared', { ...DEBIAN, cluster_name: '' }, 'postgresql-15-main.log'],
    ['another cluster', { ...DEBIAN, cluster_name: '16/reports' }, 'postgresql-16-reports.log'],
    ['the logging collector on', { ...DEBIAN, logging_collector: 'on' }, null],
    ['a cluster_name of the operator\'s own, data elsewhere', { ...DEBIAN, cluster_name: 'orders', data_directory: '/srv/pg/orders' }, null],
    ['RHEL\'s layout', { ...DEBIAN, cluster_name: '', data_directory: '/var/lib/pgsql/15/data' }, null],
  ])('from %s', (_from, server, expected) => {
    expect(debianLogFilename(server)).toBe(expected);
  });

  it('is the file a directory source reads when the server has no collector; a configured pattern wins', () => {
    const directory = logSourceSchema.parse({ path: '/var/log/postgresql' });
    expect(resolveLogSettings(directory, DEBIAN, true)).toMatchObject({ logFilename: 'postgresql-15-main.log', prefix: '%m [%p] %q%u@%d ' });
    expect(resolveLogSettings({ ...directory, filename_pattern: 'pg.log' }, DEBIAN, true)).toMatchObject({ logFilename: 'pg.log' });
  });
});

describe('locateServerLog', () => {
  const readable = (paths: string[]) => (p: string) => paths.includes(p);

  it('finds Debian\'s file when no log is configured, or says why not', () => {
    expect(locateServerLog(DEBIAN, readable(['/var/log/postgresql/postgresql-15-main.log']))).toMatchObject({ source: { path: '/var/log/postgresql/postgresql-15-main.log' } });
    expect(locateServerLog(DEBIAN, readable([]))).toEqual({
      source: null,
      why: 'the server has no logging collector; Debian\'s pg_ctlcluster sends its stderr to /var/log/postgresql/postgresql-15-main.log, which pgvigil cannot read here (another host, or not in group adm)',
    });
  });

  it('reads the collector\'s directory, and says when there is nothing to go by', () => {
    const collector = { ...DEBIAN, logging_collector: 'on' };
    expect(locateServerLog(collector, readable(['/var/lib/postgresql/15/main/log']))).toMatchObject({ source: { path: '/var/lib/postgresql/15/main/log' } });
    expect(locateServerLog({ logging_collector: 'off' }, readable([]))).toEqual({ source: null, why: 'the server has no logging collector to say where it logs (logging_collector = off)' });
    expect(locateServerLog({}, readable([]))).toEqual({ source: null, why: 'the server could not be asked where it logs' });
  });
});
