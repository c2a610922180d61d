import { describe, expect, it } from 'vitest';
import { expectLinear } from '../../test/helpers/linear-time.js';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { redactEvent, redactSample, redactSqlLiterals } from './redact.js';

describe('redactSqlLiterals', () => {
  it.each([
    ["SELECT * FROM users WHERE password = 'hunter2'", 'SELECT * FROM users WHERE password = ?'],
    ["UPDATE t SET a = 'it''s', b = E'x\\'y', c = 12.5e-3, d = -7 WHERE t1.id = $1", 'UPDATE t SET a = ?, b = ?, c = ?, d = -? WHERE t1.id = $1'],
    [`SELECT $$hunter2$$, $tag$a $$ b$tag$ FROM "weird 'col' 42"`, `SELECT ?, ? FROM "weird 'col' 42"`],
    ["INSERT INTO t2 VALUES (X'ff', B'101', N'nat', U&'d\\0061') -- card 4111\nRETURNING id /* secret */", 'INSERT INTO t2 VALUES (?, ?, ?, ?) ?\nRETURNING id ?'],
    ["SELECT 'unterminated hunter2", 'SELECT ?'],
    ['ALTER TABLE orders ADD COLUMN x int DEFAULT 5', 'ALTER TABLE orders ADD COLUMN x int DEFAULT ?'],
  ])('%s', (sql, expected) => expect(redactSqlLiterals(sql)).toBe(expected));
});

const event = (message: string, details: Record<string, unknown>): AnyLogEvent => ({
  kind: 'statement_timeout', target: 't', tsMs: 0, pid: 1, database: 'd', user: 'u', level: 'ERROR', sqlstate: '57014', message,
  details: details as never, source: { file: 'f', offset: 0, line: null },
} as AnyLogEvent);

describe('redactEvent', () => {
  const timeout = event('canceling statement due to statement timeout', {
    pid: 1, database: 'd', user: 'u', statement: "SELECT pg_sleep(1) WHERE 'hunter2' = 'hunter2'", context: "SQL statement \"SELECT 'hunter2'\"",
  });

  it('keeps the shape of statements and contexts at literals, and drops them at statements', () => {
    expect(redactEvent(timeout, 'literals').details).toMatchObject({ statement: 'SELECT pg_sleep(?) WHERE ? = ?', context: 'SQL statement "SELECT ?"' });
    expect(redactEvent(timeout, 'statements').details).toMatchObject({ statement: null, context: null });
    expect(redactEvent(timeout, 'off')).toBe(timeout);
    expect(JSON.stringify(timeout)).toContain('hunter2');
  });

  it('redacts the SQL of statement and duration log lines, and deadlock queries, and drops a parameters DETAIL', () => {
    const duration = event("duration: 1.250 ms  execute S_1: SELECT 1 FROM users WHERE password = $1 AND name = 'bob'", { detail: "Parameters: $1 = 'hunter2'" });
    expect(redactEvent(duration, 'literals')).toMatchObject({ message: 'duration: 1.250 ms  execute S_1: SELECT ? FROM users WHERE password = $1 AND name = ?', details: { detail: null } });
    expect(redactEvent(duration, 'statements').message).toBe('duration: 1.250 ms  execute S_1: ?');
    const logged = event("statement: SELECT 'hunter2'", {});
    expect(redactEvent(logged, 'literals').message).toBe('statement: SELECT ?');
    const error = event('invalid input syntax for type integer: "abc"', {});
    expect(redactEvent(error, 'statements').message).toBe('invalid input syntax for type integer: "abc"');
    const deadlock = event('deadlock detected', { processes: [{ pid: 1, query: "UPDATE t SET s = 'hunter2'" }, { pid: 2, query: null }] });
    expect(redactEvent(deadlock, 'literals').details).toMatchObject({ processes: [{ pid: 1, query: 'UPDATE t SET s = ?' }, { pid: 2, query: null }] });
  });
});

describe('redactSample', () => {
  const session: Sample = { target: 't', name: 'pg_lock_waits_session_wait_seconds', labels: { pid: '7', query: "SELECT 'hunter2'" }, tsMs: 0, value: 3 };
  it('redacts or removes the query label only', () => {
    expect(redactSample(session, 'literals').labels).toEqual({ pid: '7', query: 'SELECT ?' });
    expect(redactSample(session, 'statements').labels).toEqual({ pid: '7' });
    expect(redactSample(session, 'off')).toBe(session);
  });
});

describe('redactSqlLiterals on adversarial input', () => {
  it.each([
    ['literals with prefixes, numbers, dollar signs, comments', "E'a' x'1' 12 $$ $ -- \n"],
    ['an unclosed dollar quote after many tags', '$a$ $b$ '],
    ['quoted identifiers and doubled quotes', '"a""b" \'c\'\'d\' '],
  ])('stays linear: %s', (_what, unit) => {
    expectLinear('redactSqlLiterals', (n) => unit.repeat(Math.ceil(n / unit.length)), (sql) => redactSqlLiterals(sql), 128_000);
  });
});
