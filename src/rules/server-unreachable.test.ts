import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { serverUnreachable, DEFAULTS } from './server-unreachable.js';

// Steps of 30 s, as the scheduler's retries come at most 30 s apart: the default sustain is four.
const STEP = 30_000;
const SUSTAIN_STEPS = DEFAULTS.sustainMs / STEP;
const at = (step: number) => T0 + step * STEP;
const rule = serverUnreachable();
const opts = { target: 'db1', stepMs: STEP };

const steps = (...runs: Array<[string, number]>) => runs.flatMap(([value, n]) => Array<string>(n).fill(value)).join(' ');
const up = (values: string) => seriesOf('pg_up', values, opts);
const reason = (why: string, values: string) => seriesOf(`pgvigil_poll_unreachable_reason{reason="${why}"}`, values, opts);

function evaluate(series: SeriesData[], step: number) {
  return rule.evaluate(new MemoryRuleView({ series, staleAfterMs: 2 * STEP }).at(at(step)), at(step));
}

describe('server-unreachable', () => {
  it('fires critical once every probe has failed for the sustain time, naming why and since when', () => {
    const down = SUSTAIN_STEPS + 1;
    const [finding, ...rest] = evaluate([up(steps(['1', 2], ['0', down])), reason('refused', steps(['_', 2], ['1', down]))], 1 + down);
    expect(rest).toEqual([]);
    expect(finding?.severity).toBe('critical');
    expect(finding?.summary).toBe('pgvigil cannot reach db1 for 2 min (since 00:01:00 UTC, last reached at 00:00:30 UTC): connection refused: the server is down or not listening');
    expect(finding?.evidence.facts).toMatchObject({ reason: 'refused', down_since_ms: at(2), last_up_ms: at(1) });
  });

  it('stays quiet through a restart shorter than the sustain time', () => {
    expect(evaluate([up(steps(['1', 2], ['0', SUSTAIN_STEPS - 1], ['1', 1]))], SUSTAIN_STEPS + 1)).toEqual([]);
    expect(evaluate([up(steps(['1', 2], ['0', SUSTAIN_STEPS]))], SUSTAIN_STEPS + 1)).toEqual([]);
  });

  it('says when the server answers but refuses pgvigil: error, the server may be fine', () => {
    const [finding] = evaluate([up(steps(['0', 6])), reason('auth', steps(['1', 6]))], 5);
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toMatch(/^pgvigil cannot reach db1 for \d+ min \(since 00:00:00 UTC, not reached once\): it refuses pgvigil's login .* the server may be fine, but nothing watches it$/);
  });

  it('fires once, and resolves at the first successful probe', () => {
    const view = new MemoryRuleView({ series: [up(steps(['1', 1], ['0', 8], ['1', 4])), reason('timeout', steps(['_', 1], ['1', 8]))], staleAfterMs: 2 * STEP });
    const transitions = transitionSteps(timeline([rule], view, instants(0, 13, STEP)), T0, STEP);
    // Later 'fire's of the same key are the engine refreshing the summary ("for 3 min").
    expect(transitions[0]).toEqual(['fire', 'server-unreachable/db1', 1 + SUSTAIN_STEPS]);
    expect(transitions.filter(([action]) => action === 'resolve')).toEqual([['resolve', 'server-unreachable/db1', 9]]);
    expect(transitions.at(-1)?.[0]).toBe('resolve');
  });
});
