import { describe, expect, it } from 'vitest';
import { connectionHint, describeConnection } from './pg-connection.js';

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
    expect(describeConnection({ connectionString: 'postgresql:///appdb?host=%2Fvar%2Frun%2Fpostgresql&port=5433&password=s3cret' }))
      .toBe('/var/run/postgresql:5433/appdb');
    expect(describeConnection({ connectionString: 'postgresql://pgvigil:s3cret@db1:5432/postgres' })).toBe('db1:5432/postgres');
  });
});
