/**
 * The daemon's log report in the making: each target's events folded into one state per section
 * per minute while the minute is open. A minute closes once an event of its target 2 minutes
 * newer arrived, or when it received nothing for a while (a quiet server), or at shutdown; what
 * arrives for it later folds into a new state of the same minute (the reader merges both).
 *
 * Pure: events and arrival times in, closed minutes (JSON text) out; the store is someone else's.
 */
import type { AnyLogEvent } from '../../domain/index.js';
import type { ReportLimits, ReportSection } from './section.js';

const MINUTE_MS = 60_000;

export interface ClosedMinute {
  target: string;
  minuteMs: number;
  /** Every event of this target and minute with an id up to this one is in this minute or an earlier one. */
  throughId: number;
  /** The lowest event id folded into it: until it is stored, no cursor may pass it. */
  firstEventId: number;
  /** JSON: section key to state. */
  states: string;
}

export interface MinuteFoldOptions {
  /** An event this much newer than a minute's end closes it. */
  closeAfterMs: number;
  /** Minutes held open at most (targets x minutes); past it the oldest closes early. */
  maxOpenMinutes: number;
}

export const DEFAULT_MINUTE_FOLD_OPTIONS: MinuteFoldOptions = { closeAfterMs: 2 * MINUTE_MS, maxOpenMinutes: 1_000 };

interface OpenMinute {
  target: string;
  minuteMs: number;
  states: unknown[];
  firstEventId: number;
  /** When its last event arrived (the caller's clock). */
  lastArrivalMs: number;
}

export class MinuteFolds {
  private readonly open = new Map<string, OpenMinute>();
  private readonly newestMsByTarget = new Map<string, number>();
  private highestId = 0;

  constructor(
    // The registry's sections each have their own State; this only passes states through.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    private readonly sections: ReadonlyArray<ReportSection<any, unknown>>,
    private readonly limits: ReportLimits,
    private readonly options: MinuteFoldOptions = DEFAULT_MINUTE_FOLD_OPTIONS,
  ) {}

  /** Folds a stored event (ids ascending) that arrived at `arrivalMs`. */
  add(id: number, event: AnyLogEvent, arrivalMs: number): void {
    this.highestId = Math.max(this.highestId, id);
    const minuteMs = Math.floor(event.tsMs / MINUTE_MS) * MINUTE_MS;
    const key = `${event.target}\u0000${minuteMs}`;
    let minute = this.open.get(key);
    if (minute === undefined) {
      minute = { target: event.target, minuteMs, states: this.sections.map((s) => s.empty()), firstEventId: id, lastArrivalMs: arrivalMs };
      this.open.set(key, minute);
    }
    for (let i = 0; i < this.sections.length; i++) this.sections[i]!.add(minute.states[i], event, this.limits);
    minute.lastArrivalMs = arrivalMs;
    if (event.tsMs > (this.newestMsByTarget.get(event.target) ?? -Infinity)) this.newestMsByTarget.set(event.target, event.tsMs);
  }

  /** Notes ids that were seen but not folded (a restart's events already stored in a row). */
  skip(id: number): void {
    this.highestId = Math.max(this.highestId, id);
  }

  /**
   * The minutes that are closed: 2 minutes behind their target's newest event, quiet since
   * `idleSinceMs`, or the oldest past maxOpenMinutes. In time order.
   */
  takeClosed(idleSinceMs: number): ClosedMinute[] {
    const overCap = this.open.size - this.options.maxOpenMinutes;
    const oldestFirst = overCap > 0 ? [...this.open.values()].sort((a, b) => a.minuteMs - b.minuteMs).slice(0, overCap) : [];
    const closing = new Set(oldestFirst);
    for (const minute of this.open.values()) {
      const newestMs = this.newestMsByTarget.get(minute.target)!;
      if (newestMs >= minute.minuteMs + MINUTE_MS + this.options.closeAfterMs || minute.lastArrivalMs < idleSinceMs) closing.add(minute);
    }
    return this.close([...closing]);
  }

  /** Every open minute, closed now (shutdown). */
  takeAll(): ClosedMinute[] {
    return this.close([...this.open.values()]);
  }

  /** Every event id up to this one is in a minute already taken. */
  cursor(): number {
    let lowest = this.highestId + 1;
    for (const minute of this.open.values()) lowest = Math.min(lowest, minute.firstEventId);
    return lowest - 1;
  }

  private close(minutes: OpenMinute[]): ClosedMinute[] {
    minutes.sort((a, b) => a.minuteMs - b.minuteMs || a.firstEventId - b.firstEventId);
    return minutes.map((minute) => {
      this.open.delete(`${minute.target}\u0000${minute.minuteMs}`);
      const states = Object.fromEntries(this.sections.map((s, i) => [s.key, minute.states[i]]));
      return { target: minute.target, minuteMs: minute.minuteMs, throughId: this.highestId, firstEventId: minute.firstEventId, states: JSON.stringify(states) };
    });
  }
}
