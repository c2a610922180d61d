import { describe, expect, it } from 'vitest';
import { describeHolder, describeHolderAndAge, HOLDER_AGE } from './horizon-holder.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';

const SESSION = 'kind="backend",scope="database",owner="vacuum_full",pid="4242",datname="shop",usename="app",state="active",application_name="",query="VACUUM FULL orders"';
const SLOT = 'kind="slot_xmin",scope="cluster",owner="physical_standby",name="standby_1",pid="",datname="",usename="",application_name=""';
const NOW = T0 + 3 * STEP;

function holder(labels: string, extra: ReturnType<typeof seriesOf>[] = []) {
  const view = new MemoryRuleView({ series: [seriesOf(`${HOLDER_AGE}{${labels}}`, '1e6 2e6 3e6 4e6'), ...extra] }).at(NOW);
  return { view, sample: view.latest(HOLDER_AGE)[0]! };
}

describe('describeHolder: one holder, the same words in every rule that names it', () => {
  it('a session by what it runs, how long its transaction is open and its last query', () => {
    const xactStart = seriesOf(`pg_xmin_horizon_holder_xact_start_timestamp_seconds{${SESSION}}`, `_ _ _ ${(NOW - 600_000) / 1000}`);
    const { view, sample } = holder(SESSION, [xactStart]);
    expect(describeHolder(view, sample)).toBe('VACUUM FULL session pid 4242 (app@shop, active) with a transaction open for 10 min, last query: VACUUM FULL orders');
  });

  it('a slot by its owner, with the age for rules whose subject is not the horizon', () => {
    const { view, sample } = holder(SLOT);
    expect(describeHolderAndAge(view, sample)).toBe('physical slot standby_1 (a standby\'s hot_standby_feedback, or a slot nobody uses), 4,000,000 XIDs old');
  });
});
