/**
 * Offline replay: the rules engine stepped on the log's own time, not the wall clock, so an old
 * log gives the alerts the daemon would have raised while it was written, and the same ones on
 * any machine, in any time zone, at any date.
 *
 * Owns: when the engine evaluates. Time is cut into `intervalMs` slots aligned on the epoch;
 * when an event falls in a later slot than the events before it, those are made visible to the
 * rules (commit) and the engine evaluates at the end of their slot, if it held a notable event
 * (rules read only those), alerts are open, or a notable event came less than `watchMs` before.
 * Slots without events are skipped, except while alerts are open or within `watchMs` of a notable
 * event: then the engine keeps evaluating slot by slot through the gap (at most `maxGapSteps`), as
 * the daemon does every interval whatever is logged. So a condition that begins with the passing
 * of time fires when it would have live (replay waiting on a recovery conflict logs `still
 * waiting` once, then nothing until it ends 30 s later), and one that ends with it (a window, a
 * hold-down) resolves when it would have, not at the next event. A log whose notable events are
 * far apart costs at most `watchMs` of evaluations after each. At the end of the log the
 * engine evaluates once more, at the last event's time; alerts still open stay open.
 * A daemon catching up on a backlog (backlog-catch-up.ts) takes a gap's evaluations a few at a
 * time with stepGap() (`deferGaps`): a gap of hours would otherwise hold its event loop for seconds.
 * Never: storing events or alerts (the ReplayTarget does), or reading a clock.
 */
import { DateTime } from 'luxon';
import type { Clock } from '../domain/index.js';

export interface ReplayTarget {
  /** Makes every event handed over so far visible to the rules. */
  commit(): void;
  evaluate(nowMs: number): void;
  /** Alerts open after the last evaluation. */
  openAlerts(): number;
}

export interface ReplayOptions {
  intervalMs: number;
  /** Evaluations through one stretch of the log without events. */
  maxGapSteps: number;
  /**
   * How long after a notable event the engine keeps evaluating every interval, events or not
   * (0 or absent: only while alerts are open).
   */
  watchMs?: number;
  /** Leave a gap's evaluations to stepGap() rather than taking them all at once. */
  deferGaps?: boolean;
}

/** The evaluations still owed through a stretch without events. */
interface Gap {
  nextMs: number;
  untilMs: number;
  stepsLeft: number;
}

/**
 * watchMs: 30 min, the longest a rule keeps a logged open condition in mind without its end
 * (a recovery-conflict wait: replay-stall-log.ts).
 */
export const REPLAY_DEFAULTS: Pick<ReplayOptions, 'maxGapSteps' | 'watchMs'> = { maxGapSteps: 10_000, watchMs: 30 * 60_000 };

export class ReplayStepper {
  /** End (exclusive) of the slot holding events not yet evaluated; null before the first event. */
  private slotEndMs: number | null = null;
  private lastEventMs: number | null = null;
  private lastEvaluationMs = -Infinity;
  private slotHasNotable = false;
  /** The latest notable event handed over in a slot already closed or open; null before any. */
  private lastNotableMs: number | null = null;
  private evaluationCount = 0;
  private gap: Gap | null = null;

  constructor(
    private readonly target: ReplayTarget,
    private readonly clock: EventTimeClock,
    private readonly options: ReplayOptions,
  ) {
    if (!(options.intervalMs > 0)) throw new Error(`replay: intervalMs must be > 0, got ${options.intervalMs}`);
  }

  get evaluations(): number {
    return this.evaluationCount;
  }

  /** The instant of the last evaluation (after finish(): the end of the log); null before any. */
  get lastEvaluatedMs(): number | null {
    return this.evaluationCount === 0 ? null : this.lastEvaluationMs;
  }

