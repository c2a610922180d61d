import { describe, expect, it } from 'vitest';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { replayStalled, DEFAULTS as STALLED_DEFAULTS } from './replay-stalled.js';
import { replayStalledOnUnlink, DEFAULTS } from './replay-stalled-on-unlink.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData, TargetInfo } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { ddlDetails, recoveryWaitDetails, restartDetails } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const unlinkRule = replayStalledOnUnlink(DEFAULTS);
const stalledRule = replayStalled(STALLED_DEFAULTS);
const CLUSTER: TargetInfo[] = [
  { name: 'primary', cluster: 'orders' },
  { name: 'standby1', cluster: 'orders' },
  { name: 'other-primary', cluster: 'billing' },
];

/**
 * max_standby_streaming_delay = -1: replay waits on standby queries for ever, so a conflict wait
 * is a stall from min_stall_seconds (with a delay, only past it: see the test at the end).
 */
const WAITS_FOR_EVER = seriesOf('pg_settings_max_standby_streaming_delay_seconds', '-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1', { target: 'standby1' });

// Replay stands still from step 2 to step 8 (standing-still seconds grow 5 s per step), moves at step 9.
const standby = (still = '0 0 0 5 10 15 20 25 30 0 0', extra: SeriesData[] = []): SeriesData[] => [
  WAITS_FOR_EVER,
  seriesOf('pg_standby_replay_standing_still_seconds', still, { target: 'standby1' }),
  seriesOf('pg_standby_replay_pending_bytes', '0 0 1e6 2e8 4e8 6e8 8e8 1e9 1.2e9 0 0', { target: 'standby1' }),
  ...extra,
];

const drop = (step: number, target = 'primary') =>
  eventOf('ddl', ddlDetails('DROP TABLE', 'build_logs'), { tsMs: at(step), target, pid: 500, database: 'ci' });

const conflictWait = (step: number, phase: 'waiting' | 'finished', redo: string | null = null) =>
  eventOf('recovery_conflict_wait', recoveryWaitDetails({
    phase, reason: 'lock', wait_ms: phase === 'waiting' ? 1000 : 11000, conflicting_pids: phase === 'waiting' ? [52311] : null,
    redo_lsn: '3/5A0012F8', redo_record: 'Transaction/COMMIT', redo_description: redo,
  }), { tsMs: at(step), target: 'standby1', pid: 4011 });

const view = (events: RuleEvent[], series = standby()) => new MemoryRuleView({ events, series, targets: CLUSTER, staleAfterMs: STEP });
const firing = (events: RuleEvent[], step: number, series?: SeriesData[]) => {
  const v = view(events, series).at(at(step));
  return { unlink: unlinkRule.evaluate(v, at(step)), stalled: stalledRule.evaluate(v, at(step)) };
};

