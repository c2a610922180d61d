import { describe, expect, it } from 'vitest';
import type { LockWaitPhase } from '../../domain/index.js';
import { detailsOf, stderrEntries, stderrEntry } from '../../../test/helpers/log-entry.js';
import { classifyEntry } from './index.js';

const AT = '2026-10-14 03:30:00.001 UTC [60001] app@shop ';

describe('lock_wait (log_lock_waits, §3.3)', () => {
  it('reads the §3.3 example: still waiting, then acquired', () => {
    const events = stderrEntries([
      `${AT}LOG:  process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms`,
      `${AT}DETAIL:  Process holding the lock: 59990. Wait queue: 60001.`,
      `${AT}CONTEXT:  while updating tuple (12,7) in relation "orders"`,
      `${AT}STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;`,
      `${AT}LOG:  process 60001 acquired ShareLock on transaction 1873501 after 5868.911 ms`,
      `${AT}CONTEXT:  while updating tuple (12,7) in relation "orders"`,
      `${AT}STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;`,
    ].join('\n')).map((entry) => detailsOf(classifyEntry(entry, 't1'), 'lock_wait'));
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      phase: 'waiting',
      waiting_pid: 60001,
      lock_mode: 'ShareLock',
      lock_object: { type: 'transactionid', transaction_id: 1873501 },
      wait_ms: 1000.052,
      holder_pids: [59990],
      queue_pids: [60001],
      statement: "UPDATE orders SET status = 'paid' WHERE id = 42;",
      context: 'while updating tuple (12,7) in relation "orders"',
    });
    expect(events[1]).toMatchObject({ phase: 'acquired', wait_ms: 5868.911, holder_pids: null, queue_pids: null });
  });

  it('reads a relation-level wait with several holders and an empty-holder DETAIL', () => {
    const text = [
      `${AT}LOG:  process 60010 still waiting for AccessExclusiveLock on relation 16402 of database 16384 after 1000.061 ms`,
      `${AT}DETAIL:  Processes holding the lock: 59990, 59991. Wait queue: 60010, 60011, 60012.`,
    ].join('\n');
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'lock_wait')).toMatchObject({
      lock_object: { type: 'relation', relation_oid: 16402, database_oid: 16384 },
      holder_pids: [59990, 59991],
      queue_pids: [60010, 60011, 60012],
    });
    const empty = `${AT}LOG:  process 60001 still waiting for ShareLock on transaction 7 after 1000.000 ms\n${AT}DETAIL:  Processes holding the lock: . Wait queue: 60001.`;
    expect(detailsOf(classifyEntry(stderrEntry(empty), 't1'), 'lock_wait')).toMatchObject({ holder_pids: [], queue_pids: [60001] });
  });

  it.each<[string, LockWaitPhase, number | null]>([
    ['process 60001 avoided deadlock for ExclusiveLock on relation 16402 of database 16384 by rearranging queue order after 1000.010 ms', 'avoided_deadlock', 1000.01],
    ['process 60001 detected deadlock while waiting for ShareLock on transaction 1873502 after 1000.200 ms', 'detected_deadlock', 1000.2],
    ['process 60001 failed to acquire ShareLock on transaction 1873502 after 1000.200 ms', 'failed', 1000.2],
    ['process 60001 could not obtain RowExclusiveLock on tuple (12,7) of relation 16402 of database 16384', 'could_not_obtain', null],
  ])('%s', (message, phase, waitMs) => {
    const d = detailsOf(classifyEntry(stderrEntry(`${AT}LOG:  ${message}`), 't1'), 'lock_wait');
    expect(d.phase).toBe(phase);
    expect(d.wait_ms).toBe(waitMs);
  });

  it('reads the 18+ `could not obtain` DETAIL with its comma', () => {
    const text = `${AT}LOG:  process 60001 could not obtain ShareLock on transaction 7\n${AT}DETAIL:  Process holding the lock: 59990, Wait queue: .`;
    expect(detailsOf(classifyEntry(stderrEntry(text), 't1'), 'lock_wait')).toMatchObject({ holder_pids: [59990], queue_pids: [] });
  });

  it('does not take other `process ...` messages', () => {
    expect(classifyEntry(stderrEntry(`${AT}LOG:  process 60001 did something else`), 't1').kind).toBe('generic');
  });
});
