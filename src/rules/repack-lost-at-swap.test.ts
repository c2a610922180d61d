import { describe, expect, it } from 'vitest';
import type { DeadlockDetails } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { repackLostAtSwap, DEFAULTS } from './repack-lost-at-swap.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { lockTimeoutDetails, lockWaitDetails, relationLock } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = repackLostAtSwap(DEFAULTS);
const REPACK = 'REPACK (CONCURRENTLY) orders;';
// The REPACK session 71000's slot is sampled from step 0 to step 9; lock_timeout fires at step 10.
const SLOT = seriesOf('pg_replication_slots_info{slot_name="pg_repack_71001",owner="repack",database="shop",owner_pid="71000"}', '1 1 1 1 1 1 1 1 1 1');

function timeout(statement: string, lockMode: string | null = 'AccessExclusiveLock') {
  return eventOf('lock_timeout', lockTimeoutDetails({
    pid: 71000, database: 'shop', statement, lock_mode: lockMode, lock_object: lockMode ? relationLock(16402, 16384) : null,
  }), { tsMs: at(10), pid: 71000, database: 'shop', level: 'ERROR', sqlstate: '55P03' });
}

const swapWait = eventOf('lock_wait', lockWaitDetails({
  waiting_pid: 71000, lock_mode: 'AccessExclusiveLock', wait_ms: 1000, holder_pids: [70990], queue_pids: [71000], statement: REPACK,
}), { tsMs: at(9) + 4000, pid: 71000, database: 'shop' });

function deadlock(lockMode: string): RuleEvent<'deadlock'> {
  const details: DeadlockDetails = {
    pid: 71000, database: 'shop', user: 'dba', statement: REPACK, context: null,
    processes: [
      { pid: 71000, lock_mode: lockMode, lock_object: relationLock(16402, 16384), blocked_by_pid: 70990, query: REPACK },
      { pid: 70990, lock_mode: 'RowExclusiveLock', lock_object: relationLock(16410, 16384), blocked_by_pid: 71000, query: 'UPDATE x' },
    ],
  };
  return eventOf('deadlock', details, { tsMs: at(10), pid: 71000, database: 'shop', level: 'ERROR', sqlstate: '40P01' });
}

const evaluate = (events: RuleEvent[], series = [SLOT]) =>
  rule.evaluate(new MemoryRuleView({ events, series }).at(at(11)), at(11));

describe('repack-lost-at-swap', () => {
  const cases: Array<[string, RuleEvent[], boolean]> = [
    ['fires: lock_timeout of a REPACK (CONCURRENTLY) waiting for ACCESS EXCLUSIVE', [timeout(REPACK)], true],
    ['fires: the same without the PG 19 CONTEXT (lock mode unknown)', [timeout(REPACK, null)], true],
    ['fires: a deadlock while upgrading to ACCESS EXCLUSIVE', [deadlock('AccessExclusiveLock')], true],
    ['quiet: lock_timeout at the start of the run (SHARE UPDATE EXCLUSIVE): nothing was copied yet', [timeout(REPACK, 'ShareUpdateExclusiveLock')], false],
    ['quiet: a plain REPACK (no CONCURRENTLY) times out before it starts', [timeout('REPACK orders;')], false],
    ['quiet: REPACK (CONCURRENTLY false) is a plain REPACK', [timeout('REPACK (CONCURRENTLY false) orders;')], false],
    ['quiet: an ordinary UPDATE hit lock_timeout', [timeout('UPDATE orders SET status = 1 WHERE id = 2;')], false],
    ['quiet: a deadlock over a row lock, not the swap', [deadlock('ShareLock')], false],
  ];
  for (const [name, events, fires] of cases) {
    it(name, () => expect(evaluate(events).length).toBe(fires ? 1 : 0));
  }

  it('says how much work was lost, who held the lock, and cites the wait and the error', () => {
    const failure = timeout(REPACK);
    const [finding] = evaluate([swapWait, failure]);
    expect(finding?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.orders threw away 50 s of work at the final swap: ' +
      'lock_timeout expired after 2 s waiting for AccessExclusiveLock behind pid 70990',
    );
    expect(finding?.evidence.eventIds).toEqual([swapWait.id, failure.id]);
    expect(finding?.evidence.facts).toMatchObject({ work_lost_seconds: 50, blocking_pids: '70990' });
  });

  it('takes the run start from the progress view\'s transaction start when there is no slot series', () => {
    const progress = [
      seriesOf('pg_stat_progress_repack_info{datname="shop",schemaname="public",relname="orders",pid="71000",command="REPACK",phase="catch-up",index_name=""}', '_ _ _ 1 1 1 1 1 1 1'),
      seriesOf('pg_stat_progress_repack_xact_start_timestamp_seconds{datname="shop",schemaname="public",relname="orders"}', `_ _ _ ${(T0 - 600_000) / 1000}`),
    ];
    expect(evaluate([timeout(REPACK)], progress)[0]?.summary).toMatch(/threw away 11 min of work at the final swap/);
  });

  it('without any trace of the run\'s start says the run was rolled back', () => {
    expect(evaluate([timeout(REPACK)], [])[0]?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.orders was rolled back at the final swap, all its copying and index builds lost: ' +
      'lock_timeout expired waiting for AccessExclusiveLock',
    );
  });

  it('fires once and resolves after activeForMs', () => {
    const short = repackLostAtSwap({ ...DEFAULTS, activeForMs: 30_000 });
    const steps = transitionSteps(timeline([short], new MemoryRuleView({ events: [timeout(REPACK)], series: [SLOT] }), instants(8, 20)));
    expect(steps.map(([action, , step]) => [action, step])).toEqual([['fire', 10], ['resolve', 17]]);
  });
});

