import { describe, expect, it } from 'vitest';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { replicationSlotDanger, DEFAULTS } from './replication-slot-danger.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// Steps of one minute, the rule at its defaults: the growth window (10 min) is ten steps, minInactiveMs (5 min) five.
const MINUTE = 60_000;
const rule = replicationSlotDanger();
const LAST = DEFAULTS.growthWindowMs / MINUTE;
const INACTIVE_STEPS = DEFAULTS.minInactiveMs / MINUTE;
const SLOT = 'slot_name="cdc",slot_type="logical",owner="logical_decoding"';
const GB = 1024 ** 3;
const MB = 1024 ** 2;

const slot = (name: string, values: string, extra = '', target = 'primary') =>
  seriesOf(`pg_replication_slots_${name}{${SLOT}${extra}}`, values, { stepMs: MINUTE, target });
const evaluate = (series: SeriesData[], events: RuleEvent[] = [], step = LAST) =>
  rule.evaluate(new MemoryRuleView({ series, events, staleAfterMs: MINUTE }).at(T0 + step * MINUTE), T0 + step * MINUTE);

/** `value` for steps 0..LAST: '0 0 0 ...'. */
const flat = (value: number | string, steps = LAST + 1) => Array<string>(steps).fill(String(value)).join(' ');
/** `a` for `n` steps, then `b` up to LAST. */
const then = (a: number | string, n: number, b: number | string) => `${flat(a, n)} ${flat(b, LAST + 1 - n)}`.trim();
/** From `from` by `by` a step, steps 0..LAST. */
const growing = (from: number, by: number) => Array.from({ length: LAST + 1 }, (_, i) => String(from + i * by)).join(' ');
/** A consumer that confirms nothing: confirmed_flush_lsn standing still. */
const stillPosition = slot('confirmed_flush_lsn_bytes', flat(5e9));
const retaining = (bytes: number) => slot('retained_wal_bytes', flat(bytes));

