import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { xminHorizonHeld, DEFAULTS } from './xmin-horizon-held.js';

const at = (step: number) => T0 + step * STEP;
const rule = xminHorizonHeld(DEFAULTS);

const SESSION = 'kind="backend",scope="database",owner="",pid="4242",datname="shop",usename="app",application_name="reporting",' +
  'backend_type="client backend",state="idle in transaction",name="",query="SELECT * FROM orders WHERE id = 1"';
const REPACK_SLOT = 'kind="slot_catalog_xmin",scope="cluster",owner="repack",pid="71000",datname="shop",usename="",application_name="",' +
  'backend_type="REPACK decoding worker",state="",name="pg_repack_71001",query=""';
const LOGICAL_CATALOG = 'kind="slot_catalog_xmin",scope="catalog",owner="logical_subscription",pid="",datname="shop",usename="",' +
  'application_name="",backend_type="",state="",name="sub1",query=""';
const PREPARED = 'kind="prepared_xact",scope="database",owner="",pid="",datname="billing",usename="app",application_name="",' +
  'backend_type="",state="",name="tx-42",query=""';
const FEEDBACK = 'kind="standby_feedback",scope="cluster",owner="",pid="3001",datname="",usename="repl",application_name="standby1",' +
  'backend_type="walsender",state="streaming",name="",query=""';

const age = (labels: string, values: string) => seriesOf(`pg_xmin_horizon_holder_age_xids{${labels}}`, values);
const evaluate = (series: SeriesData[], step = 3) =>
  rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP }).at(at(step)), at(step));

