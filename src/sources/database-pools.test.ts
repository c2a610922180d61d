import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { databaseClientConfig } from './database-pools.js';

describe('databaseClientConfig', () => {
  // What node-postgres will connect to: its own reading of the config, not ours.
  const databaseOf = (config: pg.ClientConfig) => new pg.Client(config).database;

  it.each([
    ['a dsn', 'postgres://pgvigil@db1:5432/postgres'],
    ['a config with a dsn (as the daemon passes it)', { connectionString: 'postgres://pgvigil@db1:5432/postgres', application_name: 'pgvigil' }],
    ['a config without a dsn', { host: 'db1', database: 'postgres' }],
  ])('%s connects to the database asked for, keeping the rest', (_, connection) => {
    expect(databaseOf(databaseClientConfig(connection, 'shop'))).toBe('shop');
    for (const name of ['two words', 'a:b/c?d&e+f#g', '%2F', 'ünï "q"']) expect(databaseOf(databaseClientConfig(connection, name))).toBe(name);
    expect(databaseOf(databaseClientConfig(connection, null))).toBe('postgres');
    expect(new pg.Client(databaseClientConfig(connection, 'shop')).host).toBe('db1');
  });
});
