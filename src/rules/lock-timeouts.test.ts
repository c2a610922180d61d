import { describe, expect, it } from 'vitest';
import { lockTimeouts, DEFAULTS } from './lock-timeouts.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { ddlDetails, lockTimeoutDetails, lockWaitDetails, relationLock } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = lockTimeouts(DEFAULTS);
const o = (step: number, pid: number, level: 'ERROR' | 'LOG' = 'ERROR') => ({ tsMs: at(step), database: 'shop', pid, level });

const timeout = (step: number, pid: number, statement: string | null = 'SELECT count(*) FROM orders') =>
  eventOf('lock_timeout', lockTimeoutDetails({ pid, database: 'shop', user: 'app', statement }), o(step, pid));
const waiting = (step: number, pid: number, holder: number, statement: string | null = null) =>
  eventOf('lock_wait', lockWaitDetails({ waiting_pid: pid, lock_mode: 'AccessShareLock', holder_pids: [holder], queue_pids: [pid], statement }), o(step, pid, 'LOG'));
const truncate = (step: number, pid: number) => eventOf('ddl', ddlDetails('TRUNCATE', 'orders'), o(step, pid, 'LOG'));

const evaluate = (events: RuleEvent[], step: number) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('lock-timeouts', () => {
  it('groups the timeouts on one relation and names the holder and its logged TRUNCATE', () => {
    const events = [truncate(0, 900), waiting(1, 101, 900), timeout(2, 101), waiting(3, 102, 900), timeout(4, 102)];
    const [finding, ...rest] = evaluate(events, 10);
    expect(rest).toEqual([]);
    expect(finding!.summary).toBe(
      '2 statements cancelled by lock_timeout on shop.orders (primary) since 00:00:10 UTC, waiting for AccessShareLock ' +
      'behind pid 900 (TRUNCATE orders); last cancelled: SELECT count(*) FROM orders',
    );
    expect(finding!.dedupKey).toBe('lock-timeouts/primary/shop/orders');
    expect(finding!.evidence.facts).toMatchObject({ cancelled: 2, blocker_pids: '900', blocker_statement: 'TRUNCATE orders' });
    // The timeouts, the wait that named the holder, and the holder's DDL.
    expect(new Set(finding!.evidence.eventIds)).toEqual(new Set([events[0]!.id, events[3]!.id, events[2]!.id, events[4]!.id]));
  });

  const cases: Array<[string, RuleEvent[], string]> = [
    ['a holder that logged nothing', [waiting(0, 101, 900), timeout(1, 101)], 'behind pid 900 (its statement was not logged)'],
    ['a holder seen waiting itself', [waiting(0, 900, 5, 'LOCK TABLE orders IN ACCESS EXCLUSIVE MODE'), waiting(1, 101, 900), timeout(2, 101)],
      'behind pid 900 (LOCK TABLE orders IN ACCESS EXCLUSIVE MODE)'],
    ['no log_lock_waits', [timeout(0, 101)], '(log_lock_waits = on would name the holder)'],
    ['a statement naming no table: the waited-for lock names it', [waiting(0, 101, 900), timeout(1, 101, 'SELECT 1')],
      'on shop.relation 16402 of database 16384 (primary)'],
  ];
  for (const [name, events, said] of cases) it(name, () => expect(evaluate(events, 5)[0]?.summary).toContain(said));

  it('leaves a REPACK\'s lock timeout to the REPACK rules', () => {
    expect(evaluate([waiting(0, 101, 900), timeout(1, 101, 'REPACK (CONCURRENTLY) orders')], 5)).toEqual([]);
  });

  it('two relations: two alerts', () => {
    expect(evaluate([timeout(0, 101), timeout(1, 102, 'UPDATE items SET n = 1')], 5).map((f) => f.dedupKey))
      .toEqual(['lock-timeouts/primary/shop/orders', 'lock-timeouts/primary/shop/items']);
  });

  it('keeps one alert while timeouts recur and resolves 5 min after the last', () => {
    const events = [timeout(0, 101), timeout(30, 102), timeout(59, 103)];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ events }), instants(0, 130), { refireMinIntervalMs: 3_600_000 }));
    expect(steps).toEqual([['fire', 'lock-timeouts/primary/shop/orders', 0], ['resolve', 'lock-timeouts/primary/shop/orders', 120]]);
  });

  it('is quiet on a lock wait that was granted', () => {
    expect(evaluate([waiting(0, 101, 900), relationLockGranted(1, 101)], 5)).toEqual([]);
  });
});

function relationLockGranted(step: number, pid: number): RuleEvent<'lock_wait'> {
  return eventOf('lock_wait', lockWaitDetails({ waiting_pid: pid, lock_mode: 'AccessShareLock', phase: 'acquired', lock_object: relationLock(16402, 16384) }), o(step, pid, 'LOG'));
}