describe('replay-stalled-on-unlink', () => {
  const cases: Array<[string, RuleEvent[], number, boolean]> = [
    ['fires: replay stands still 15 s after a DROP TABLE on the primary of the same cluster', [drop(1)], 5, true],
    ['quiet: standing still only 5 s so far (under 10 s)', [drop(1)], 3, false],
    ['quiet: replay moves again', [drop(1)], 9, false],
    ['quiet: the DROP was on a server of another cluster', [drop(1, 'other-primary')], 5, false],
    ['quiet: the DROP was 20 min before the stall', [drop(-240)], 5, false],
    ['quiet: the DROP came after replay had stopped (not its cause)', [drop(5)], 6, false],
  ];
  for (const [name, events, step, fires] of cases) {
    it(name, () => expect(firing(events, step).unlink.length).toBe(fires ? 1 : 0));
  }

  it('without a cluster config: one primary and its standby are one group; with two primaries, which one feeds the standby is unknown', () => {
    const loose = (...names: string[]) => names.map((name) => ({ name, cluster: null }));
    const unlinkOn = (targets: TargetInfo[], dropOn: string) =>
      unlinkRule.evaluate(new MemoryRuleView({ events: [drop(1, dropOn)], series: standby(), targets, staleAfterMs: STEP }).at(at(5)), at(5));
    expect(unlinkOn(loose('primary', 'standby1'), 'primary')).toHaveLength(1);
    expect(unlinkOn(loose('primary', 'other-primary', 'standby1'), 'other-primary')).toEqual([]);
  });

  it('names the relation, the primary and the time of the DROP, and the WAL waiting: probably, with only the DROP to go on', () => {
    const event = drop(1);
    const [finding] = firing([event], 5).unlink;
    expect(finding?.summary).toBe(
      'replay on standby1 stalled for 15 s (572 MB of received WAL waiting) probably on unlink of build_logs (DROP TABLE on primary at 00:00:05 UTC): ' +
      "the unlink logs nothing; PG 19's pg_stat_recovery (replay inside one record) would make it certain",
    );
    expect(finding?.evidence.facts.possible).toBe(true);
    expect(finding?.evidence.eventIds).toEqual([event.id]);
    expect(finding?.target).toBe('standby1');
  });

  it('certain when PG 19 shows replay inside one record after the DROP', () => {
    const series = standby(undefined, [seriesOf('pg_stat_recovery_in_record_bytes', '0 0 0 4e7 4e7 4e7', { target: 'standby1' })]);
    const [finding] = firing([drop(1)], 5, series).unlink;
    expect(finding?.summary).toBe(
      'replay on standby1 stalled for 15 s (572 MB of received WAL waiting) on unlink of build_logs (DROP TABLE on primary at 00:00:05 UTC)',
    );
    expect(finding?.evidence.facts).toMatchObject({ possible: false, inside_one_record: true });
  });

  it('not when PG 19 shows replay between records: the DROP logged before is not what replay stands on', () => {
    const series = standby(undefined, [seriesOf('pg_stat_recovery_in_record_bytes', '0 0 0 0 0 0', { target: 'standby1' })]);
    const { unlink, stalled } = firing([drop(1)], 5, series);
    expect(unlink).toEqual([]);
    expect(stalled[0]?.evidence.facts.cause).toBe('unknown');
  });

  it('without a logged DROP, a conflict that ended on a commit dropping files names the files', () => {
    const events = [conflictWait(2, 'waiting', 'xact'), conflictWait(4, 'finished', '2026-01-01 00:00:00 UTC; rels: base/16384/16402 base/16384/16405')];
    const [finding] = firing(events, 6).unlink;
    expect(finding?.summary).toBe(
      'replay on standby1 stalled for 20 s (763 MB of received WAL waiting) on unlink of dropped relation files ' +
      '(committed at 3/5A0012F8: base/16384/16402 base/16384/16405)',
    );
  });

  it('while the recovery conflict is open the stall is replay-stalled\'s; once it ends, the unlink is this rule\'s', () => {
    const events = [drop(1), conflictWait(2, 'waiting'), conflictWait(5, 'finished')];
    const steps = transitionSteps(timeline([unlinkRule, stalledRule], view(events), instants(0, 11)));
    expect(steps).toEqual([
      ['fire', 'replay-stalled/standby1', 4],
      ['fire', 'replay-stalled-on-unlink/standby1', 5],
      ['resolve', 'replay-stalled/standby1', 5],
      ['resolve', 'replay-stalled-on-unlink/standby1', 9],
    ]);
  });
});

