/**
 * Lock waits (row and relation), a lock timeout and a deadlock between two sessions.
 * deadlock_timeout is 100ms on scenario servers (scenario-log.ts), so waits are logged quickly.
 */
import { ALL_VERSIONS, type Scenario } from './scenario.js';
import { withSessions } from './session.js';

/** Two sessions on database postgres, for scenarios with a holder and a waiter. */
const TWO_SESSIONS = { first: 'postgres', second: 'postgres' };

export const lockWaitsAndLockTimeout: Scenario = {
  name: 'lock-waits-and-lock-timeout',
  description:
    'A row lock wait (UPDATE behind an open transaction that updated the row) that is then granted; then a relation lock ' +
    'wait (SELECT behind LOCK TABLE ... ACCESS EXCLUSIVE) cancelled by lock_timeout.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_lock_waits: true }),
  sessionSettings: { lock_timeout: '500ms' },
  async run({ primary, log }) {
    await primary.query('CREATE TABLE lw_accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await primary.query('INSERT INTO lw_accounts SELECT g, 100 FROM generate_series(1, 10) g');
    await withSessions(primary, TWO_SESSIONS, async ({ first: holder, second: waiter }) => {
      await holder.query('BEGIN');
      await holder.query('UPDATE lw_accounts SET balance = balance - 1 WHERE id = 1');
      const waiting = waiter.query('UPDATE lw_accounts SET balance = balance + 1 WHERE id = 1');
      await log.waitFor(new RegExp(`process ${waiter.pid} still waiting for ShareLock on transaction \\d+`));
      await holder.query('COMMIT');
      await waiting;
      await log.waitFor(new RegExp(`process ${waiter.pid} acquired ShareLock on transaction \\d+`));

      await holder.query('BEGIN');
      await holder.query('LOCK TABLE lw_accounts IN ACCESS EXCLUSIVE MODE');
      await waiter.query("SET lock_timeout = '500ms'");
      await waiter.expectError('SELECT count(*) FROM lw_accounts', '55P03');
      await holder.query('ROLLBACK');
      await log.waitFor(new RegExp(`\\[${waiter.pid}\\] [^\\n]*ERROR:  canceling statement due to lock timeout`));
    });
  },
};

export const deadlock: Scenario = {
  name: 'deadlock',
  description:
    'Two transactions update two rows in opposite order: the first waits (logged after deadlock_timeout), the second ' +
    'closes the cycle and is the victim of "deadlock detected"; the first then acquires its lock.',
  versions: ALL_VERSIONS,
  logOf: 'primary',
  settings: () => ({ log_lock_waits: true }),
  sessionSettings: {},
  async run({ primary, log }) {
    await primary.query('CREATE TABLE dl_accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await primary.query('INSERT INTO dl_accounts VALUES (1, 100), (2, 100)');
    await withSessions(primary, TWO_SESSIONS, async ({ first, second }) => {
      await first.query('BEGIN');
      await first.query('UPDATE dl_accounts SET balance = balance - 10 WHERE id = 1');
      await second.query('BEGIN');
      await second.query('UPDATE dl_accounts SET balance = balance - 10 WHERE id = 2');
      const firstWaits = first.query('UPDATE dl_accounts SET balance = balance + 10 WHERE id = 2');
      await log.waitFor(new RegExp(`process ${first.pid} still waiting for ShareLock on transaction \\d+`));
      await second.expectError('UPDATE dl_accounts SET balance = balance + 10 WHERE id = 1', '40P01');
      await firstWaits;
      await first.query('COMMIT');
      await second.query('ROLLBACK');
      await log.waitFor(new RegExp(`process ${first.pid} acquired ShareLock on transaction \\d+`));
    });
  },
};
