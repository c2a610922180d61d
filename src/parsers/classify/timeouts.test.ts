import { describe, expect, it } from 'vitest';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 03:31:10.010 UTC [60001] app@shop ';

describe('timeouts (§3.1)', () => {
  it('reads the §3.1 lock timeout: session fields, no lock before 19', () => {
    const text = [
      `${AT}ERROR:  canceling statement due to lock timeout`,
      `${AT}CONTEXT:  while updating tuple (12,7) in relation "orders"`,
      `${AT}STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'lock_timeout')).toEqual({
      pid: 60001,
      database: 'shop',
      user: 'app',
      statement: "UPDATE orders SET status = 'paid' WHERE id = 42;",
      lock_mode: null,
      lock_object: null,
      context: 'while updating tuple (12,7) in relation "orders"',
    });
  });

  it('reads what a PG 19 lock timeout waited for (§9.5 / §13.1)', () => {
    const text = [
      '2026-10-14 08:00:39.000 UTC [71000] dba@shop ERROR:  canceling statement due to lock timeout',
      '2026-10-14 08:00:39.000 UTC [71000] dba@shop CONTEXT:  waiting for AccessExclusiveLock on relation 16402 of database 16384',
      '2026-10-14 08:00:39.000 UTC [71000] dba@shop STATEMENT:  REPACK (CONCURRENTLY) orders;',
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'lock_timeout')).toMatchObject({
      pid: 71000,
      statement: 'REPACK (CONCURRENTLY) orders;',
      lock_mode: 'AccessExclusiveLock',
      lock_object: { type: 'relation', relation_oid: 16402, database_oid: 16384 },
    });
  });

  it('keeps the CONTEXT of a statement_timeout: where inside a function it ran', () => {
    const text = [
      `${AT}ERROR:  canceling statement due to statement timeout`,
      `${AT}CONTEXT:  SQL statement "SELECT pg_sleep(5)"`,
      '\tPL/pgSQL function pgvigil_slow() line 1 at PERFORM',
      `${AT}STATEMENT:  SELECT pgvigil_slow()`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'statement_timeout')).toEqual({
      pid: 60001, database: 'shop', user: 'app', statement: 'SELECT pgvigil_slow()',
      context: 'SQL statement "SELECT pg_sleep(5)"\nPL/pgSQL function pgvigil_slow() line 1 at PERFORM',
    });
  });

  it('a statement_timeout with no CONTEXT has context null', () => {
    const event = classifyEntry(stderrEntry(`${AT}ERROR:  canceling statement due to statement timeout`), 't1');
    expect(detailsOf(event, 'statement_timeout')).toEqual({ pid: 60001, database: 'shop', user: 'app', statement: null, context: null });
  });

  it.each([
    ['FATAL:  terminating connection due to idle-in-transaction timeout', 'idle_in_transaction_timeout'],
    ['FATAL:  terminating connection due to transaction timeout', 'transaction_timeout'],
  ] as const)('%s', (line, kind) => {
    const event = classifyEntry(stderrEntry(`${AT}${line}`), 't1');
    expect(detailsOf(event, kind)).toEqual({ pid: 60001, database: 'shop', user: 'app', statement: null });
  });

  it.each([
    'ERROR:  canceling statement due to user request',
    'FATAL:  terminating connection due to idle-session timeout',
    'FATAL:  terminating connection due to administrator command',
    'ERROR:  canceling autovacuum task',
  ])('leaves %s generic', (line) => {
    expect(classifyEntry(stderrEntry(`${AT}${line}`), 't1').kind).toBe('generic');
  });
});
