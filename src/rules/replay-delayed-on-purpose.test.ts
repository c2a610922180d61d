import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { replayDelayedOnPurpose, DEFAULTS } from './replay-delayed-on-purpose.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';

const at = (step: number) => T0 + step * STEP;
const rule = replayDelayedOnPurpose(DEFAULTS);
const onStandby = { target: 'standby1' };

const setting = (seconds: string) => seriesOf('pg_settings_recovery_min_apply_delay_seconds', seconds, onStandby);
const pending = (values: string) => seriesOf('pg_standby_replay_pending_bytes', values, onStandby);
const lag = (values: string) => seriesOf('pg_standby_replay_delay_seconds', values, onStandby);
const waitsOnDelay = (values: string) => seriesOf('pg_standby_startup_wait_event{wait_event_type="Timeout",wait_event="RecoveryApplyDelay"}', values, onStandby);
const evaluate = (series: SeriesData[], step = 3) => rule.evaluate(new MemoryRuleView({ series, staleAfterMs: STEP }).at(at(step)), at(step));

describe('replay-delayed-on-purpose', () => {
  const cases: Array<[string, SeriesData[], RegExp | null]> = [
    ['info: 1 h delay configured, replay 58 min behind',
      [setting('3600'), pending('1e6 2e6 3e6 3145728'), lag('3480 3480 3480 3480')],
      /^standby standby1 replays WAL late on purpose \(recovery_min_apply_delay = 60 min\): replay 58 min behind, 3\.0 MB received and waiting; expected, not a stall$/],
    ['info: the startup process waits on RecoveryApplyDelay, setting not sampled', [waitsOnDelay('1 1 1 1'), pending('1 1 1 1024')],
      /\(startup process waits on RecoveryApplyDelay\): 1\.0 kB received and waiting/],
    ['info: lag at the delay plus the margin', [setting('3600'), pending('1 1 1 1'), lag('_ _ _ 3660')], /replay 61 min behind/],
    ['quiet: lag past the delay plus 60 s: the delay does not explain it', [setting('3600'), pending('1 1 1 1'), lag('_ _ _ 3661')], null],
    ['quiet: nothing waiting to be replayed', [setting('3600'), pending('0 0 0 0'), lag('_ _ _ 5000')], null],
    ['quiet: no delay configured', [setting('0'), pending('1 1 1 1'), lag('_ _ _ 30')], null],
  ];
  for (const [name, series, summary] of cases) {
    it(name, () => {
      const findings = evaluate(series);
      if (summary === null) expect(findings).toEqual([]);
      else {
        expect(findings.map((f) => f.summary)).toEqual([expect.stringMatching(summary)]);
        expect(findings[0]?.severity).toBe('info');
      }
    });
  }

  it('one alert while replay is behind, resolved when it caught up', () => {
    const series = [setting('3600 3600 3600 3600 3600 3600'), pending('5 6 7 7 0 0')];
    const steps = transitionSteps(timeline([rule], new MemoryRuleView({ series, staleAfterMs: STEP }), instants(0, 5)));
    expect(steps).toEqual([['fire', 'replay-delayed-on-purpose/standby1', 0], ['resolve', 'replay-delayed-on-purpose/standby1', 4]]);
  });
});
