import { describe, expect, it } from 'vitest';
import type { DeadlockDetails, RecoveryConflictDetails, SessionFields } from '../domain/index.js';
import { errorStorm, DEFAULTS } from './error-storm.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { lockTimeoutDetails, relationLock } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = errorStorm(DEFAULTS);

const session = (statement: string | null, database = 'shop'): SessionFields => ({ pid: 100, database, user: 'app', statement });
const o = (step: number, database = 'shop') => ({ tsMs: at(step), database, level: 'ERROR' as const });
const lockTimeout = (step: number, statement: string | null = 'UPDATE orders SET state = 2 WHERE id = $1', database = 'shop') =>
  eventOf('lock_timeout', lockTimeoutDetails({ ...session(statement, database) }), o(step, database));
const statementTimeout = (step: number) => eventOf('statement_timeout', { ...session('SELECT count(*) FROM "Sales".items i JOIN orders o ON true'), context: null }, o(step));
const deadlock = (step: number) => eventOf('deadlock', {
  ...session(null), context: null,
  processes: [{ pid: 100, lock_mode: 'ShareLock', lock_object: relationLock(16402, 16384), blocked_by_pid: 101, query: null }],
} satisfies DeadlockDetails, o(step));
const conflict = (step: number) => eventOf('recovery_conflict', {
  ...session('SELECT * FROM public.orders', 'billing'), reason: 'snapshot', fatal: false, detail: null,
} satisfies RecoveryConflictDetails, { ...o(step, 'billing'), target: 'standby1' });

const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const evaluate = (events: RuleEvent[], step = 59) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('error-storm', () => {
  it('fires at 20 cancellations in 5 min: counts per kind, top relations and databases, in one alert', () => {
    const events = [...times(12, (i) => lockTimeout(i * 4)), ...times(5, (i) => statementTimeout(10 + i)), ...times(3, (i) => deadlock(40 + i))];
    const findings = evaluate(events);
    expect(findings.map((f) => [f.dedupKey, f.severity, f.summary])).toEqual([[
      'error-storm/primary', 'warning',
      '20 statements cancelled on primary in the last 5 min (12 lock timeouts, 5 statement timeouts, 3 deadlocks), usually 0 per 5 min over the previous 3 h; ' +
      'relations: orders 12, Sales.items 5, relation 16402 3; databases: shop 20; causes in lock-timeouts, statement-timeouts, deadlocks',
    ]]);
    expect(findings[0]?.evidence.eventIds).toHaveLength(20);
    expect(findings[0]?.evidence.facts).toMatchObject({ lock_timeout: 12, statement_timeout: 5, deadlock: 3, top_relation: 'orders' });
  });

  const quiet: Array<[string, RuleEvent[]]> = [
    ['19 cancellations in 5 min', times(19, (i) => lockTimeout(i * 3))],
    ['20 cancellations, one of them more than 5 min ago', [lockTimeout(-2), ...times(19, (i) => lockTimeout(10 + i))]],
    ['20 cancellations split over two targets', [...times(10, (i) => lockTimeout(i)), ...times(10, (i) => conflict(i))]],
  ];
  for (const [name, events] of quiet) it(`quiet: ${name}`, () => expect(evaluate(events)).toEqual([]));

  it('names recovery-conflict cancellations on a standby, and escalates to error at 200', () => {
    const [finding] = evaluate(times(200, (i) => conflict(i % 60)));
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toBe('200 statements cancelled on standby1 in the last 5 min (200 recovery conflict cancellations), usually 0 per 5 min over the previous 3 h; ' +
      'relations: public.orders 200; databases: billing 200; causes in recovery-conflict-cancellations');
  });

  it('lists the three relations most hit, then how many more', () => {
    const statements = ['UPDATE a SET x = 1', 'DELETE FROM b', 'INSERT INTO c VALUES (1)', 'LOCK TABLE d'];
    const [finding] = evaluate(times(20, (i) => lockTimeout(i, statements[i % 4] ?? null)));
    expect(finding?.summary).toMatch(/; relations: a 5, b 5, c 5, 1 more; databases: shop 20; causes in lock-timeouts$/);
  });

  describe('against the server\'s own baseline', () => {
    const MINUTE = 60_000 / STEP;
    /** `perMinute` statement timeouts a minute from minute `from` to `to` (exclusive). */
    const steady = (from: number, to: number, perMinute: number) =>
      times((to - from) * perMinute, (i) => statementTimeout(from * MINUTE + Math.floor(i * MINUTE / perMinute)));
    const HOURS_4 = 240;

    it('stays quiet on a steady 6 timeouts a minute for hours (30 per 5 min, over the absolute floor)', () => {
      const events = steady(0, HOURS_4, 6);
      for (const minute of [190, 200, 220, HOURS_4 - 1]) expect(evaluate(events, minute * MINUTE), `minute ${minute}`).toEqual([]);
    });

    it('before its first 90 min of history, a steady rate over the floor is not yet known as usual', () => {
      expect(evaluate(steady(0, 60, 6), 59 * MINUTE)).toHaveLength(1);
    });

    it('fires on a sudden rise to 4 times the usual rate, and says what is usual', () => {
      const events = [...steady(0, HOURS_4 - 5, 6), ...steady(HOURS_4 - 5, HOURS_4, 24)];
      const [finding] = evaluate(events, HOURS_4 * MINUTE - 1);
      expect(finding?.summary).toMatch(/^120 statements cancelled on primary in the last 5 min \(120 statement timeouts\), usually 30 per 5 min over the previous 3 h; /);
      expect(finding?.evidence.facts).toMatchObject({ cancelled: 120, usual_per_window: 30 });
    });

    it('stays quiet on a rise below 4 times the usual rate', () => {
      const events = [...steady(0, HOURS_4 - 5, 6), ...steady(HOURS_4 - 5, HOURS_4, 23)];
      expect(evaluate(events, HOURS_4 * MINUTE - 1)).toEqual([]);
    });

    it('a storm within the last half of the baseline does not become the usual rate', () => {
      const events = [...steady(0, HOURS_4 - 60, 1), ...steady(HOURS_4 - 60, HOURS_4, 24)];
      expect(evaluate(events, HOURS_4 * MINUTE - 1)[0]?.evidence.facts.usual_per_window).toBe(5);
    });
  });

  it('keeps one alert while the storm lasts (its counts only refreshed) and resolves once the rate falls below 20 in 5 min', () => {
    // One lock timeout every step (5 s) from step 0 to 39, then none.
    const events = times(40, (i) => lockTimeout(i));
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ events }), instants(0, 120), { refireMinIntervalMs: 3_600_000 }));
    expect(steps).toEqual([['fire', 'error-storm/primary', 19], ['resolve', 'error-storm/primary', 81]]);
  });
});
