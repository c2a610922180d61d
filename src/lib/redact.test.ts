import { describe, expect, it } from 'vitest';
import { expectLinear } from '../../test/helpers/linear-time.js';
import type { AnyLogEvent, Sample } from '../domain/index.js';
import { redactQuotedInput } from './redact-error-fields.js';
import { redactEvent, redactLine, redactSample, redactSqlLiterals } from './redact.js';

describe('redactSqlLiterals', () => {
  it.each([
    ["SELECT * FROM users WHERE password = 'hunter2'", 'SELECT * FROM users WHERE password = ?'],
    ["UPDATE t SET a = 'it''s', b = E'x\\'y', c = 12.5e-3, d = -7 WHERE t1.id = $1", 'UPDATE t SET a = ?, b = ?, c = ?, d = -? WHERE t1.id = $1'],
    [`SELECT $$hunter2$$, $tag$a $$ b$tag$ FROM "weird 'col' 42"`, `SELECT ?, ? FROM "weird 'col' 42"`],
    ["INSERT INTO t2 VALUES (X'ff', B'101', N'nat', U&'d\\0061') -- card 4111\nRETURNING id /* secret */", 'INSERT INTO t2 VALUES (?, ?, ?, ?) ?\nRETURNING id ?'],
    ["SELECT 'unterminated hunter2", 'SELECT ?'],
    ['ALTER TABLE orders ADD COLUMN x int DEFAULT 5', 'ALTER TABLE orders ADD COLUMN x int DEFAULT ?'],
    // Comments nest: the first */ does not end the outer one.
    ['SELECT 1 /* a /* b */ hunter2 */ FROM t', 'SELECT ? ? FROM t'],
    // Tags of any alphabet, of any length.
    ['SELECT $données$hunter2$données$, $日本$hunter2$日本$ FROM t', 'SELECT ?, ? FROM t'],
    [`SELECT $${'t'.repeat(80)}$hunter2$${'t'.repeat(80)}$ FROM t`, 'SELECT ? FROM t'],
    ['SELECT $1, $2 FROM t', 'SELECT $1, $2 FROM t'],
    // standard_conforming_strings unknown: kept only what both readings keep.
    ["SELECT 'it\\'s hunter2' FROM t", 'SELECT ?'],
    ["SELECT 'C:\\' AS p, name FROM t WHERE x = 'bob'", 'SELECT ?'],
    ["SELECT U&'d\\0061t' UESCAPE '!', E'\\\\', x FROM t", 'SELECT ? UESCAPE ?, ?, x FROM t'],
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
    // A message keeps its sentence; the input it quotes goes at both levels, and stays at off.
    const error = event('invalid input syntax for type integer: "abc"', {});
    expect(redactEvent(error, 'statements').message).toBe('invalid input syntax for type integer: "?"');
    expect(redactEvent(error, 'literals').message).toBe('invalid input syntax for type integer: "?"');
    expect(redactEvent(error, 'off').message).toBe('invalid input syntax for type integer: "abc"');
    const deadlock = event('deadlock detected', { processes: [{ pid: 1, query: "UPDATE t SET s = 'hunter2'" }, { pid: 2, query: null }] });
    expect(redactEvent(deadlock, 'literals').details).toMatchObject({ processes: [{ pid: 1, query: 'UPDATE t SET s = ?' }, { pid: 2, query: null }] });
  });
});

describe('redactEvent on what errors quote', () => {
  it.each([
    // The line numbers go as numbers do.
    ['COPY users, line 2: "1,alice@example.com"', 'COPY users, line ?: ?'],
    ['COPY users, line 2, column email: "alice@example.com"', 'COPY users, line ?, column email: ?'],
    ['COPY users, Zeile 2, Spalte email: »alice@example.com«', 'COPY users, Zeile ?, Spalte email: ?'],
    ['COPY users, ligne 2 : « alice@example.com »', 'COPY users, ligne ? : ?'],
    ['usersのCOPY、行 2: "alice@example.com"', 'usersのCOPY、行 ?: ?'],
    ['COPY users, line 2', 'COPY users, line ?'],
  ])('replaces the input a COPY CONTEXT quotes: %s', (context, expected) => {
    const copy = event('invalid input syntax for type integer: "x"', { classified: false, context });
    expect(redactEvent(copy, 'literals').details).toMatchObject({ context: expected });
    expect(JSON.stringify(redactEvent(copy, 'literals'))).not.toContain('alice');
  });

  it('applies to events at literals and statements, and to raw lines', () => {
    const unique = { ...event('duplicate key value violates unique constraint "users_email_key"', { classified: false, detail: 'Key (email)=(alice@example.com) already exists.' }), kind: 'generic', sqlstate: '23505' } as AnyLogEvent;
    for (const level of ['literals', 'statements'] as const) expect(redactEvent(unique, level).details).toMatchObject({ detail: 'Key (email)=(?) already exists.' });
    expect(redactEvent(unique, 'off').details).toMatchObject({ detail: 'Key (email)=(alice@example.com) already exists.' });
    expect(redactLine('DETAIL:  Failing row contains (1, alice).', 'literals')).toBe('DETAIL:  Failing row contains (?).');
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
    ['backslashes read both ways', "'a\\' b' \\ E'\\' "],
    ['comments opened and never closed', '/* /* x */ '],
  ])('stays linear: %s', (_what, unit) => {
    expectLinear('redactSqlLiterals', (n) => unit.repeat(Math.ceil(n / unit.length)), (sql) => redactSqlLiterals(sql), 128_000);
  });

  it('stays linear on COPY contexts without a colon', () => {
    expectLinear('redactQuotedInput', (n) => 'COPY '.repeat(Math.ceil(n / 5)), (text) => redactQuotedInput(text), 128_000);
  });
});
