import { describe, expect, it } from 'vitest';
import type { WraparoundWarningDetails } from '../domain/index.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { levelsFor, wraparoundApproaching, DEFAULTS } from './wraparound-approaching.js';

const at = (step: number) => T0 + step * STEP;
const rule = wraparoundApproaching(DEFAULTS);

const xidAge = (values: string, datname = 'shop') => seriesOf(`pg_database_datfrozenxid_age_xids{datname="${datname}"}`, values);
const mxidAge = (values: string) => seriesOf('pg_database_datminmxid_age_mxids{datname="shop"}', values);
const warning = (step: number, d: Partial<WraparoundWarningDetails> = {}) => eventOf('wraparound_warning', {
  counter: 'xid', datname: 'shop', database_oid: null, remaining: 39_999_000, refusing: false, ...d,
}, { tsMs: at(step), level: 'WARNING' });
const evaluate = (series: SeriesData[], events: RuleEvent[] = [], step = 3) =>
  rule.evaluate(new MemoryRuleView({ series, events }).at(at(step)), at(step));

describe('wraparound-approaching', () => {
  const cases: Array<[string, SeriesData[], string | null]> = [
    ['warning: 400,000,000 XIDs, twice autovacuum_freeze_max_age', [xidAge('3e8 3.5e8 3.9e8 4e8')], 'warning'],
    ['quiet: 399,999,999 XIDs', [xidAge('3e8 3.5e8 3.9e8 399999999')], null],
    ['error: 1,000,000,000 XIDs', [xidAge('1e9')], 'error'],
    ['critical: vacuum_failsafe_age, 1,600,000,000 XIDs', [xidAge('1.6e9')], 'critical'],
    ['warning: 800,000,000 multixacts', [mxidAge('8e8')], 'warning'],
    ['quiet: 799,999,999 multixacts', [mxidAge('799999999')], null],
    ['quiet: age NULL', [xidAge('5e8 null')], null],
    ['quiet on a standby: it shows its primary\'s ages', [
      seriesOf('pg_database_datfrozenxid_age_xids{datname="shop"}', '5e8', { target: 'standby1' }),
      seriesOf('pg_standby_replay_lsn_bytes', '_ _ _ 1000', { target: 'standby1' })], null],
  ];
  for (const [name, series, severity] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      expect(findings.map((f) => f.severity)).toEqual(severity === null ? [] : [severity]);
    });
  }

  describe('judged against the server\'s own autovacuum_freeze_max_age, from its pg_settings sample', () => {
    const setting = (name: string, value: number) => seriesOf(`pg_settings_${name}`, `${value} ${value} ${value} ${value}`);
    const raised = setting('autovacuum_freeze_max_age', 1e9);

    it('raised to 1,000,000,000: ages up to it are normal; warning, error, critical further on', () => {
      expect(levelsFor('xid', [4e8, 1e9, 1.6e9], 1e9)).toEqual([1_286_870_912, 1_443_435_456, 1_600_000_000]);
      expect(evaluate([xidAge('9e8'), raised])).toEqual([]);
      expect(evaluate([xidAge('1286870911'), raised])).toEqual([]);
      const [finding] = evaluate([xidAge('1286870912'), raised]);
      expect(finding?.severity).toBe('warning');
      expect(finding?.summary).toMatch(/^database shop is 1,286,870,912 XIDs old \(age\(datfrozenxid\); autovacuum_freeze_max_age is 1,000,000,000\), /);
      expect(evaluate([xidAge('1.5e9'), raised])[0]?.severity).toBe('error');
    });

    it('critical no sooner than its failsafe, 1.05 times the setting', () => {
      expect(levelsFor('xid', [4e8, 1e9, 1.6e9], 1.9e9)[2]).toBe(1_995_000_000);
    });

    it('the default or a lowered setting keeps the defaults\' numbers', () => {
      expect(levelsFor('xid', [4e8, 1e9, 1.6e9], 2e8)).toEqual([4e8, 1e9, 1.6e9]);
      expect(levelsFor('xid', [4e8, 1e9, 1.6e9], 1e8)).toEqual([4e8, 1e9, 1.6e9]);
      expect(evaluate([xidAge('4e8'), setting('autovacuum_freeze_max_age', 1e8)])[0]?.severity).toBe('warning');
    });

    it('multixacts against autovacuum_multixact_freeze_max_age', () => {
      expect(evaluate([mxidAge('9e8'), setting('autovacuum_multixact_freeze_max_age', 1e9)])).toEqual([]);
      expect(evaluate([mxidAge('9e8'), setting('autovacuum_freeze_max_age', 1e9)])[0]?.severity).toBe('warning');
    });
  });

  it('from the log alone: the members space running short is critical, with its own words', () => {
    const members = warning(1, { counter: 'multixact_member', datname: null, database_oid: 16401, remaining: 9216 });
    const [finding] = evaluate([], [members]);
    expect(finding).toMatchObject({ severity: 'critical', labels: { datname: 'OID 16401', counter: 'multixact_member' } });
    expect(finding?.summary).toBe('the server warns database with OID 16401 must be vacuumed before 9,216 more multixact members are used: ' +
      'the space every multixact\'s members share runs out before the multixact IDs do');
  });

  it('names a forgotten logical slot: its catalog_xmin keeps the catalogs, so datfrozenxid, from moving', () => {
    const slot = seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_catalog_xmin",scope="catalog",owner="logical_decoding",name="forgotten",pid=""}', '4.2e8');
    expect(evaluate([xidAge('4.5e8'), slot])[0]?.summary).toMatch(/; the xmin horizon is held by logical decoding slot forgotten, 420,000,000 XIDs old$/);
  });

  it('says how old, against what, how much is left, and names what holds the horizon', () => {
    const holder = seriesOf('pg_xmin_horizon_holder_age_xids{kind="prepared_xact",scope="database",datname="shop",name="tx-42",pid=""}', '4.1e8');
    const [finding] = evaluate([xidAge('4.5e8'), holder]);
    expect(finding?.summary).toBe(
      'database shop is 450,000,000 XIDs old (age(datfrozenxid); autovacuum_freeze_max_age defaults to 200,000,000), ' +
      '21% of the way to wraparound: about 1,697,483,648 left before the server refuses new XIDs; ' +
      'the xmin horizon is held by prepared transaction "tx-42" in shop, 410,000,000 XIDs old',
    );
    expect(finding?.evidence.series.map((s) => s.name)).toEqual(['pg_database_datfrozenxid_age_xids', 'pg_xmin_horizon_holder_age_xids']);
  });

  it('does not blame a session of another database, nor a holder younger than vacuum_freeze_min_age', () => {
    const other = seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",datname="billing",pid="7"}', '4e8');
    const young = seriesOf('pg_xmin_horizon_holder_age_xids{kind="slot_xmin",scope="cluster",name="s1"}', '49999999');
    expect(evaluate([xidAge('4.5e8'), other, young])[0]?.summary).not.toMatch(/held by/);
  });

  it('from the log alone: the server\'s own warning is critical, one alert for every repetition', () => {
    const findings = evaluate([], [warning(1), warning(2, { remaining: 39_998_000 })]);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.severity).toBe('critical');
    expect(findings[0]?.summary).toBe('the server warns database "shop" must be vacuumed within 39,998,000 transactions (2 times, last 5 s ago)');
    expect(findings[0]?.evidence.series).toEqual([]);
  });

  it('names the refusal and a database known only by OID', () => {
    const [finding] = evaluate([], [warning(2, { counter: 'multixact', datname: null, database_oid: 16401, remaining: null, refusing: true })]);
    expect(finding?.summary).toBe('the server refuses commands that assign new MultiXactIds to avoid wraparound data loss in database with OID 16401');
    expect(finding?.dedupKey).toBe('wraparound-approaching/primary/OID 16401/multixact');
  });

  it('joins the sampled age and the server\'s warning for one database into one alert', () => {
    const findings = evaluate([xidAge('2.1e9')], [warning(2)]);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.summary).toMatch(/^database shop is 2,100,000,000 XIDs old .*; the server warns database "shop" must be vacuumed/);
  });

  it('fires once while the age climbs through the thresholds, resolves when vacuum freezes', () => {
    const series = [xidAge('3e8 4e8 5e8 1e9 1e9 2e8 2e8', 'shop'), xidAge('1e8 1e8 1e8 1e8 1e8 1e8 1e8', 'billing')];
    const view = new MemoryRuleView({ series, staleAfterMs: STEP });
    const transitions = timeline([rule], view, instants(0, 6));
    const key = 'wraparound-approaching/primary/shop/xid';
    expect(transitionSteps(transitions)).toEqual([['fire', key, 1], ['fire', key, 3], ['resolve', key, 5]]);
    expect(transitions.map((t) => t.severity)).toEqual(['warning', 'error', undefined]);
  });
});