describe('replication-slot-danger at its defaults', () => {
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['fires: inactive for 10 min, retaining 1.5 GB and growing', [slot('active', flat(0)), slot('retained_wal_bytes', growing(GB, 0.05 * GB)), stillPosition],
      /^replication slot cdc \(logical, owner logical_decoding\): inactive, retaining 1\.5 GB of WAL \(\+512 MB in 10 min\): pg_wal grows/],
    ['fires: inactive for exactly minInactiveMs', [slot('active', then(1, LAST - INACTIVE_STEPS, 0)), retaining(2 * GB), stillPosition], /: inactive, retaining 2\.0 GB/],
    ['quiet (near miss): inactive for one step less than minInactiveMs', [slot('active', then(1, LAST - INACTIVE_STEPS + 1, 0)), retaining(2 * GB), stillPosition], null],
    ['quiet: retaining just under 1 GB', [slot('active', flat(0)), retaining(GB - 1), stillPosition], null],
    ['quiet: samples for 2 min only (pgvigil just started): 5 min of inactivity not seen yet',
      [slot('active', `${flat('_', LAST - 1)} 0 0`), slot('retained_wal_bytes', `${flat('_', LAST - 1)} ${2 * GB} ${2 * GB}`)], null],
    ['quiet: a client that reads the slot with SQL on a schedule: inactive in every sample, but it moves',
      [slot('active', flat(0)), retaining(2 * GB), slot('confirmed_flush_lsn_bytes', growing(5e9, 1e6))], null],
    ['quiet: active, retaining much, its consumer confirming (behind, not stuck)',
      [slot('active', flat(1)), retaining(5 * GB), slot('confirmed_flush_lsn_bytes', growing(5e9, 1e6))], null],
    ['fires: active, but its consumer confirmed nothing for 5 min while WAL piles up',
      [slot('active', flat(1)), slot('active_pid', flat(4242)), slot('retained_wal_bytes', growing(GB, 0.1 * GB)), stillPosition],
      /: active, but its consumer \(pid 4242\) has confirmed nothing for 5 min while retaining 2\.0 GB of WAL \(\+1\.0 GB in 10 min\): pg_wal grows until it catches up/],
    ['quiet (near miss): active, its consumer last confirmed 4 min ago',
      [slot('active', flat(1)), retaining(2 * GB), slot('confirmed_flush_lsn_bytes', then(5e9, LAST - INACTIVE_STEPS + 1, 6e9))], null],
    ['fires: PG 17 inactive_since says how long', [slot('active', `${flat('_', LAST)} 0`), slot('retained_wal_bytes', `${flat('_', LAST)} ${2 * GB}`),
      slot('inactive_since_timestamp_seconds', `${flat('_', LAST)} ${(T0 - 7_200_000) / 1000}`)], /: inactive for 2 h 10 min, retaining 2\.0 GB of WAL/],
    ['fires: wal_status unreserved', [slot('active', flat(1)), slot('wal_status', flat(1), ',wal_status="unreserved"')], /wal_status unreserved: it retains more than max_slot_wal_keep_size/],
    ['quiet: wal_status extended', [slot('active', flat(1)), slot('wal_status', flat(1), ',wal_status="extended"')], null],
    ['fires: wal_status lost', [slot('active', flat(0)), slot('wal_status', flat(1), ',wal_status="lost"')], /wal_status lost: the WAL it needs is gone/],
    ['fires: xmin 100,000,000 XIDs old', [slot('active', flat(1)), slot('xmin_age_xids', `${flat(9e7, LAST)} 1e8`)], /its xmin is 100,000,000 XIDs old/],
    ['quiet: xmin 99,999,999 XIDs old', [slot('active', flat(1)), slot('xmin_age_xids', `${flat(9e7, LAST)} 99999999`)], null],
    ['fires: PG 17 invalidated', [slot('active', flat(0)), slot('invalidated', flat(1), ',invalidation_reason="wal_removed"')],
      /: invalidated: WAL it needed was removed \(max_slot_wal_keep_size\); its consumer must be re-created/],
    ['quiet: PG 17 not invalidated', [slot('active', flat(1)), slot('invalidated', flat(0), ',invalidation_reason=""')], null],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings[0]?.summary).toMatch(summary);
    });
  }

  describe('a synced failover slot on a standby (PG 17+): never active there, mirrors the primary\'s slot', () => {
    const synced = (extra: SeriesData[]) => [
      slot('info', flat(1), ',plugin="pgoutput",failover="true",synced="true"', 'standby1'),
      slot('active', flat(0), '', 'standby1'), slot('retained_wal_bytes', flat(3 * GB), '', 'standby1'),
      slot('confirmed_flush_lsn_bytes', flat(5e9), '', 'standby1'), ...extra,
    ];

    it('quiet: inactive and retaining is what a synced slot is (dropping it would break failover)', () => {
      expect(evaluate(synced([]))).toEqual([]);
    });

    it('fires: invalidated, failover would lose its subscriber', () => {
      const [finding] = evaluate(synced([slot('invalidated', flat(1), ',invalidation_reason="rows_removed"', 'standby1')]));
      expect(finding?.summary).toMatch(/^replication slot cdc \(logical, owner logical_decoding\): invalidated: rows it needed were removed/);
      expect(finding?.summary).not.toMatch(/dropped/);
    });
  });

  describe('safe_wal_size (max_slot_wal_keep_size set): about to lose its WAL is critical', () => {
    // WAL written at 100 MB a minute: the slot's restart_lsn stands still while what it retains grows.
    const writing = (safeBytes: number | null) => [
      slot('active', flat(1)), slot('restart_lsn_bytes', flat(1e9)), slot('retained_wal_bytes', growing(GB, 100 * MB)),
      slot('confirmed_flush_lsn_bytes', growing(5e9, 1e6)), slot('safe_wal_size_bytes', `${flat('null', LAST)} ${safeBytes ?? 'null'}`),
    ];
    const cases: Array<[string, number | null, RegExp | null]> = [
      ['fires: 2 GB left at 100 MB/min: gone in about 20 min', 2 * GB,
        /: about to lose the WAL it needs: 2\.0 GB left before max_slot_wal_keep_size, gone in about 20 min at 1\.7 MB\/s of WAL; then it is invalidated/],
      ['quiet (near miss): 3.1 GB left, gone in 32 min (past the 30 min)', 3.1 * GB, null],
      ['fires: nothing left: gone at the next checkpoint', -5 * MB, /: about to lose the WAL it needs: 0 bytes left before max_slot_wal_keep_size, gone at the next checkpoint/],
      ['quiet: no max_slot_wal_keep_size (safe_wal_size NULL)', null, null],
    ];
    for (const [name, safe, summary] of cases) {
      it(name, () => {
        const findings = evaluate(writing(safe));
        if (summary === null) expect(findings).toEqual([]);
        else {
          expect(findings[0]?.summary).toMatch(summary);
          expect(findings[0]?.severity).toBe('critical');
        }
      });
    }
  });

  it('escalates to error past 16 GB retained, and puts every danger of one slot in one alert', () => {
    const [finding, ...rest] = evaluate([slot('active', flat(0)), retaining(17 * GB), stillPosition, slot('wal_status', flat(1), ',wal_status="unreserved"')]);
    expect(rest).toEqual([]);
    expect(finding?.severity).toBe('error');
    expect(finding?.summary).toMatch(/inactive, retaining 17 GB of WAL \(\+0 bytes in 10 min\).*; wal_status unreserved/);
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
    const [both] = evaluate([slot('active', flat(0)), slot('invalidated', flat(1), ',invalidation_reason="wal_removed"')], [line]);
    expect(both?.summary.match(/invalidated/g)).toHaveLength(1);
    expect(both?.evidence.eventIds).toEqual([line.id]);
    expect(both?.evidence.facts.dangers).toBe('invalidated');
  });

  it('fires once while the slot stays inactive (its summary only refreshed), resolves when its consumer returns', () => {
    const series = [slot('active', then(0, 8, 1)), slot('retained_wal_bytes', growing(2 * GB, GB)), slot('confirmed_flush_lsn_bytes', `${flat(5e9, 8)} 6e9 7e9 8e9`)];
    const steps = transitionSteps(
      timeline([rule], new MemoryRuleView({ series, staleAfterMs: MINUTE }), instants(0, LAST, MINUTE), { refireMinIntervalMs: 3_600_000 }), T0, MINUTE,
    );
    expect(steps).toEqual([['fire', 'replication-slot-danger/primary/cdc', INACTIVE_STEPS], ['resolve', 'replication-slot-danger/primary/cdc', 8]]);
  });
});