describe('replay-stalled', () => {
  it('a wait within max_standby_streaming_delay is the setting at work: quiet until the delay has passed', () => {
    const wait = conflictWait(2, 'waiting');
    // 30 s, as sampled (and PostgreSQL's default when it is not): the standby cancels the query then.
    const delayed = standby(undefined, []).filter((s) => s !== WAITS_FOR_EVER)
      .concat(seriesOf('pg_settings_max_standby_streaming_delay_seconds', '30 30 30 30 30 30 30 30 30 30 30', { target: 'standby1' }));
    expect(firing([wait], 7, delayed).stalled).toEqual([]);
    expect(firing([wait], 8, delayed).stalled.map((f) => f.evidence.facts.cause)).toEqual(['conflict']);
    const unsampled = standby(undefined, []).filter((s) => s !== WAITS_FOR_EVER);
    expect(firing([wait], 7, unsampled).stalled).toEqual([]);
  });

  it('names the standby query holding the lock replay waits for', () => {
    const wait = conflictWait(2, 'waiting');
    const [finding] = firing([drop(1), wait], 4).stalled;
    expect(finding?.summary).toBe(
      'replay on standby1 has not advanced for 10 s (381 MB of received WAL waiting): replay waiting on a lock held by ' +
      'standby query pid 52311 (recovery conflict on lock, probably for DROP TABLE of build_logs on primary at 00:00:05 UTC)',
    );
    expect(finding?.evidence.facts).toMatchObject({ cause: 'conflict', conflict_reason: 'lock', conflicting_pids: '52311' });
    expect(firing([drop(1), wait], 4).unlink).toEqual([]);
  });

  it('a conflict on something other than a lock (a snapshot) is not put on a DROP logged before it', () => {
    const snapshot = eventOf('recovery_conflict_wait', recoveryWaitDetails({
      phase: 'waiting', reason: 'snapshot', wait_ms: 1000, conflicting_pids: [52311], redo_lsn: '3/5A0012F8', redo_record: 'Heap2/PRUNE_VACUUM_SCAN',
    }), { tsMs: at(2), target: 'standby1', pid: 4011 });
    const [finding] = firing([drop(1), snapshot], 4).stalled;
    expect(finding?.summary).toMatch(/: replay waiting for rows still visible to standby query pid 52311 \(recovery conflict on snapshot\)$/);
    expect(finding?.evidence.eventIds).toEqual([snapshot.id]);
  });

  it('after a pgvigil restart (standing still counted from its first sample), a wait still open from before is still the cause', () => {
    // pgvigil starts at step 3: standing still counts from there; the wait began at step 2 - 1 s.
    const restarted = (replayLsn: string) => [
      WAITS_FOR_EVER,
      seriesOf('pg_standby_replay_standing_still_seconds', '_ _ _ 0 5 10 15', { target: 'standby1' }),
      seriesOf('pg_standby_replay_pending_bytes', '_ _ _ 2e8 4e8 6e8 8e8', { target: 'standby1' }),
      seriesOf('pg_standby_replay_lsn_bytes', replayLsn, { target: 'standby1' }),
    ];
    const wait = conflictWait(2, 'waiting');
    expect(firing([wait], 6, restarted('_ _ _ 7e9 7e9 7e9 7e9')).stalled[0]?.evidence.facts).toMatchObject({ cause: 'conflict', conflicting_pids: '52311' });
    // Replay moved after the wait began: its end went unlogged, so it is not this stall's cause.
    expect(firing([wait], 6, restarted('_ _ _ 6e9 7e9 7e9 7e9')).stalled[0]?.evidence.facts.cause).toBe('unknown');
  });

  const extra = (spec: string, values: string) => standby(undefined, [seriesOf(spec, values, { target: 'standby1' })]);
  const causes: Array<[string, SeriesData[], RegExp]> = [
    ['paused', extra('pg_standby_replay_paused', '0 0 1 1 1 1'), /: replay is paused \(pg_wal_replay_pause\(\)\)$/],
    ['a recovery conflict seen only in the startup process\'s wait event',
      extra('pg_standby_startup_wait_event{wait_event_type="Lock",wait_event="relation"}', '1 1 1 1 1 1'),
      /: replay waiting on a recovery conflict \(startup process waits on Lock\/relation\)$/],
    ['inside one record (PG 19) with nothing logged', extra('pg_stat_recovery_in_record_bytes', '0 0 0 4e7 4e7 4e7'),
      /: replay stuck inside one WAL record with no recovery conflict/],
    ['nothing known', standby(), /: cause unknown \(no recovery conflict logged, no table dropped\)$/],
  ];
  for (const [name, series, summary] of causes) {
    it(`says what is known: ${name}`, () => {
      const [finding] = firing([], 5, series).stalled;
      expect(finding?.summary).toMatch(summary);
    });
  }

  it('judges the startup process by its newest sample, not by a wait seen before (one series per wait event)', () => {
    const series = standby(undefined, [
      seriesOf('pg_standby_startup_wait_event{wait_event_type="Lock",wait_event="relation"}', '1 1 1 _ _ _', { target: 'standby1' }),
      seriesOf('pg_standby_startup_wait_event{wait_event_type="",wait_event=""}', '_ _ _ 1 1 1', { target: 'standby1' }),
    ]);
    const v = new MemoryRuleView({ series, targets: CLUSTER, staleAfterMs: 60_000 }).at(at(5));
    expect(stalledRule.evaluate(v, at(5))[0]?.summary).toMatch(/: cause unknown \(no recovery conflict logged, no table dropped\)$/);
  });

  it('does not take a wait that began before replay last moved as the cause (its end was never logged: a restart)', () => {
    const stale = eventOf('recovery_conflict_wait', recoveryWaitDetails({ phase: 'waiting', reason: 'lock', wait_ms: 1000, conflicting_pids: [52311] }),
      { tsMs: at(-20), target: 'standby1', pid: 4011 });
    const [finding] = firing([stale], 5).stalled;
    expect(finding?.evidence.facts.cause).toBe('unknown');
    expect(finding?.evidence.eventIds).toEqual([]);
  });

  it('stays quiet while replay keeps up', () => {
    expect(firing([], 5, standby('0 0 0 0 0 0 0')).stalled).toEqual([]);
  });
});

