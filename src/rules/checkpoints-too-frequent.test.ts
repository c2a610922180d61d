import { describe, expect, it } from 'vitest';
import { checkpointsTooFrequent, DEFAULTS } from './checkpoints-too-frequent.js';
import { eventOf, MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { checkpointDetails } from './test-events.js';

// Steps of one minute: the default sustain (10 min) is ten of them, the window (30 min) thirty.
const STEP = 60_000;
const SUSTAIN_STEPS = DEFAULTS.sustainMs / STEP;
const at = (step: number) => T0 + step * STEP;
const rule = checkpointsTooFrequent();
const grid = { stepMs: STEP };

/** The checkpointer's `checkpoints are occurring too frequently (N seconds apart)` line at each step. */
const tooFrequent = (steps: number[], secondsApart = 12, target = 'primary'): RuleEvent[] => steps.map((step) =>
  eventOf('checkpoint', checkpointDetails({ phase: 'too_frequent', seconds_apart: secondsApart }),
    { tsMs: at(step), pid: 31, target, message: `checkpoints are occurring too frequently (${secondsApart} seconds apart)` }));
/** A requested checkpoint of another cause: CHECKPOINT, pg_basebackup, CREATE DATABASE. */
const requested = (step: number): RuleEvent => eventOf('checkpoint', checkpointDetails({ phase: 'starting', reasons: ['immediate', 'force', 'wait'] }),
  { tsMs: at(step), pid: 31, message: 'checkpoint starting: immediate force wait' });

const every = (from: number, to: number, by = 1) => Array.from({ length: Math.floor((to - from) / by) + 1 }, (_, i) => from + i * by);
const counter = (name: string, perStep: number, steps: number, start = 0) =>
  seriesOf(name, Array.from({ length: steps }, (_, i) => String(start + i * perStep)).join(' '), grid);
const setting = (name: string, value: number, steps: number) => seriesOf(name, Array<string>(steps).fill(String(value)).join(' '), grid);

const evaluateAt = (events: RuleEvent[], step: number, series: SeriesData[] = []) =>
  rule.evaluate(new MemoryRuleView({ events, series, staleAfterMs: 2 * STEP }).at(at(step)), at(step));

describe('checkpoints-too-frequent at its defaults', () => {
  it('fires when the lines go on for 10 min, and says to raise max_wal_size', () => {
    const [finding] = evaluateAt(tooFrequent(every(0, SUSTAIN_STEPS, 2)), SUSTAIN_STEPS);
    expect(finding?.summary).toBe('checkpoints on primary are occurring too frequently: 6 times since 00:00:00 UTC, typically 12 s apart: ' +
      'WAL fills max_wal_size long before checkpoint_timeout; raise max_wal_size');
    expect(finding?.evidence.eventIds).toHaveLength(6);
    expect(finding?.dedupKey).toBe('checkpoints-too-frequent/primary');
  });

  it('sizes max_wal_size from the WAL rate and checkpoint_timeout, and counts requested against scheduled checkpoints', () => {
    const steps = SUSTAIN_STEPS + 1;
    const series = [
      // 20 MB/s of WAL; 5 min timeout, target 0.9: 20 MB × 300 × 1.9 = 11.1 GB, rounded up to 12 GB.
      counter('pg_stat_wal_wal_bytes_total', 20 * 1024 ** 2 * 60, steps),
      counter('pg_stat_checkpointer_num_requested_total', 4, steps, 100), counter('pg_stat_checkpointer_num_timed_total', 0, steps, 50),
      setting('pg_settings_max_wal_size_bytes', 1024 ** 3, steps), setting('pg_settings_checkpoint_timeout_seconds', 300, steps),
      setting('pg_settings_checkpoint_completion_target', 0.9, steps),
    ];
    const [finding] = evaluateAt(tooFrequent(every(0, SUSTAIN_STEPS)), SUSTAIN_STEPS, series);
    expect(finding?.summary).toBe('checkpoints on primary are occurring too frequently: 11 times since 00:00:00 UTC, typically 12 s apart; ' +
      '40 requested and 0 scheduled checkpoints in 30 min: WAL fills max_wal_size (1.0 GB) long before checkpoint_timeout; ' +
      'raise max_wal_size to about 12 GB (20 MB/s of WAL over checkpoint_timeout 5 min, with room for checkpoint_completion_target)');
    expect(finding?.evidence.facts).toMatchObject({ requested_checkpoints: 40, scheduled_checkpoints: 0, suggested_max_wal_size_bytes: 12 * 1024 ** 3 });
  });

  const quiet: Array<[string, RuleEvent[], number]> = [
    ['a bulk load: a burst of lines over 2 min', tooFrequent(every(0, 2)), 3],
    ['near miss: lines for one minute less than the sustain', tooFrequent(every(0, SUSTAIN_STEPS - 1)), SUSTAIN_STEPS - 1],
    ['near miss: two lines 10 min apart', tooFrequent([0, SUSTAIN_STEPS]), SUSTAIN_STEPS],
    ['requested checkpoints of other causes (CHECKPOINT, pg_basebackup) however many', every(0, 20).map(requested), 20],
    ['a burst on each of two servers', [...tooFrequent(every(0, 2)), ...tooFrequent(every(10, 12), 12, 'other')], 12],
  ];
  for (const [name, events, step] of quiet) it(`quiet: ${name}`, () => expect(evaluateAt(events, step)).toEqual([]));

  it('fires once while the lines go on and resolves once those left in the window span less than the sustain', () => {
    const view = new MemoryRuleView({ events: tooFrequent(every(0, 20, 2)) });
    const steps = transitionSteps(timeline([rule], view, instants(0, 60, STEP), { refireMinIntervalMs: 3_600_000 }), T0, STEP);
    // Lines every 2 min until minute 20; from minute 41 the window (30 min) keeps lines 12 to 20, 8 min apart: less than the sustain.
    expect(steps).toEqual([
      ['fire', 'checkpoints-too-frequent/primary', SUSTAIN_STEPS],
      ['resolve', 'checkpoints-too-frequent/primary', 41],
    ]);
  });
});