  /** Call with each event's time before handing the event to the target; `notable`: a rule may read it. */
  beforeEvent(tsMs: number, notable: boolean): void {
    this.stepGap(Infinity);
    const slotEnd = this.slotEndOf(tsMs);
    if (this.slotEndMs !== null && slotEnd > this.slotEndMs) {
      if (this.slotHasNotable || this.target.openAlerts() > 0 || this.watching(this.slotEndMs)) {
        this.target.commit();
        this.evaluate(this.slotEndMs);
        this.openGap(slotEnd - this.options.intervalMs);
      }
      this.slotHasNotable = false;
    }
    if (notable) {
      this.slotHasNotable = true;
      if (this.lastNotableMs === null || tsMs > this.lastNotableMs) this.lastNotableMs = tsMs;
    }
    // An event earlier than its predecessors joins the open slot: it is seen at its end.
    if (this.slotEndMs === null || slotEnd > this.slotEndMs) this.slotEndMs = slotEnd;
    if (this.lastEventMs === null || tsMs > this.lastEventMs) this.lastEventMs = tsMs;
  }

  /** The end of the log: commits and evaluates at the last event's time. */
  finish(): void {
    this.stepGap(Infinity);
    if (this.lastEventMs === null) return;
    this.target.commit();
    this.evaluate(Math.max(this.lastEventMs, this.lastEvaluationMs));
  }

  /**
   * A daemon going live at `untilMs` after reading a backlog: evaluates the last slot's events,
   * then slot by slot after them while alerts are open or watching, so a condition that ended in
   * the backlog resolves at its own time, and one that became true in it fires at its own time.
   */
  finishUntil(untilMs: number): void {
    this.stepGap(Infinity);
    if (this.slotEndMs === null) return;
    this.target.commit();
    this.evaluate(Math.min(this.slotEndMs, untilMs));
    this.openGap(untilMs);
  }

  /** Takes up to `maxSteps` of the evaluations owed through a gap; true while some are left. */
  stepGap(maxSteps: number): boolean {
    const gap = this.gap;
    if (gap === null) return false;
    for (let steps = 0; steps < maxSteps; steps++) {
      if (gap.nextMs > gap.untilMs || gap.stepsLeft === 0 || (this.target.openAlerts() === 0 && !this.watching(gap.nextMs))) {
        this.gap = null;
        return false;
      }
      this.evaluate(gap.nextMs);
      gap.nextMs += this.options.intervalMs;
      gap.stepsLeft--;
    }
    return true;
  }

  /** Within `watchMs` of the latest notable event: something it opened may become true with time alone. */
  private watching(nowMs: number): boolean {
    return this.lastNotableMs !== null && nowMs - this.lastNotableMs <= (this.options.watchMs ?? 0);
  }

  /** Slot ends after `this.slotEndMs` up to `untilMs` (the start of the next event's slot), while alerts are open or watching. */
  private openGap(untilMs: number): void {
    this.gap = { nextMs: this.slotEndMs! + this.options.intervalMs, untilMs, stepsLeft: this.options.maxGapSteps };
    if (!this.options.deferGaps) this.stepGap(Infinity);
  }

  private evaluate(nowMs: number): void {
    this.clock.set(nowMs);
    this.target.evaluate(nowMs);
    this.lastEvaluationMs = nowMs;
    this.evaluationCount++;
  }

  private slotEndOf(tsMs: number): number {
    return Math.floor(tsMs / this.options.intervalMs) * this.options.intervalMs + this.options.intervalMs;
  }
}

/**
 * The engine's clock during a replay: the instant being evaluated. It has no timers: nothing in a
 * replay may wait on time that the log does not contain.
 */
export class EventTimeClock implements Clock {
  private currentMs = 0;

  set(ms: number): void {
    this.currentMs = ms;
  }

  nowMs(): number {
    return this.currentMs;
  }

  /** In a replay, the log's time is the only time: it does not jump. */
  monotonicMs(): number {
    return this.currentMs;
  }

  now(): DateTime {
    return DateTime.fromMillis(this.currentMs, { zone: 'utc' });
  }

  sleep(): Promise<void> {
    return Promise.reject(new Error('replay: the event-time clock cannot sleep; time advances only with the log'));
  }

  setInterval(): { cancel(): void } {
    throw new Error('replay: the event-time clock has no timers; time advances only with the log');
  }
}