describe('replay stalls from the standby\'s log alone (no replay samples)', () => {
  const logOnly = (events: RuleEvent[]) => new MemoryRuleView({ events, targets: CLUSTER, staleAfterMs: STEP });
  const wait = (step: number, phase: 'waiting' | 'finished', waitMs: number, redo: string | null = null) =>
    eventOf('recovery_conflict_wait', recoveryWaitDetails({
      phase, reason: 'lock', wait_ms: waitMs, conflicting_pids: phase === 'waiting' ? [52311] : null,
      redo_lsn: '3/5A0012F8', redo_record: redo ? 'Transaction/COMMIT' : 'Standby/LOCK', redo_description: redo,
    }), { tsMs: at(step), target: 'standby1', pid: 4011 });
  const cancel = (step: number) => eventOf('recovery_conflict', {
    reason: 'lock', fatal: false, detail: 'User was holding a relation lock for too long.', pid: 52311, database: 'ci', user: 'app', statement: 'SELECT 1',
  }, { tsMs: at(step), target: 'standby1', pid: 52311, level: 'ERROR' });
  const steps = (events: RuleEvent[], to = 12) => transitionSteps(timeline([unlinkRule, stalledRule], logOnly(events), instants(0, to)));

  it('a logged wait: fires once past 10 s, resolves when `finished waiting` is logged', () => {
    // Waiting since step 2 - 1 s: 6 s at step 3 (quiet), 11 s at step 4.
    expect(steps([wait(2, 'waiting', 1000), wait(7, 'finished', 26_000)])).toEqual([
      ['fire', 'replay-stalled/standby1', 4],
      ['resolve', 'replay-stalled/standby1', 7],
    ]);
  });

  it('names the wait exactly and cites no series, so its basis is the log', () => {
    const events = [wait(2, 'waiting', 1000), cancel(6)];
    const [finding] = stalledRule.evaluate(logOnly(events).at(at(6)), at(6));
    expect(finding?.summary).toBe(
      'replay on standby1 has not advanced for 21 s (from its log): replay waiting on a lock held by standby query pid 52311 ("SELECT 1") (recovery conflict on lock)',
    );
    expect(finding?.evidence.series).toEqual([]);
    expect(finding?.evidence.eventIds).toEqual(events.map((e) => e.id));
  });

  it('a wait whose end was never logged ends with a restart of the standby', () => {
    const restart = eventOf('server_restart', restartDetails('ready'), { tsMs: at(6), target: 'standby1' });
    expect(steps([wait(2, 'waiting', 1000), restart])).toEqual([
      ['fire', 'replay-stalled/standby1', 4],
      ['resolve', 'replay-stalled/standby1', 6],
    ]);
  });

  it('a DROP on the primary that lines up with a lock wait: the wait is the stall, the DROP its lock\'s probable owner; never an unlink from the log', () => {
    const events = [drop(1), wait(2, 'waiting', 1000), wait(5, 'finished', 16_000)];
    expect(steps(events, 5 + 121)).toEqual([
      ['fire', 'replay-stalled/standby1', 4],
      ['resolve', 'replay-stalled/standby1', 5],
    ]);
    const [finding] = stalledRule.evaluate(logOnly(events).at(at(4)), at(4));
    expect(finding?.summary).toBe(
      'replay on standby1 has not advanced for 11 s (from its log): replay waiting on a lock held by standby query pid 52311 ' +
      '(recovery conflict on lock, probably for DROP TABLE of build_logs on primary at 00:00:05 UTC)',
    );
    expect(finding?.evidence.series).toEqual([]);
  });

  it('quiet on near misses: a lock wait with no DROP logged, a short wait, a sampled standby', () => {
    expect(steps([wait(2, 'waiting', 1000), wait(3, 'finished', 6000)])).toEqual([]);
    expect(steps([wait(2, 'waiting', 1000), wait(4, 'finished', 11_000)])).toEqual([]);
    const sampled = new MemoryRuleView({ events: [wait(2, 'waiting', 1000)], series: standby('0 0 0 0 0 0 0 0'), targets: CLUSTER, staleAfterMs: STEP });
    expect(stalledRule.evaluate(sampled.at(at(6)), at(6))).toEqual([]);
  });

  it('with log_recovery_conflict_waits off, the cancel lines say replay waited, up to max_standby_streaming_delay', () => {
    const [finding] = stalledRule.evaluate(logOnly([cancel(6)]).at(at(7)), at(7));
    expect(finding?.summary).toBe(
      'replay on standby1 stood still for a time its log does not show: replay waited on a recovery conflict on lock until 00:00:30 UTC, ' +
      'when it cancelled standby query pid 52311 (for up to max_standby_streaming_delay, 30 s by default; ' +
      'log_recovery_conflict_waits = on would log when the wait began)',
    );
    expect(finding?.evidence.facts.cause).toBe('conflict_cancelled');
  });
});