describe('repack-lost-at-swap: the failed run is the one that failed, not an earlier one of the session', () => {
  const HOUR_STEPS = 720;
  const progressInfo = (command: string, steps: string) =>
    seriesOf(`pg_stat_progress_repack_info{datname="shop",schemaname="public",relname="orders",pid="71000",command="${command}",phase="catch-up",index_name=""}`, steps);
  const xactStart = (steps: string) => seriesOf('pg_stat_progress_repack_xact_start_timestamp_seconds{datname="shop",schemaname="public",relname="orders"}', steps);

  it('a retried REPACK lost its own work, not since the first attempt started', () => {
    // Attempt 1 runs steps 0-2 and times out at 3; the retry starts at 6 and times out at 10.
    const firstStart = T0 / 1000;
    const retryStart = at(6) / 1000;
    const series = [
      progressInfo('REPACK', '1 1 1 _ _ _ 1 1 1 1'),
      xactStart(`${firstStart} ${firstStart} ${firstStart} _ _ _ ${retryStart} ${retryStart} ${retryStart} ${retryStart}`),
    ];
    const [finding] = evaluate([timeout(REPACK)], series);
    expect(finding?.evidence.facts.work_lost_seconds).toBe(20);
    expect(finding?.summary).toMatch(/threw away 20 s of work/);
  });

  it('a wait of the same session 3 h earlier is not this failure\'s wait', () => {
    const oldWait = eventOf('lock_wait', lockWaitDetails({
      waiting_pid: 71000, lock_mode: 'AccessExclusiveLock', wait_ms: 1000, holder_pids: [60000], queue_pids: [71000],
      statement: 'LOCK TABLE orders IN ACCESS EXCLUSIVE MODE;',
    }), { tsMs: at(10 - 3 * HOUR_STEPS), pid: 71000, database: 'shop' });
    const failure = timeout(REPACK);
    const [finding] = rule.evaluate(new MemoryRuleView({ events: [oldWait, failure], series: [SLOT] }).at(at(11)), at(11));
    expect(finding?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.orders threw away 50 s of work at the final swap: lock_timeout expired waiting for AccessExclusiveLock',
    );
    expect(finding?.evidence.eventIds).toEqual([failure.id]);
  });

  it('a VACUUM FULL the session ran 5 h earlier is not the start of the failed REPACK', () => {
    const earlier = { startMs: at(-5 * HOUR_STEPS) };
    const series = [
      { ...progressInfo('VACUUM FULL', '1 1'), points: seriesOf('x', '1 1', earlier).points },
      { ...xactStart('0'), points: seriesOf('x', `${earlier.startMs / 1000} ${earlier.startMs / 1000}`, earlier).points },
    ];
    const [finding] = evaluate([timeout(REPACK)], series);
    expect(finding?.summary).toMatch(/^REPACK \(CONCURRENTLY\) of shop\.orders was rolled back at the final swap/);
  });
});
