import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { clusterOf, type TargetInfo } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';

/** A target that samples as a standby (the pg_standby collector runs only in recovery). */
const standbySamples = (target: string) => seriesOf('pg_standby_replay_standing_still_seconds', '0 0 0', { target });

const groupOf = (targets: TargetInfo[], standbys: string[], target: string) =>
  clusterOf(new MemoryRuleView({ targets, series: standbys.map(standbySamples), staleAfterMs: STEP }).at(T0 + 2 * STEP), target).sort();

describe('clusterOf', () => {
  const loose = (...names: string[]): TargetInfo[] => names.map((name) => ({ name, cluster: null }));
  const cases: Array<[string, TargetInfo[], string[], string, string[]]> = [
    ['configured clusters group by name', [{ name: 'p', cluster: 'a' }, { name: 's', cluster: 'a' }, { name: 'q', cluster: 'b' }], ['s'], 's', ['p', 's']],
    ['one primary and one standby without config are one group', loose('p', 's'), ['s'], 's', ['p', 's']],
    ['one primary and two standbys without config are one group', loose('p', 's1', 's2'), ['s1', 's2'], 's2', ['p', 's1', 's2']],
    ['a lone target is its own group', loose('p'), [], 'p', ['p']],
    ['two primaries and a standby without config: which primary feeds the standby is unknown', loose('p1', 'p2', 's'), ['s'], 's', ['s']],
    ['two primaries without config are not grouped', loose('p1', 'p2'), [], 'p1', ['p1']],
    ['targets with a cluster are not grouped with those without', [{ name: 'p', cluster: 'a' }, { name: 's', cluster: null }], ['s'], 's', ['s']],
  ];
  for (const [name, targets, standbys, target, group] of cases) {
    it(name, () => expect(groupOf(targets, standbys, target)).toEqual(group));
  }
});
