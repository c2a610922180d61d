import { describe, expect, it } from 'vitest';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { replicationSlotDanger, DEFAULTS } from './replication-slot-danger.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// Steps of one minute: the growth window (10 min) and minInactiveMs (5 min) span a few of them.
const MINUTE = 60_000;
const rule = replicationSlotDanger({ ...DEFAULTS, minInactiveMs: 2 * MINUTE, growthWindowMs: 3 * MINUTE });
const SLOT = 'slot_name="cdc",slot_type="logical",owner="logical_decoding"';
const GB = 1024 ** 3;

const slot = (name: string, values: string, extra = '') =>
  seriesOf(`pg_replication_slots_${name}{${SLOT}${extra}}`, values, { stepMs: MINUTE });
const evaluate = (series: SeriesData[], events: RuleEvent[] = [], step = 3) =>
  rule.evaluate(new MemoryRuleView({ series, events, staleAfterMs: MINUTE }).at(T0 + step * MINUTE), T0 + step * MINUTE);

describe('replication-slot-danger', () => {
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['fires: inactive for 3 min, retaining 1.5 GB and growing', [slot('active', '0 0 0 0'), slot('retained_wal_bytes', `${GB} ${1.2 * GB} ${1.4 * GB} ${1.5 * GB}`)],
      /^replication slot cdc \(logical, owner logical_decoding\): inactive, retaining 1\.5 GB of WAL \(\+512 MB in 3 min\): pg_wal grows/],
    ['quiet: retaining just under 1 GB', [slot('active', '0 0 0 0'), slot('retained_wal_bytes', `${GB - 1} ${GB - 1} ${GB - 1} ${GB - 1}`)], null],
    ['quiet: inactive for one sample only (a subscriber reconnecting)', [slot('active', '1 1 1 0'), slot('retained_wal_bytes', `${2 * GB} ${2 * GB} ${2 * GB} ${2 * GB}`)], null],
    ['quiet: active, retaining much (a consumer that is behind, not gone)', [slot('active', '1 1 1 1'), slot('retained_wal_bytes', `${5 * GB} ${5 * GB} ${5 * GB} ${5 * GB}`)], null],
    ['fires: PG 17 inactive_since says how long', [slot('active', '_ _ _ 0'), slot('retained_wal_bytes', `_ _ _ ${2 * GB}`),
      slot('inactive_since_timestamp_seconds', `_ _ _ ${(T0 - 7_200_000) / 1000}`)], /: inactive for 2 h 3 min, retaining 2\.0 GB of WAL/],
    ['fires: wal_status unreserved', [slot('active', '1 1 1 1'), slot('wal_status', '1 1 1 1', ',wal_status="unreserved"')], /wal_status unreserved: it retains more than max_slot_wal_keep_size/],
    ['quiet: wal_status extended', [slot('active', '1 1 1 1'), slot('wal_status', '1 1 1 1', ',wal_status="extended"')], null],
    ['fires: wal_status lost', [slot('active', '0'), slot('wal_status', '1', ',wal_status="lost"')].map((s) => ({ ...s, points: s.points.map((p) => ({ ...p, tsMs: p.tsMs + 3 * MINUTE })) })),
      /wal_status lost: the WAL it needs is gone/],
    ['fires: xmin 100,000,000 XIDs old', [slot('active', '1 1 1 1'), slot('xmin_age_xids', '9e7 9e7 9e7 1e8')], /its xmin is 100,000,000 XIDs old/],
    ['quiet: xmin 99,999,999 XIDs old', [slot('active', '1 1 1 1'), slot('xmin_age_xids', '9e7 9e7 9e7 99999999')], null],
    ['fires: PG 17 invalidated', [slot('active', '0 0 0 0'), slot('invalidated', '1 1 1 1', ',invalidation_reason="wal_removed"')],
      /: invalidated: WAL it needed was removed \(max_slot_wal_keep_size\); its consumer must be re-created/],
    ['quiet: PG 17 not invalidated', [slot('active', '1 1 1 1'), slot('invalidated', '0 0 0 0', ',invalidation_reason=""')], null],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings[0]?.summary).toMatch(summary);
    });
  }

  it('escalates to error past 16 GB retained, and puts every danger of one slot in one alert', () => {
    const [finding, ...rest] = evaluate([slot('active', '0 0 0 0'), slot('retained_wal_bytes', `${17 * GB} ${17 * GB} ${17 * GB} ${17 * GB}`),
      slot('wal_status', '1 1 1 1', ',wal_status="unreserved"')]);
    expect(rest).toEqual([]);
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toMatch(/inactive, retaining 17 GB of WAL \(\+0 bytes in 3 min\).*; wal_status unreserved/);
  });

  it('from the log alone: an invalidation line, with its cause and the bytes past the limit', () => {
    const line = eventOf('slot_invalidated', {
      slot: 'cdc', phase: 'invalidated', reason: 'wal_removed', terminated_pid: null, restart_lsn: '3/1C000000', exceeded_bytes: 16_777_216,
      conflict_xid: null, idle_s: null, idle_timeout_s: null, detail: null,
    }, { tsMs: T0 + MINUTE });
    const holder = eventOf('slot_invalidated', { ...line.details, phase: 'terminating_holder', terminated_pid: 70112 }, { tsMs: T0 + MINUTE });
    const findings = evaluate([], [holder, line]);
    expect(findings.map((f) => [f.dedupKey, f.severity, f.summary])).toEqual([[
      'replication-slot-danger/primary/cdc', 'error',
      'replication slot cdc: invalidated at 00:01:00 UTC: WAL it needed was removed (max_slot_wal_keep_size) (restart_lsn past the limit by 16 MB); ' +
      'its consumer must be re-created from a new copy',
    ]]);
    expect(findings[0]?.evidence.eventIds).toEqual([line.id]);

    // Sampled as invalidated too (PG 17+): one danger, citing both.
    const [both] = evaluate([slot('active', '0 0 0 0'), slot('invalidated', '1 1 1 1', ',invalidation_reason="wal_removed"')], [line]);
    expect(both?.summary.match(/invalidated/g)).toHaveLength(1);
    expect(both?.evidence.eventIds).toEqual([line.id]);
    expect(both?.evidence.facts.dangers).toBe('invalidated');
  });

  it('fires once while the slot stays inactive (its summary only refreshed), resolves when its consumer returns', () => {
    const series = [slot('active', '0 0 0 0 0 1 1'), slot('retained_wal_bytes', `${2 * GB} ${2 * GB} ${3 * GB} ${3 * GB} ${4 * GB} ${GB} 0`)];
    const steps = transitionSteps(
      timeline([rule], new MemoryRuleView({ series, staleAfterMs: MINUTE }), instants(0, 6, MINUTE), { refireMinIntervalMs: 3_600_000 }), T0, MINUTE,
    );
    expect(steps).toEqual([['fire', 'replication-slot-danger/primary/cdc', 1], ['resolve', 'replication-slot-danger/primary/cdc', 5]]);
  });
});
