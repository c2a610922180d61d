import { describe, expect, it } from 'vitest';
import type { DeadlockDetails, DeadlockProcess } from '../domain/index.js';
import { deadlocks, DEFAULTS } from './deadlocks.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';

const at = (step: number) => T0 + step * STEP;
const rule = deadlocks(DEFAULTS);

const transaction = (xid: number): NonNullable<DeadlockProcess['lock_object']> => ({
  type: 'transactionid', description: `transaction ${xid}`, relation_oid: null, database_oid: null, block: null, offset: null,
  transaction_id: xid, virtual_transaction: null, class_oid: null, object_id: null, subscription_oid: null, keys: null,
});
const update = (id: number) => `UPDATE accounts SET balance = balance + 10 WHERE id = ${id}`;

/** Two transactions updating rows 1 and 2 in opposite orders; `a` is cancelled. */
function deadlock(step: number, a = 500 + step, b = 600 + step, database = 'shop'): RuleEvent<'deadlock'> {
  const details: DeadlockDetails = {
    pid: a, database, user: 'app', statement: update(1), context: null,
    processes: [
      { pid: a, lock_mode: 'ShareLock', lock_object: transaction(785 + step), blocked_by_pid: b, query: update(1) },
      { pid: b, lock_mode: 'ShareLock', lock_object: transaction(786 + step), blocked_by_pid: a, query: update(2) },
    ],
  };
  return eventOf('deadlock', details, { tsMs: at(step), database, pid: a, level: 'ERROR' });
}

const evaluate = (events: RuleEvent[], step: number) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('deadlocks', () => {
  it('names the cycle: who waited for what, blocked by whom, running what, and whose statement was cancelled', () => {
    const [finding] = evaluate([deadlock(0, 25327, 25321)], 1);
    expect(finding!.summary).toBe(
      '1 deadlock in shop on primary since 00:00:00 UTC: ' +
      'pid 25327 (UPDATE accounts SET balance = balance + ? WHERE id = ?) waited for ShareLock on transaction 785, blocked by pid 25321; ' +
      'pid 25321 (UPDATE accounts SET balance = balance + ? WHERE id = ?) waited for ShareLock on transaction 786, blocked by pid 25327; ' +
      "PostgreSQL cancelled pid 25327's statement to break it",
    );
    expect(finding!.evidence.facts).toMatchObject({ deadlocks: 1, cancelled_pid: 25327 });
    expect(rule.severity).toBe('info');
  });

  it('the same cycle again (other pids, other transactions, other values) is the same alert, counted', () => {
    const findings = evaluate([deadlock(0), deadlock(20), deadlock(40)], 41);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.summary).toMatch(/^3 deadlocks in shop on primary since 00:00:00 UTC: pid 540 /);
  });

  const apart: Array<[string, RuleEvent[]]> = [
    ['in another database', [deadlock(0), deadlock(1, 1, 2, 'billing')]],
    ['of other statements', [deadlock(0), { ...deadlock(1), details: { ...deadlock(1).details, processes: deadlock(1).details.processes.map((p) => ({ ...p, query: 'DELETE FROM accounts WHERE id = 1' })) } }]],
  ];
  for (const [name, events] of apart) it(`a cycle ${name} is another alert`, () => expect(evaluate(events, 2)).toHaveLength(2));

  it('says when the DETAIL had no cycle', () => {
    const bare = eventOf('deadlock', { pid: 7, database: 'shop', user: 'app', statement: null, context: null, processes: [] }, { tsMs: at(0), pid: 7, database: 'shop' });
    expect(evaluate([bare], 1)[0]!.summary).toContain('since 00:00:00 UTC: the cycle was not logged;');
  });

  it('resolves 5 min after the last deadlock of the cycle', () => {
    const transitions = timeline([rule], new MemoryRuleView({ events: [deadlock(0), deadlock(10)] }), instants(0, 80), { refireMinIntervalMs: 3_600_000 });
    const key = transitions[0]!.dedupKey;
    expect(transitionSteps(transitions)).toEqual([['fire', key, 0], ['resolve', key, 71]]);
  });
});
