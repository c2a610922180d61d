import { describe, expect, it } from 'vitest';
import { detailsOf, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 03:32:00.500 UTC [60001] app@shop ';

describe('deadlock (§3.2)', () => {
  it('reads the §3.2 example: the cycle and each process query', () => {
    const text = [
      `${AT}ERROR:  deadlock detected`,
      `${AT}DETAIL:  Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.`,
      '\tProcess 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
      '\tProcess 60001: UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
      '\tProcess 60002: UPDATE accounts SET balance = balance - 10 WHERE id = 2;',
      `${AT}HINT:  See server log for query details.`,
      `${AT}CONTEXT:  while updating tuple (0,2) in relation "accounts"`,
      `${AT}STATEMENT:  UPDATE accounts SET balance = balance - 10 WHERE id = 1;`,
    ].join('\n');
    const d = detailsOf(classifyEntry(stderrEntry(text), 't1'), 'deadlock');
    expect(d).toMatchObject({ pid: 60001, database: 'shop', user: 'app', statement: 'UPDATE accounts SET balance = balance - 10 WHERE id = 1;' });
    expect(d.processes).toEqual([
      {
        pid: 60001, lock_mode: 'ShareLock', blocked_by_pid: 60002, query: 'UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
        lock_object: expect.objectContaining({ type: 'transactionid', transaction_id: 1873502 }),
      },
      {
        pid: 60002, lock_mode: 'ShareLock', blocked_by_pid: 60001, query: 'UPDATE accounts SET balance = balance - 10 WHERE id = 2;',
        lock_object: expect.objectContaining({ type: 'transactionid', transaction_id: 1873501 }),
      },
    ]);
  });

  it('keeps a multi-line query and a placeholder query text', () => {
    const text = [
      `${AT}ERROR:  deadlock detected`,
      `${AT}DETAIL:  Process 60001 waits for AccessExclusiveLock on relation 16402 of database 16384; blocked by process 60002.`,
      '\tProcess 60002 waits for AccessShareLock on relation 16405 of database 16384; blocked by process 60001.',
      '\tProcess 60001: DROP TABLE orders;',
      '\tProcess 60002: SELECT *',
      '\t  FROM orders',
      '\tProcess 60003: <insufficient privilege>',
    ].join('\n');
    const d = detailsOf(classifyEntry(stderrEntry(text), 't1'), 'deadlock');
    expect(d.processes.map((p) => [p.pid, p.lock_mode, p.query])).toEqual([
      [60001, 'AccessExclusiveLock', 'DROP TABLE orders;'],
      [60002, 'AccessShareLock', 'SELECT *\n  FROM orders'],
      [60003, null, '<insufficient privilege>'],
    ]);
    expect(d.statement).toBeNull();
  });

  it('produces the event with no processes when the DETAIL is missing (log_error_verbosity = terse)', () => {
    const d = detailsOf(classifyEntry(stderrEntry(`${AT}ERROR:  deadlock detected`), 't1'), 'deadlock');
    expect(d.processes).toEqual([]);
  });
});
