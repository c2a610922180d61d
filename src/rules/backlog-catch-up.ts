/**
 * Backlog catch-up: when the store writer commits log events well behind the wall clock (the log
 * written while pgvigil was down, or while its tailer could not read or keep up), that target's
 * log-only rules are evaluated on those events' own time, stepped as `pgvigil analyze --rules`
 * steps a log (replay.ts), before they go live again. A storm that started and ended while
 * pgvigil was down then fires and resolves at its real times, marked as found late (engine.ts),
 * and its notifications go out: late news is still news.
 *
 * Owns: telling a backlog from live events, and when a target's catch-up begins and ends. Never:
 * judging (the rules do) or live evaluation (engine.ts, which leaves a scope catching up alone).
 *
 * At start, each target waits for its first log lines before its log-only alerts may resolve
 * live: the lines the tailer resumes with are the oldest of the backlog, and an alert left open at
 * the stop must be judged by them, not resolved because its hold-down ran out while the tailer was
 * starting (then found again in the backlog as a second alert). The first lines decide: behind the
 * clock, a catch-up; live, none; none within START_GRACE_MS, none.
 *
 * Events a kill left stored but unjudged (after the target's position, log-judgement.ts) are
 * the oldest of the backlog: at start they are stepped first, from the store, and the tailer's
 * lines go on with the same catch-up. Each step moves the position in the transaction of what it
 * fired or resolved, so a catch-up killed half-way goes on from where it was at the next start.
 * No instant is judged twice: a step never goes back before the last evaluation recorded, so
 * lines read late while pgvigil was running are judged at the first instant not judged yet (a
 * storm they complete that has left the window by then is not found).
 *
 * A catch-up ends once no event behind the clock has come for an evaluation interval: the backlog
 * was read to its end. Live events read meanwhile do not end it: they are evaluated when it ends,
 * and on a busy server they arrive while the backlog is still being read. Only rules that read
 * the log alone take part: the samples of a time pgvigil was down do not exist.
 */
import type { Clock, Component } from '../domain/index.js';
import type { CatchUpScope, RuleEngine } from './engine.js';
import type { LogJudgement } from './log-judgement.js';
import { EventTimeClock, REPLAY_DEFAULTS, ReplayStepper } from './replay.js';

/**
 * An event this far behind the clock when committed was not read live: it belongs to a backlog.
 * A live tailer hands an entry over within a second or two; one two evaluations late may already
 * have slipped out of a window a rule needed it in. Never under 10 s, so a loaded machine's usual
 * delays do not count.
 */
export function backlogBehindMs(intervalMs: number): number {
  return Math.max(2 * intervalMs, 10_000);
}

/** How long a target's log-only alerts wait at start for its first log lines (a quiet server may write none). */
export const START_GRACE_MS = 5 * 60_000;

interface Logger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface BacklogCatchUpDeps {
  engine: Pick<RuleEngine, 'evaluate' | 'beginCatchUp' | 'endCatchUp' | 'openAlertsIn'>;
  /** The store writer: what it committed, in commit order. */
  commits: { onFlush(listener: (result: { events: ReadonlyArray<{ id: number; event: { target: string; tsMs: number } }> }) => void): void };
  /** How far each target's log was judged: moved by every step. */
  judgement: Pick<LogJudgement, 'notBeforeMs' | 'unjudgedEvents' | 'committedEvent' | 'stepped'>;
  clock: Clock;
  log: Logger;
  /** The enabled rules that read the log alone (catalog.ts logOnlyRuleIds). */
  ruleIds: ReadonlySet<string>;
  /** The engine's evaluation interval: the backlog's steps, and how long a read may pause. */
  intervalMs: number;
  /** The targets whose log is read: each waits at start for its first lines. */
  targets: readonly string[];
}

interface TargetCatchUp {
  scope: CatchUpScope;
  /** Null while the target waits for its first log lines after start. */
  stepper: ReplayStepper | null;
  firstEventMs: number | null;
  /** Steady time of the last backlog event committed (of the start while waiting for the first). */
  lastReadMs: number;
  /** The last event handed to the stepper whose gap before it was stepped: the steps see every event up to it. */
  handedId: number;
  /** Events committed behind the clock and not handed yet, oldest first. */
  pending: Array<{ id: number; tsMs: number }>;
  /** The event handed last, while the evaluations owed through the gap before it are taken. */
  opening: number | null;
  /** 'asked': the backlog was read to its end; 'finishing': stepped up to now, ends when that is done. */
  ending: 'no' | 'asked' | 'finishing';
  /** Steady time of the last step that threw; null while steps succeed. */
  failingSinceMs: number | null;
}

