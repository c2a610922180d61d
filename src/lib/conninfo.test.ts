import { parse } from 'pg-connection-string';
import { describe, expect, it } from 'vitest';
import { conninfoToUrl } from './conninfo.js';

/** What node-postgres makes of a dsn: the converted URL through the driver's own parser. */
function asDriverReadsIt(dsn: string) {
  const result = conninfoToUrl(dsn);
  if (!result.ok) throw new Error(result.problem);
  const { host, port, user, password, database, options, application_name: applicationName } = parse(result.url);
  return { host, port, user, password, database, options, applicationName };
}

function problemOf(dsn: string): string {
  const result = conninfoToUrl(dsn);
  if (result.ok) throw new Error(`accepted as ${result.url}`);
  return result.problem;
}

describe('conninfoToUrl', () => {
  it('reads the keyword/value form PostgreSQL tools print as the driver would read the same URL', () => {
    expect(asDriverReadsIt('host=db1.example.com port=5433 user=pgvigil dbname=appdb')).toEqual({
      host: 'db1.example.com', port: '5433', user: 'pgvigil', password: '', database: 'appdb', options: undefined, applicationName: undefined,
    });
  });

  it('reads quoted values, backslash escapes and spaces around "=" as libpq does', () => {
    expect(asDriverReadsIt(String.raw`dbname = 'my db'  password='it\'s a secret' options='-c statement_timeout=5s' application_name=a\ b`)).toMatchObject({
      database: 'my db', password: "it's a secret", options: '-c statement_timeout=5s', applicationName: 'a b',
    });
  });

  it('keeps a Unix socket directory as the host', () => {
    expect(asDriverReadsIt('host=/var/run/postgresql dbname=postgres')).toMatchObject({ host: '/var/run/postgresql', database: 'postgres' });
  });

  it('passes a URL through unchanged', () => {
    expect(conninfoToUrl('postgresql://pgvigil@db1:5433/appdb?sslmode=require')).toEqual({ ok: true, url: 'postgresql://pgvigil@db1:5433/appdb?sslmode=require' });
  });

  it('says what is wrong with a string that is neither form, without echoing a URL that may hold a password', () => {
    expect(problemOf('not-a-url')).toBe(
      'neither a postgresql:// URL nor keyword=value pairs (such as "host=db1 port=5432 user=pgvigil dbname=postgres"): missing "=" after "not-a-url"');
    expect(problemOf('host=db1 5432')).toMatch(/missing "=" after "5432"$/);
    expect(problemOf("host=db1 password='open")).toBe('unterminated quoted value for "password"');
    expect(problemOf('postgresql://pgvigil:s3cret@[db1/appdb')).not.toContain('s3cret');
    expect(problemOf('   ')).toMatch(/^is empty/);
  });

  it('never echoes the rest of an unquoted password that holds a space', () => {
    expect(problemOf('host=db1 password=correct horse')).toMatch(/missing "=" after the password's value \(quote a password holding spaces: password='\.\.\.'\)$/);
    expect(problemOf('host=db1 password=correct horse=battery')).toMatch(/^an unknown keyword after the password \(quote/);
    for (const text of ['host=db1 password=correct horse', 'host=db1 password=correct horse=battery']) expect(problemOf(text)).not.toContain('horse');
  });

  it('refuses libpq keywords the driver would silently ignore, with what to do instead, and unknown keywords', () => {
    expect(problemOf('service=appdb')).toBe(`"service" is not supported: node-postgres does not read pg_service.conf: write the service's host, port, user and dbname instead`);
    expect(problemOf('host=db1 passfile=/etc/pgvigil/pgpass')).toBe(`"passfile" is not supported: set PGPASSFILE in pgvigil's environment, or give the target a password_file`);
    expect(problemOf('host=db1 hots=db2')).toMatch(/^unknown keyword "hots"; pgvigil reads host, port, dbname, /);
  });
});