describe('xmin-horizon-held', () => {
  const cases: Array<[string, SeriesData[], boolean]> = [
    ['fires: a session holds the horizon past 5,000,000 XIDs', [age(SESSION, '1e6 3e6 5e6 6e6')], true],
    ['quiet: 4,999,999 XIDs', [age(SESSION, '1e6 3e6 4e6 4999999')], false],
    ['quiet: a logical slot\'s catalog_xmin holds only the catalogs', [age(LOGICAL_CATALOG, '1e7 1e7 1e7 2e7')], false],
    ['quiet: the holder went away (its series is stale)', [age(SESSION, '1e7 1e7 _ _')], false],
    ['quiet: age NULL', [age(SESSION, '1e7 1e7 1e7 null')], false],
  ];
  for (const [name, series, fires] of cases) {
    it(name, () => expect(evaluate(series).length).toBe(fires ? 1 : 0));
  }

  describe('a session\'s hold counts once its transaction has been open for min_held_ms', () => {
    const openSince = (agoMs: number) => seriesOf(`pg_xmin_horizon_holder_xact_start_timestamp_seconds{${SESSION}}`, `_ _ _ ${(at(3) - agoMs) / 1000}`);
    it('fires: open exactly min_held_ms', () => expect(evaluate([age(SESSION, '1e6 3e6 5e6 6e6'), openSince(DEFAULTS.minHeldMs)])).toHaveLength(1));
    it('quiet: open a second less (a burst of XIDs under a short report)', () =>
      expect(evaluate([age(SESSION, '1e6 3e6 5e6 6e6'), openSince(DEFAULTS.minHeldMs - 1_000)])).toEqual([]));
    it('fires: standby feedback, which has no start time, by its age alone', () => expect(evaluate([age(FEEDBACK, '1e6 3e6 5e6 6e6')])).toHaveLength(1));
  });

  it('names a session by pid, user@database, state, application and how long its transaction is open', () => {
    const xactStart = seriesOf(`pg_xmin_horizon_holder_xact_start_timestamp_seconds{${SESSION}}`, `_ _ _ ${(T0 - 7_200_000) / 1000}`);
    const [finding] = evaluate([age(SESSION, '1e6 3e6 5e6 6e6'), xactStart]);
    expect(finding?.summary).toBe(
      'xmin horizon is 6,000,000 XIDs old, held by session pid 4242 (app@shop, idle in transaction, application reporting) ' +
      'with a transaction open for 2 h, last query: SELECT * FROM orders WHERE id = ?; ' +
      'vacuum cannot remove rows deleted since, in database shop',
    );
  });

  const holders: Array<[string, string, RegExp]> = [
    ['REPACK\'s slot, holding every database', REPACK_SLOT,
      /held by REPACK \(CONCURRENTLY\)'s temporary slot pg_repack_71001 \(REPACK session pid 71000\); vacuum cannot remove rows deleted since, in every database$/],
    ['a prepared transaction', PREPARED, /held by prepared transaction "tx-42" in billing \(owner app\); vacuum cannot remove rows deleted since, in database billing$/],
    ['standby feedback', FEEDBACK, /held by standby standby1 through hot_standby_feedback/],
    ['REPACK\'s decoding worker session, holding every database',
      'kind="backend",scope="cluster",owner="repack_decoding_worker",pid="71001",datname="shop",usename="",application_name="",' +
      'backend_type="REPACK decoding worker",state="",name="",query=""',
      /held by REPACK \(CONCURRENTLY\) decoding worker pid 71001 \(shop\); vacuum cannot remove rows deleted since, in every database$/],
  ];
  for (const [name, labels, summary] of holders) {
    it(`names ${name}`, () => expect(evaluate([age(labels, '6e6 6e6 6e6 6e6')])[0]?.summary).toMatch(summary));
  }

  it('names the oldest holder and counts the others; error past autovacuum_freeze_max_age', () => {
    const [finding] = evaluate([age(SESSION, '6e6 6e6 6e6 6e6'), age(PREPARED, '3e8 3e8 3e8 3e8'), age(FEEDBACK, '1e6 1e6 1e6 1e6')]);
    expect(finding?.summary).toMatch(/^xmin horizon is 300,000,000 XIDs old, held by prepared transaction "tx-42".*\(and 1 more holder past 5,000,000 XIDs\)$/);
    expect(finding?.severity).toBe('error');
  });

  it('counts a session once, by its newest sample, though each query it ran left a series with other labels', () => {
    const earlier = SESSION.replace('SELECT * FROM orders WHERE id = 1', 'SELECT 1');
    const [finding] = evaluate([age(earlier, '6e6 6e6 6e6 _'), age(SESSION, '_ _ _ 6e6')]);
    expect(finding?.summary).toMatch(/held by session pid 4242 .*last query: SELECT \* FROM orders WHERE id = \?; vacuum cannot remove rows deleted since, in database shop$/);
    expect(finding?.evidence.facts.holders_over_threshold).toBe(1);
  });

  describe('what does not hold the horizon', () => {
    it('quiet on a standby: its queries hold nothing on the primary (feedback shows on the primary)', () => {
      const series = [age(SESSION, '6e6 6e6 6e6 6e6'), seriesOf('pg_standby_replay_standing_still_seconds', '0 0 0 0')];
      expect(evaluate(series)).toEqual([]);
    });
  });

  it('REPACK\'s slot holds every database from the run\'s start: its session\'s transaction age, not the slot\'s catalog_xmin age', () => {
    const session = 'kind="backend",scope="database",owner="repack_concurrently",pid="71000",datname="shop",usename="dba",application_name="psql",' +
      'backend_type="client backend",state="active",name="",query="REPACK (CONCURRENTLY) orders"';
    const [finding] = evaluate([age(REPACK_SLOT, '10 10 10 12'), age(session, '5e6 6e6 7e6 8e6')]);
    expect(finding?.summary).toMatch(
      /^xmin horizon is 8,000,000 XIDs old, held by REPACK \(CONCURRENTLY\)'s temporary slot pg_repack_71001 \(REPACK session pid 71000\); vacuum cannot remove rows deleted since, in every database$/,
    );
    expect(finding?.evidence.facts.holders_over_threshold).toBe(1);
  });

  it('a catalog-only hold past autovacuum_freeze_max_age fires: the catalogs cannot be frozen', () => {
    expect(evaluate([age(LOGICAL_CATALOG, '1e8 1e8 1e8 1.9e8')])).toEqual([]);
    const [finding] = evaluate([age(LOGICAL_CATALOG, '2e8 2e8 2e8 2.1e8')]);
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toBe(
      'xmin horizon is 210,000,000 XIDs old, held by logical replication slot sub1 (a subscription); ' +
      'vacuum cannot freeze the system catalogs in any database past it: wraparound approaches',
    );
  });

  it('keeps one alert per target while the holder changes, and resolves when the horizon moves on', () => {
    const series = [age(SESSION, '6e6 7e6 _ _ _ _'), age(PREPARED, '_ _ 8e6 9e6 1e6 1e6')];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series, staleAfterMs: 0 }), instants(0, 5)));
    // One alert: updated at once when the prepared transaction takes over (its summary names the new holder).
    expect(steps).toEqual([['fire', 'xmin-horizon-held/primary', 0], ['fire', 'xmin-horizon-held/primary', 2], ['resolve', 'xmin-horizon-held/primary', 4]]);
  });
});
