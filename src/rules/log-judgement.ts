/**
 * How far each target's log has been judged by its log-only rules, kept in the store so that a
 * SIGKILL anywhere neither skips an event nor judges one twice: events committed but not yet
 * evaluated when pgvigil dies are found after the position at the next start and caught up
 * (backlog-catch-up.ts).
 *
 * A position says: every event of the target up to `eventId` was seen by an evaluation, and the
 * rules ran up to `atMs`. It moves in the store transaction of the evaluation that judged those
 * events, with the alerts that evaluation fired or resolved: a kill commits both or neither.
 * A catch-up never evaluates before `atMs`: that instant was judged already, and judging it again
 * with events read later could raise again an alert that has since resolved.
 *
 * Owns: which events an evaluation judged and when a position moves. Never: SQL (the table
 * is src/store/log-judged.ts), nor when rules run.
 */
import type { Clock } from '../domain/index.js';
import type { JudgedPosition, LogJudgedTable, UnjudgedEvent } from '../store/log-judged.js';

export type JudgedPositions = Pick<LogJudgedTable, 'get' | 'save' | 'newestEvent' | 'eventsAfter' | 'transaction'>;

/** Unjudged events read from the store at once, at start. */
const PAGE_EVENTS = 5_000;

export class LogJudgement {
  private readonly saved = new Map<string, JudgedPosition>();
  /** The newest event id committed, per target. */
  private readonly committed = new Map<string, number>();
  /** Per target, the first event left to live evaluation that none has seen yet. */
  private readonly firstLiveUnjudged = new Map<string, number>();

  constructor(
    private readonly positions: JudgedPositions,
    private readonly clock: Clock,
    private readonly targets: readonly string[],
  ) {}

  /**
   * The target's position. A target without one (a store from before positions were kept, a new
   * target) counts its newest stored event as judged: the pgvigil that stored it judged it live.
   */
  position(target: string): JudgedPosition {
    let position = this.saved.get(target);
    if (!position) {
      position = this.positions.get(target) ?? this.positions.newestEvent(target) ?? { eventId: 0, atMs: 0 };
      this.positions.save(target, position, this.clock.nowMs());
      this.saved.set(target, position);
    }
    return position;
  }

  /**
   * The instant a catch-up of the target may not evaluate before: the judged instant, unless it is
   * ahead of the wall clock. Then it was judged while the clock was ahead, and the clock has since
   * gone back: holding to it would evaluate every step at that instant until the clock caught up,
   * where no window reaches the backlog. The position's event id still keeps judged events out.
   */
  notBeforeMs(target: string): number {
    const { atMs } = this.position(target);
    return atMs > this.clock.nowMs() ? -Infinity : atMs;
  }

  /** The target's events stored after its position, oldest first, a page at a time. */
  *unjudgedEvents(target: string): Generator<UnjudgedEvent[]> {
    let after = this.position(target).eventId;
    for (;;) {
      const page = this.positions.eventsAfter(target, after, PAGE_EVENTS);
      if (page.length === 0) return;
      yield page;
      after = page.at(-1)!.id;
    }
  }

  /** An event committed: `live` when live evaluation is to judge it, else a catch-up was handed it. */
  committedEvent(target: string, id: number, live: boolean): void {
    this.committed.set(target, Math.max(id, this.committed.get(target) ?? 0));
    if (live && !this.firstLiveUnjudged.has(target)) this.firstLiveUnjudged.set(target, id);
  }

  /**
   * One live evaluation at `nowMs`, run in the transaction that moves the position of every target
   * it judged (all but those `catchingUp`) to the newest event committed before it.
   */
  live<T>(evaluate: () => T, nowMs: number, catchingUp: (target: string) => boolean): T {
    return this.positions.transaction(() => {
      const result = evaluate();
      for (const target of this.targets) {
        if (catchingUp(target)) continue;
        this.advance(target, { eventId: this.committed.get(target) ?? 0, atMs: nowMs });
        this.firstLiveUnjudged.delete(target);
      }
      return result;
    });
  }

  /**
   * One step of a catch-up at `atMs` that has seen the target's events up to `eventId`, run in
   * the transaction that records it. Live events committed meanwhile and not judged yet hold the
   * position below them.
   */
  stepped<T>(target: string, eventId: number, atMs: number, evaluate: () => T): T {
    return this.positions.transaction(() => {
      const result = evaluate();
      const firstLive = this.firstLiveUnjudged.get(target);
      this.advance(target, { eventId: firstLive === undefined ? eventId : Math.min(eventId, firstLive - 1), atMs });
      return result;
    });
  }

  private advance(target: string, next: JudgedPosition): void {
    const current = this.position(target);
    if (next.eventId <= current.eventId && next.atMs <= current.atMs) return;
    const position = { eventId: Math.max(next.eventId, current.eventId), atMs: Math.max(next.atMs, current.atMs) };
    this.positions.save(target, position, this.clock.nowMs());
    this.saved.set(target, position);
  }
}
