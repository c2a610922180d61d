import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLogFile } from '../../../test/helpers/scenarios/parse-log.js';
import { expectMergeProperty, expectSectionGolden, fixtureEvents, foldEvents, foldResult } from '../../../test/helpers/report-section.js';
import { TIMEOUT_LOCK_NOT_LOGGED, locksSection } from './locks.js';
import { DEFAULT_REPORT_LIMITS } from './section.js';

/** Real logs: lock waits ending acquired and in a lock timeout (13, 18, 19 which names the lock), deadlocks, timeouts, recovery conflicts. */
const CASES = [
  'pg13-stderr-lock-waits-and-lock-timeout',
  'pg18-stderr-lock-waits-and-lock-timeout',
  'pg19-csvlog-lock-waits-and-lock-timeout',
  'pg15-jsonlog-deadlock',
  'pg18-stderr-deadlock',
  'pg18-stderr-statement-timeout',
  'pg18-stderr-idle-in-transaction-timeout',
  'pg18-stderr-transaction-timeout',
  'pg18-stderr-standby-recovery-conflicts',
  'pg19-stderr-repack-lock-timeout-at-swap',
];

describe('locks section', () => {
  it('folds real logs to waits per relation, deadlock cycles and cancellations by cause (golden)', () => expectSectionGolden(locksSection, CASES));

  it('puts a row-lock wait on the relation its CONTEXT names, and a table-lock wait on the relation by OID', async () => {
    const result = foldResult(locksSection, await fixtureEvents('pg18-stderr-lock-waits-and-lock-timeout'));
    expect(result.lock_waits.by_relation.map((r) => [r.relation, r.waits, r.acquired, r.timed_out])).toEqual([
      ['relation 16417 of database 5', 1, 0, 1],
      ['lw_accounts', 1, 1, 0],
    ]);
    const table = result.lock_waits.by_relation[0]!;
    expect(table).toMatchObject({ longest_wait_ms: 100.073, lock_modes: [{ mode: 'AccessShareLock', count: 1 }] });
    expect(table.waiters).toEqual([{ pid: 25189, statement: 'SELECT count(*) FROM lw_accounts' }]);
    expect(table.blockers).toEqual([{ pid: 25188, statement: null }]);
    expect(result.cancellations.by_cause).toEqual([{ cause: 'lock_timeout', count: 1, terminated: 0 }]);
  });

  it('puts a lock timeout on the wait logged before it when the two were folded apart (before PG 19)', async () => {
    const events = await fixtureEvents('pg18-stderr-lock-waits-and-lock-timeout');
    const timeout = events.findIndex((e) => e.kind === 'lock_timeout');
    const limits = DEFAULT_REPORT_LIMITS;
    const alone = locksSection.result(foldEvents(locksSection, events.slice(timeout)), limits);
    expect(alone.lock_waits.by_relation.map((r) => [r.relation, r.timed_out])).toEqual([[TIMEOUT_LOCK_NOT_LOGGED, 1]]);
    const merged = locksSection.merge(foldEvents(locksSection, events.slice(0, timeout)), foldEvents(locksSection, events.slice(timeout)), limits);
    expect(locksSection.result(merged, limits).lock_waits.by_relation.find((r) => r.timed_out > 0)?.relation).toBe('relation 16417 of database 5');
  });

  it('shows a deadlock with its whole cycle: processes, locks, statements and the table', async () => {
    const result = foldResult(locksSection, await fixtureEvents('pg18-stderr-deadlock'));
    expect(result.deadlocks.count).toBe(1);
    expect(result.deadlocks.by_relation).toEqual([{ relation: 'dl_accounts', count: 1 }]);
    expect(result.deadlocks.cycles).toEqual([{
      at: '2026-11-30T07:20:27.762Z', database: 'postgres', pid: 25327,
      statement: 'UPDATE dl_accounts SET balance = balance + 10 WHERE id = 1',
      processes: [
        { pid: 25327, lock_mode: 'ShareLock', lock: 'transaction 785', blocked_by_pid: 25321, statement: 'UPDATE dl_accounts SET balance = balance + 10 WHERE id = 1' },
        { pid: 25321, lock_mode: 'ShareLock', lock: 'transaction 786', blocked_by_pid: 25327, statement: 'UPDATE dl_accounts SET balance = balance + 10 WHERE id = 2' },
      ],
      relations: ['dl_accounts'],
    }]);
    expect(result.lock_waits.by_relation.find((r) => r.relation === 'dl_accounts')).toMatchObject({ waits: 1, acquired: 1, deadlocked: 1 });
  });

  it('counts cancellations and terminations by cause', async () => {
    const events = (await Promise.all(CASES.map((name) => fixtureEvents(name)))).flat();
    const byCause = Object.fromEntries(foldResult(locksSection, events).cancellations.by_cause.map((c) => [c.cause, [c.count, c.terminated]]));
    expect(byCause).toMatchObject({
      statement_timeout: [expect.any(Number), 0],
      idle_in_transaction_timeout: [1, 1],
      transaction_timeout: [1, 1],
      deadlock: [2, 0],
    });
    expect(Object.keys(byCause).filter((cause) => cause.startsWith('recovery_conflict_')).length).toBeGreaterThan(1);
  });

  it('counts a cancel by pg_cancel_backend() as a user request, beside the lock and statement timeouts of the same statement (real 19rc1 log)', async () => {
    const file = path.resolve(import.meta.dirname, '../../../test/fixtures/rule-logs/pg19-repack-swap-failures.log');
    const { events } = await parseLogFile(file, { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC' });
    const byCause = foldResult(locksSection, events).cancellations.by_cause;
    expect(byCause).toEqual(expect.arrayContaining([
      { cause: 'user_request', count: 1, terminated: 0 },
      { cause: 'lock_timeout', count: 1, terminated: 0 },
      { cause: 'statement_timeout', count: 1, terminated: 0 },
    ]));
  });

  it('counts cancels and terminations by hand, and an autovacuum cancelled by a lock request (real PG 18 log)', async () => {
    for (const format of ['stderr', 'csvlog', 'jsonlog']) {
      const result = foldResult(locksSection, await fixtureEvents(`../log-report/pg18-${format}-cancelled-by-hand`));
      expect(result.cancellations).toEqual({
        total: 3,
        by_cause: [
          { cause: 'administrator_command', count: 1, terminated: 1 },
          { cause: 'autovacuum_cancelled', count: 1, terminated: 0 },
          { cause: 'user_request', count: 1, terminated: 0 },
        ],
      });
    }
  });

  it('merges any split of real logs as one pass, a lock timeout finding its wait across the split', async () => {
    const events = (await Promise.all(CASES.map((name) => fixtureEvents(name)))).flat();
    expectMergeProperty(locksSection, events);
    const locking = events.filter((e) => e.kind === 'lock_wait' || e.kind === 'lock_timeout' || e.kind === 'deadlock');
    expectMergeProperty(locksSection, locking);
  });
});
