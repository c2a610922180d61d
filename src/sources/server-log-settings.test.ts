import { describe, expect, it } from 'vitest';
import { logSourceSchema } from '../config/schema.js';
import { resolveLogSettings } from './server-log-settings.js';

const log = (fields: Record<string, unknown>) => logSourceSchema.parse({ path: '/var/log/postgresql', ...fields });
const server = { log_line_prefix: '%m [%p] %q%u@%d ', log_timezone: 'Europe/Paris', log_destination: 'stderr' };

describe('resolveLogSettings', () => {
  it('takes the prefix and zone from the server when the config leaves them out', () => {
    expect(resolveLogSettings(log({}), server)).toEqual({ format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'Europe/Paris', origin: 'server' });
  });

  it('lets the config win over the server', () => {
    expect(resolveLogSettings(log({ prefix: '%t [%p] ', timezone: 'UTC' }), server)).toEqual({ format: 'stderr', prefix: '%t [%p] ', timezone: 'UTC', origin: 'config' });
  });

  it('auto-detects when the server could not be asked', () => {
    expect(resolveLogSettings(log({}), {})).toEqual({ format: 'auto', prefix: null, timezone: null, origin: 'auto-detect' });
  });

  it('follows a csvlog-only server, and a .csv/.json file name', () => {
    expect(resolveLogSettings(log({}), { ...server, log_destination: 'csvlog' })).toMatchObject({ format: 'csvlog', prefix: null });
    expect(resolveLogSettings(log({ path: '/pg/log/postgresql.json' }), server)).toMatchObject({ format: 'jsonlog', prefix: null });
  });
});