/**
 * Evaluations a target's catch-up takes before it lets the event loop run other work (the HTTP
 * API, the writer, the tailer): a backlog of hours is thousands of evaluations, seconds in one piece.
 */
const STEPS_PER_TURN = 20;

export class BacklogCatchUp implements Component {
  readonly name = 'backlog-catch-up';
  private readonly active = new Map<string, TargetCatchUp>();
  private timer: { cancel(): void } | null = null;
  /** Commits after stop (the writer's last flush) are left to the next start's catch-up. */
  private stopped = false;
  private draining: Promise<void> | null = null;

  constructor(private readonly deps: BacklogCatchUpDeps) {
    deps.commits.onFlush(({ events }) => this.committed(events));
  }

  async start(): Promise<void> {
    const { engine, clock, ruleIds, targets } = this.deps;
    this.stopped = false;
    if (ruleIds.size > 0) {
      // Every target waits before any is caught up: live evaluations run between the pages below.
      for (const target of targets) {
        const scope: CatchUpScope = { target, ruleIds };
        engine.beginCatchUp(scope, clock.monotonicMs());
        this.active.set(target, this.waiting(scope));
      }
      for (const target of targets) await this.catchUpStored(target);
    }
    this.timer = clock.setInterval(() => this.endFinished(), this.deps.intervalMs);
  }

  /**
   * Stops stepping after the current turn. What was not judged yet stays after its target's
   * position in the store, and the next start steps it first.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.caughtUp();
    for (const catchUp of [...this.active.values()]) this.ended(catchUp);
  }

  /** Resolves when every event handed over so far has been stepped (for tests and start). */
  async caughtUp(): Promise<void> {
    while (this.draining !== null) await this.draining;
  }

  /** Steps the events a kill left stored but unjudged, before the tailer reads on. */
  private async catchUpStored(target: string): Promise<void> {
    for (const page of this.deps.judgement.unjudgedEvents(target)) {
      if (this.stopped) return;
      const waiting = this.active.get(target);
      const catchUp = waiting?.stepper ? waiting : this.begin(target, page[0]!.tsMs);
      for (const event of page) this.handOver(catchUp, event.id, event.tsMs);
      this.drainSoon();
      await this.caughtUp();
    }
  }

  private committed(events: ReadonlyArray<{ id: number; event: { target: string; tsMs: number } }>): void {
    if (this.stopped) return;
    const behindBefore = this.deps.clock.nowMs() - backlogBehindMs(this.deps.intervalMs);
    for (const { id, event } of events) {
      const waiting = this.active.get(event.target);
      const behind = this.deps.ruleIds.size > 0 && event.tsMs < behindBefore;
      if (waiting?.stepper === null && !behind) this.ended(waiting);
      this.deps.judgement.committedEvent(event.target, id, !behind);
      if (!behind) continue;
      this.handOver(waiting?.stepper ? waiting : this.begin(event.target, event.tsMs), id, event.tsMs);
    }
    this.drainSoon();
  }

  private handOver(catchUp: TargetCatchUp, id: number, tsMs: number): void {
    catchUp.pending.push({ id, tsMs });
    catchUp.lastReadMs = this.deps.clock.monotonicMs();
    catchUp.ending = 'no';
  }

  private waiting(scope: CatchUpScope): TargetCatchUp {
    return { scope, stepper: null, firstEventMs: null, lastReadMs: this.deps.clock.monotonicMs(), handedId: 0, pending: [], opening: null, ending: 'no', failingSinceMs: null };
  }

