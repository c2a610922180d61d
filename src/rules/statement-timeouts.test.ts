import { describe, expect, it } from 'vitest';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { DEFAULTS, statementTimeouts } from './statement-timeouts.js';

const at = (step: number) => T0 + step * STEP;
const rule = statementTimeouts(DEFAULTS);

const REPORT = "SELECT sum(total) FROM orders WHERE placed_at > now() - interval '30 days' AND region = 'eu'";
const timeout = (step: number, statement: string | null = REPORT, database = 'shop', pid = 4100 + step) =>
  eventOf('statement_timeout', { pid, database, user: 'app', statement, context: null }, { tsMs: at(step), database, pid, level: 'ERROR' });

const evaluate = (events: RuleEvent[], step: number) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('statement-timeouts', () => {
  it('one info alert per statement shape: literals do not split it, the count and first time are said', () => {
    const events = [timeout(0), timeout(10, REPORT.replace("'eu'", "'us'")), timeout(20)];
    const findings = evaluate(events, 30);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.summary).toBe(
      '3 statements cancelled by statement_timeout in shop on primary since 00:00:00 UTC: ' +
      'SELECT sum(total) FROM orders WHERE placed_at > now() - interval ? AND region = ?',
    );
    expect(findings[0]!.dedupKey).toMatch(/^statement-timeouts\/primary\/shop\/[0-9a-f]{12}$/);
    expect(findings[0]!.evidence.eventIds).toEqual(events.map((e) => e.id));
    expect(rule.severity).toBe('info');
  });

  const cases: Array<[string, RuleEvent[], number, number]> = [
    ['two statements: two alerts', [timeout(0), timeout(1, 'SELECT pg_sleep(5)')], 2, 2],
    ['one statement in two databases: two alerts', [timeout(0), timeout(1, REPORT, 'billing')], 2, 2],
    ['a statement that was not logged is its own group', [timeout(0, null), timeout(1)], 2, 2],
    ['quiet: the last timeout is more than 5 min old', [timeout(0)], 61, 0],
    ['a timeout exactly 5 min old still counts', [timeout(0)], 60, 1],
  ];
  for (const [name, events, step, alerts] of cases) it(name, () => expect(evaluate(events, step)).toHaveLength(alerts));

  it('an episode is the timeouts with gaps of at most 5 min: an older one is not counted', () => {
    const [finding] = evaluate([timeout(0), timeout(100), timeout(150)], 160);
    expect(finding!.summary).toMatch(/^2 statements cancelled .* since 00:08:20 UTC: /);
  });

  it('counts a cause that recurs for longer than 15 min over the last 15 min', () => {
    const events = Array.from({ length: 40 }, (_, i) => timeout(i * 10));
    expect(evaluate(events, 390)[0]!.summary).toMatch(/^19 statements cancelled by statement_timeout in shop on primary in the last 15 min: /);
    expect(evaluate(events, 170)[0]!.summary).toMatch(/^18 statements cancelled .* since 00:00:00 UTC: /);
  });

  it('keeps one alert while timeouts recur (its count updated) and resolves 5 min after the last', () => {
    const events = [timeout(0), timeout(40), timeout(80)];
    const transitions = timeline([rule], new MemoryRuleView({ events }), instants(0, 150), { refireMinIntervalMs: 0 });
    const key = transitions[0]!.dedupKey;
    expect(transitionSteps(transitions)).toEqual([['fire', key, 0], ['fire', key, 40], ['fire', key, 80], ['resolve', key, 141]]);
    expect(transitions.map((t) => t.summary?.slice(0, 12))).toEqual(['1 statement ', '2 statements', '3 statements', undefined]);
  });
});
