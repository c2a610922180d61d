import { describe, expect, it } from 'vitest';
import { deriveReplayProgress, type ReplayObservation, type ReplayState } from './replay-progress.js';

/** Feeds observations in order; returns each step's progress. */
function run(observations: ReplayObservation[]): Array<ReturnType<typeof deriveReplayProgress>['progress']> {
  let state: ReplayState | null = null;
  return observations.map((o) => {
    const next = deriveReplayProgress(state, o);
    state = next.state;
    return next.progress;
  });
}

const obs = (tsMs: number, receiveLsnBytes: number | null, replayLsnBytes: number | null): ReplayObservation =>
  ({ tsMs, receiveLsnBytes, replayLsnBytes });

describe('deriveReplayProgress', () => {
  it('counts the seconds replay stands still while received WAL waits', () => {
    const steps = run([obs(0, 100, 100), obs(1_000, 200, 150), obs(2_000, 300, 150), obs(3_500, 400, 150)]);
    expect(steps.map((s) => s.standingStillSeconds)).toEqual([0, 0, 1, 2.5]);
    expect(steps.map((s) => s.pendingBytes)).toEqual([0, 50, 150, 250]);
  });

  it('reads 0 again as soon as replay moves', () => {
    const steps = run([obs(0, 200, 100), obs(5_000, 300, 100), obs(6_000, 300, 120)]);
    expect(steps.map((s) => s.standingStillSeconds)).toEqual([0, 5, 0]);
  });

  it('does not call a caught-up standby of an idle primary stalled', () => {
    const steps = run([obs(0, 100, 100), obs(60_000, 100, 100)]);
    expect(steps.map((s) => s.standingStillSeconds)).toEqual([0, 0]);
  });

  it('keeps unknown positions unknown (null), never 0', () => {
    expect(run([obs(0, null, 100)])[0]).toEqual({ pendingBytes: null, standingStillSeconds: null });
    expect(run([obs(0, 100, null)])[0]).toEqual({ pendingBytes: null, standingStillSeconds: null });
  });

  it('treats received behind replay (walreceiver restarted at a segment start) as nothing pending', () => {
    expect(run([obs(0, 16_777_216, 16_800_000)])[0]?.pendingBytes).toBe(0);
  });
});