  private begin(target: string, firstEventMs: number): TargetCatchUp {
    const { engine, clock, ruleIds, intervalMs, log, judgement } = this.deps;
    const scope: CatchUpScope = { target, ruleIds };
    const catchUp: TargetCatchUp = { ...this.waiting(scope), firstEventMs };
    // The events are committed before the stepper hears of them: nothing to commit on its behalf.
    // An instant judged already (before the judged instant) is not judged again.
    catchUp.stepper = new ReplayStepper({
      commit: () => undefined,
      evaluate: (nowMs) => {
        const atMs = Math.max(nowMs, judgement.notBeforeMs(target));
        judgement.stepped(target, catchUp.handedId, atMs, () => engine.evaluate(atMs, atMs, scope));
      },
      openAlerts: () => engine.openAlertsIn(scope),
    }, new EventTimeClock(), { intervalMs, ...REPLAY_DEFAULTS, deferGaps: true });
    engine.beginCatchUp(scope, Math.max(firstEventMs, judgement.notBeforeMs(target)));
    this.active.set(target, catchUp);
    log.info({ target, behindSeconds: Math.round((clock.nowMs() - firstEventMs) / 1000), rules: [...ruleIds] },
      'reading a log backlog: its log-only rules are evaluated on the log\'s own time until it is read');
    return catchUp;
  }

  private drainSoon(): void {
    if (this.draining !== null || this.stopped) return;
    this.draining = this.drain().finally(() => { this.draining = null; });
  }

  /** Turns of every target's catch-up in rotation, the event loop free between them, until none has work. */
  private async drain(): Promise<void> {
    for (;;) {
      const nowMs = this.deps.clock.monotonicMs();
      const busy = [...this.active.values()].filter((c) => c.stepper !== null && (c.pending.length > 0 || c.opening !== null || c.ending !== 'no') &&
        (c.failingSinceMs === null || nowMs - c.failingSinceMs >= this.deps.intervalMs));
      if (busy.length === 0 || this.stopped) return;
      for (const catchUp of busy) {
        try {
          this.turn(catchUp);
          if (catchUp.failingSinceMs !== null) {
            this.deps.log.info({ target: catchUp.scope.target }, 'stepping the log backlog again');
            catchUp.failingSinceMs = null;
          }
        } catch (err) {
          // A step whose store transaction failed (a full disk) moved no position: it is taken
          // again, from the same event, at the next interval.
          if (catchUp.failingSinceMs === null) this.deps.log.error({ err, target: catchUp.scope.target }, 'could not step the log backlog; retrying every evaluation interval');
          catchUp.failingSinceMs = this.deps.clock.monotonicMs();
        }
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** At most STEPS_PER_TURN evaluations of one target's catch-up, in the order the log gives them. */
  private turn(catchUp: TargetCatchUp): void {
    const stepper = catchUp.stepper!;
    const budgetEnd = stepper.evaluations + STEPS_PER_TURN;
    for (;;) {
      if (stepper.stepGap(budgetEnd - stepper.evaluations)) return;
      if (catchUp.opening !== null) {
        catchUp.handedId = catchUp.opening;
        catchUp.opening = null;
      }
      // Handing an event, or finishing, may evaluate once more.
      if (stepper.evaluations >= budgetEnd) return;
      const next = catchUp.pending[0];
      if (next) {
        stepper.beforeEvent(next.tsMs, true);
        catchUp.pending.shift();
        catchUp.opening = next.id;
      } else if (catchUp.ending === 'asked') {
        stepper.finishUntil(this.deps.clock.nowMs());
        catchUp.ending = 'finishing';
      } else {
        if (catchUp.ending === 'finishing') this.ended(catchUp);
        return;
      }
    }
  }

  private endFinished(): void {
    const nowMs = this.deps.clock.monotonicMs();
    for (const catchUp of [...this.active.values()]) {
      const quietMs = nowMs - catchUp.lastReadMs;
      if (catchUp.stepper === null) {
        if (quietMs >= START_GRACE_MS) this.ended(catchUp);
      } else if (quietMs >= this.deps.intervalMs && catchUp.ending === 'no') {
        catchUp.ending = 'asked';
      }
    }
    this.drainSoon();
  }

  /** The target's log-only rules are live again (stepped up to now, or left to the next start at stop). */
  private ended(catchUp: TargetCatchUp): void {
    const { stepper } = catchUp;
    this.deps.engine.endCatchUp(catchUp.scope);
    this.active.delete(catchUp.scope.target);
    if (stepper) {
      this.deps.log.info({ target: catchUp.scope.target, fromMs: catchUp.firstEventMs, evaluations: stepper.evaluations },
        this.stopped ? 'stopped while reading a log backlog; the next start steps what was not judged' : 'log backlog read; its rules are live again');
    }
  }
}
