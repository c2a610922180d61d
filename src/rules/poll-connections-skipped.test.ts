import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { pollConnectionsSkipped } from './poll-connections-skipped.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';

const rule = pollConnectionsSkipped();
const NOW = T0 + 3 * STEP;

/** The probe series of target db1, one value per step ('' leaves a series out), judged at step 3. */
function findings(skipping: string, available = '', skipped = '') {
  const series = Object.entries({ pgvigil_poll_connects_skipping: skipping, pg_connections_available: available, pgvigil_poll_connects_skipped_total: skipped })
    .filter(([, values]) => values !== '')
    .map(([name, values]) => seriesOf(name, values, { target: 'db1' }));
  return rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP }).at(NOW), NOW);
}

describe('poll-connections-skipped', () => {
  it.each([
    ['skipping, 2 slots free, 37 visits skipped', findings('0 0 1 1', '9 9 2 2', '0 0 12 37'),
      /^pgvigil opens no connection to db1: only 2 connection slots are free for ordinary roles, so database visits are skipped \(37 so far\) and their table series go stale$/],
    ['skipping, the other series not sampled', findings('_ _ _ 1'), /^pgvigil opens no connection to db1: the server is near max_connections, so database visits are skipped and/],
  ])('info: %s', (_, found, summary) => {
    expect(found.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
    expect(found[0]?.dedupKey).toBe('poll-connections-skipped/db1');
    expect(rule.severity).toBe('info');
  });

  it.each([
    ['skipped before, room again now', findings('1 1 1 0', '2 2 2 9', '5 9 12 12')],
    ['never skipped', findings('0 0 0 0', '9 9 9 9', '0 0 0 0')],
    ['the last report is stale (pgvigil lost the server)', findings('1 1 _ _')],
  ])('quiet: %s', (_, found) => {
    expect(found).toEqual([]);
  });
});