describe('a delayed standby (recovery_min_apply_delay): standing still up to the delay is the setting, not a stall', () => {
  // Replay stands still from step 2 on, 5 s more per step, with WAL waiting; the delay is 30 s.
  const STILL = '0 0 0 5 10 15 20 25 30 35 40 45 50';
  const PENDING_BYTES = '0 0 1e6 1e6 1e6 1e6 1e6 1e6 1e6 1e6 1e6 1e6 1e6';
  const delayed = (delay = '30 30 30 30 30 30 30 30 30 30 30 30 30', extra: SeriesData[] = []): SeriesData[] => [
    seriesOf('pg_standby_replay_standing_still_seconds', STILL, { target: 'standby1' }),
    seriesOf('pg_standby_replay_pending_bytes', PENDING_BYTES, { target: 'standby1' }),
    seriesOf('pg_settings_recovery_min_apply_delay_seconds', delay, { target: 'standby1' }),
    ...extra,
  ];

  const cases: Array<[string, number, boolean]> = [
    ['quiet: standing still 30 s, within the 30 s delay', 8, false],
    ['quiet: 35 s, beyond the delay by less than min_stall_seconds (10 s)', 9, false],
    ['fires: 40 s, the delay plus min_stall_seconds', 10, true],
    ['fires: 50 s', 12, true],
  ];
  for (const [name, step, fires] of cases) {
    it(name, () => expect(firing([], step, delayed()).stalled.length).toBe(fires ? 1 : 0));
  }

  it('without the delay, the same 15 s is a stall (the setting is what excuses it)', () => {
    expect(firing([], 5, delayed('0 0 0 0 0 0 0 0 0 0 0 0 0')).stalled).toHaveLength(1);
    expect(firing([], 5, delayed()).stalled).toEqual([]);
  });

  it('says the stall is beyond the delay and cites the setting', () => {
    const [finding] = firing([], 12, delayed()).stalled;
    expect(finding?.summary).toBe(
      'replay on standby1 has not advanced for 50 s, beyond its recovery_min_apply_delay of 30 s (977 kB of received WAL waiting): ' +
      'cause unknown (no recovery conflict logged, no table dropped)',
    );
    expect(finding?.evidence.series.map((s) => s.name)).toContain('pg_settings_recovery_min_apply_delay_seconds');
  });

  it('replay still waiting on the delay past it: the commit times are ahead of the standby\'s clock', () => {
    const waits = seriesOf('pg_standby_startup_wait_event{wait_event_type="Timeout",wait_event="RecoveryApplyDelay"}', '1 1 1 1 1 1 1 1 1 1 1 1 1', { target: 'standby1' });
    const [finding] = firing([], 12, delayed(undefined, [waits])).stalled;
    expect(finding?.labels.cause).toBe('apply_delay_overrun');
    expect(finding?.summary).toMatch(/: replay waits on recovery_min_apply_delay \(30 s\) for longer than the delay: the commit times are ahead of the standby's clock/);
  });

  it('the unlink after a DROP is told only beyond the delay too', () => {
    expect(firing([drop(1)], 7, delayed()).unlink).toEqual([]);
    expect(firing([drop(1)], 10, delayed()).unlink).toHaveLength(1);
  });
});
