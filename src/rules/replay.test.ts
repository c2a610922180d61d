import { describe, expect, it } from 'vitest';
import { EventTimeClock, ReplayStepper, type ReplayTarget } from './replay.js';

const T0 = Date.UTC(2026, 10, 30, 7, 20, 0);
const S = 1_000;

/** Records what the stepper asked for; `open` says how many alerts are open after an evaluation at t. */
class Recorder implements ReplayTarget {
  readonly calls: string[] = [];
  private handed: number[] = [];
  private visible: number[] = [];

  constructor(private readonly open: (nowMs: number) => number = () => 0, private readonly clock?: EventTimeClock) {}

  event(stepper: ReplayStepper, tsMs: number, notable = true): void {
    stepper.beforeEvent(tsMs, notable);
    this.handed.push(tsMs);
  }

  commit(): void {
    this.visible = [...this.handed];
  }

  private lastNowMs = 0;
  evaluate(nowMs: number): void {
    this.lastNowMs = nowMs;
    if (this.clock) expect(this.clock.nowMs()).toBe(nowMs);
    // What the rules would see: every committed event up to nowMs.
    this.calls.push(`eval +${(nowMs - T0) / S}s sees ${this.visible.filter((t) => t <= nowMs).map((t) => `+${(t - T0) / S}`).join(',')}`);
  }

  openAlerts(): number {
    return this.open(this.lastNowMs);
  }
}

/** Event times in seconds after T0; a negative one is an ordinary (not notable) event at -t. */
function replay(events: number[], open?: (nowMs: number) => number, maxGapSteps = 100, watchMs?: number): string[] {
  const clock = new EventTimeClock();
  const target = new Recorder(open, clock);
  const stepper = new ReplayStepper(target, clock, { intervalMs: 5 * S, maxGapSteps, ...(watchMs !== undefined && { watchMs }) });
  for (const t of events) target.event(stepper, T0 + Math.abs(t) * S, t >= 0);
  stepper.finish();
  return target.calls;
}

describe('offline replay stepping', () => {
  it('evaluates at the end of each 5 s slot that holds events, then at the last event', () => {
    expect(replay([1, 2, 6, 7.5, 21])).toEqual([
      'eval +5s sees +1,+2',
      'eval +10s sees +1,+2,+6,+7.5',
      'eval +21s sees +1,+2,+6,+7.5,+21',
    ]);
  });

  it('skips slots that hold only ordinary events, unless alerts are open', () => {
    expect(replay([1, -6, -11, 16, -21, -22])).toEqual(['eval +5s sees +1', 'eval +20s sees +1,+6,+11,+16', 'eval +22s sees +1,+6,+11,+16,+21,+22']);
    expect(replay([1, -6, -11], () => 1)).toEqual(['eval +5s sees +1', 'eval +10s sees +1,+6', 'eval +11s sees +1,+6,+11']);
  });

  it('never lets the rules see an event after the instant evaluated', () => {
    expect(replay([4.999, 5])).toEqual(['eval +5s sees +4.999', 'eval +5s sees +4.999,+5']);
  });

  it('steps slot by slot through a stretch without events only while alerts are open', () => {
    // An alert opens at +5 s and the target says it is resolved by +20 s.
    const calls = replay([1, 40], (now) => (now >= T0 + 5 * S && now < T0 + 20 * S ? 1 : 0));
    expect(calls).toEqual([
      'eval +5s sees +1',
      'eval +10s sees +1',
      'eval +15s sees +1',
      'eval +20s sees +1',
      'eval +40s sees +1,+40',
    ]);
  });

  it('steps slot by slot for watchMs after a notable event, events or not, so what becomes true with time alone is seen then', () => {
    // A `still waiting` at +1 s and nothing more until +40 s: evaluated every slot up to +1 + 12 s.
    expect(replay([1, 40], undefined, 100, 12 * S)).toEqual([
      'eval +5s sees +1', 'eval +10s sees +1', 'eval +40s sees +1,+40',
    ]);
    // Ordinary events do not extend the watch; slots holding them within it are evaluated.
    expect(replay([1, -6, -11, -22], undefined, 100, 12 * S)).toEqual([
      'eval +5s sees +1', 'eval +10s sees +1,+6', 'eval +22s sees +1,+6,+11,+22',
    ]);
    // The watch is counted from the latest notable event.
    expect(replay([1, 12, 60], undefined, 100, 10 * S)).toEqual([
      'eval +5s sees +1', 'eval +10s sees +1', 'eval +15s sees +1,+12', 'eval +20s sees +1,+12', 'eval +60s sees +1,+12,+60',
    ]);
  });

  it('caps the evaluations through one gap', () => {
    expect(replay([1, 3600], () => 1, 3)).toEqual([
      'eval +5s sees +1', 'eval +10s sees +1', 'eval +15s sees +1', 'eval +20s sees +1', 'eval +3600s sees +1,+3600',
    ]);
  });

  it('an event earlier than the one before joins the open slot', () => {
    expect(replay([6, 3, 11])).toEqual(['eval +10s sees +6,+3', 'eval +11s sees +6,+3,+11']);
  });

  it('evaluates nothing for an empty log', () => {
    expect(replay([])).toEqual([]);
  });

  it('the event-time clock has no timers', async () => {
    const clock = new EventTimeClock();
    clock.set(T0);
    expect(clock.now().toISO()).toBe('2026-11-30T07:20:00.000Z');
    expect(() => clock.setInterval()).toThrow(/no timers/);
    await expect(clock.sleep()).rejects.toThrow(/cannot sleep/);
  });
});
