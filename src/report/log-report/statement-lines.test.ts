import { describe, expect, it } from 'vitest';
import { readStatementLine, type StatementLine } from './statement-lines.js';

// Messages as the recorded logs hold them (test/fixtures/log-report/*-statement-logging,
// *-log-report-workload, pg18-stderr-analyze-mixed), in every form postgres.c prints.
const CASES: Array<[string, StatementLine | null]> = [
  ['duration: 0.593 ms', { durationUs: 593, step: null, text: null }],
  ['duration: 63.220 ms', { durationUs: 63_220, step: null, text: null }],
  ['duration: 253.482 ms  statement: UPDATE bench_locks SET v = v + 1 WHERE id = 1', { durationUs: 253_482, step: 'statement', text: 'UPDATE bench_locks SET v = v + 1 WHERE id = 1' }],
  ['duration: 0.105 ms  parse <unnamed>: UPDATE rw_accounts SET balance = balance + $1 WHERE id = $2', { durationUs: 105, step: 'parse', text: 'UPDATE rw_accounts SET balance = balance + $1 WHERE id = $2' }],
  ['duration: 0.031 ms  bind balance_by_id: SELECT balance FROM rw_accounts WHERE id = $1', { durationUs: 31, step: 'bind', text: 'SELECT balance FROM rw_accounts WHERE id = $1' }],
  ['duration: 0.040 ms  execute balance_by_id: SELECT balance FROM rw_accounts WHERE id = $1', { durationUs: 40, step: 'execute', text: 'SELECT balance FROM rw_accounts WHERE id = $1' }],
  // A portal's name after the statement's, and a fetch from an open portal (postgres.c).
  ['duration: 1.000 ms  execute s1/p1: SELECT 1', { durationUs: 1000, step: 'execute', text: 'SELECT 1' }],
  ['duration: 12345.678 ms  execute fetch from <unnamed>/c1: SELECT * FROM t', { durationUs: 12_345_678, step: 'execute', text: 'SELECT * FROM t' }],
  ['statement: SELECT pg_backend_pid() AS pid', { durationUs: null, step: 'statement', text: 'SELECT pg_backend_pid() AS pid' }],
  ['execute <unnamed>: SELECT qty FROM sl_items WHERE id = $1', { durationUs: null, step: 'execute', text: 'SELECT qty FROM sl_items WHERE id = $1' }],
  // The text keeps what follows, colons and newlines included.
  ['statement: SELECT \'a: b\'\n  FROM t', { durationUs: null, step: 'statement', text: 'SELECT \'a: b\'\n  FROM t' }],
  // Not these messages.
  ['database system is ready to accept connections', null],
  ['deadlock detected', null],
  ['duration: 1.5 ms', null],
  ['duration: abc ms', null],
  ['duration: 1.000 ms statement: one space', null],
  ['executing something', null],
  ['syntax error at or near "x"', null],
  ['', null],
];

describe('readStatementLine', () => {
  it.each(CASES)('%j', (message, expected) => {
    expect(readStatementLine(message)).toEqual(expected);
  });
});
