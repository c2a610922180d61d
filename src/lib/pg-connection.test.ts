import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { connectionHint, describeConnection, pgClientConfig, PINNED_SEARCH_PATH_OPTION } from './pg-connection.js';

// The messages are PostgreSQL's own (src/backend/libpq/auth.c, utils/init/postinit.c); the live
// cases (missing role, no LOGIN, wrong password, no pg_hba.conf line) are in
// test/integration/first-use-pg18.test.ts against a real server.
const refused = (code: string, message: string) => connectionHint(Object.assign(new Error(message), { code }));

describe('connectionHint', () => {
  it('quotes a role name that needs quoting in the statement it suggests', () => {
    expect(refused('28000', 'role "Monitor" does not exist')).toBe(
      'the role does not exist: create it as a superuser, CREATE ROLE "Monitor" LOGIN; GRANT pg_monitor TO "Monitor"; (or connect as an existing role: user= in the dsn, PGUSER).');
  });

  it('tells peer and ident failures from pg_hba.conf ones', () => {
    expect(refused('28000', 'Peer authentication failed for user "pgvigil"')).toMatch(/^peer\/ident authentication compares the operating-system user/);
    expect(refused('28000', 'pg_hba.conf rejects connection for host "10.0.0.5", user "pgvigil", database "postgres", no encryption'))
      .toMatch(/^pg_hba.conf has no line that lets role pgvigil in from 10.0.0.5 to database postgres \(or a line rejects it\)/);
  });

  it('falls back to the server log for a refusal it does not know', () => {
    expect(refused('28000', 'something new')).toBe('the server refused the connection: its log says why (pg_hba.conf, role attributes such as LOGIN).');
  });
});

describe('describeConnection', () => {
  it('names host, port and database of a URL made from keyword/value pairs, never the password', () => {
    expect(describeConnection(pgClientConfig('postgresql:///appdb?host=%2Fvar%2Frun%2Fpostgresql&port=5433&password=s3cret')))
      .toBe('/var/run/postgresql:5433/appdb');
    expect(describeConnection(pgClientConfig('postgresql://pgvigil:s3cret@db1:5432/postgres'))).toBe('db1:5432/postgres');
  });
});

describe('pgClientConfig', () => {
  // What node-postgres will connect with: its own reading of the config, not ours.
  const read = (config: pg.ClientConfig) => new pg.Client(config) as unknown as { password: string | null; database: string; user: string; host: string; port: number; connectionParameters: { options: string | undefined } };

  it('the password (password_file) wins over a dsn without one', () => {
    expect(read(pgClientConfig('postgresql://pgvigil@db1/postgres', { password: 'from-file' })).password).toBe('from-file');
    expect(read(pgClientConfig('postgresql://pgvigil:in-dsn@db1/postgres', { password: 'from-file' })).password).toBe('from-file');
    expect(read(pgClientConfig('postgresql://pgvigil:in-dsn@db1/postgres')).password).toBe('in-dsn');
  });

  it('a database field wins over the dsn\'s, whatever characters its name holds', () => {
    for (const name of ['a:b', 'c/d', 'e&f', 'g+h', 'i?j', 'k#l', '50%', 'sp ace', 'quo"te', 'ünï']) {
      expect(read(pgClientConfig('postgresql://pgvigil@db1/postgres', { database: name })).database).toBe(name);
      expect(read(pgClientConfig(`postgresql://pgvigil@db1/${encodeURIComponent(name)}`)).database).toBe(name);
    }
  });

  it('keeps what the dsn says that the fields do not', () => {
    const client = read(pgClientConfig('postgresql:///appdb?host=%2Fvar%2Frun%2Fpostgresql&port=5433&user=mon', { application_name: 'pgvigil' }));
    expect([client.host, client.port, client.user, client.database]).toEqual(['/var/run/postgresql', 5433, 'mon', 'appdb']);
  });

  it('pins search_path after the dsn\'s own options and pgvigil\'s, so it wins', () => {
    expect(read(pgClientConfig('postgresql://db1/postgres')).connectionParameters.options).toBe(PINNED_SEARCH_PATH_OPTION);
    const options = read(pgClientConfig(`postgresql://db1/postgres?options=${encodeURIComponent('-c work_mem=64MB -c search_path=evil')}`,
      { options: '-c default_transaction_read_only=on' })).connectionParameters.options;
    expect(options).toBe(`-c work_mem=64MB -c search_path=evil -c default_transaction_read_only=on ${PINNED_SEARCH_PATH_OPTION}`);
    expect(read(pgClientConfig(null)).connectionParameters.options).toBe(PINNED_SEARCH_PATH_OPTION);
  });
});
