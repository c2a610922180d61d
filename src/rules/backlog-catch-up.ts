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
 * A catch-up ends once no event behind the clock has come for an evaluation interval: the backlog
 * was read to its end. Live events read meanwhile do not end it: they are evaluated when it ends,
 * and on a busy server they arrive while the backlog is still being read. Only rules that read
 * the log alone take part: the samples of a time pgvigil was down do not exist.
 */
import type { Clock, Component } from '../domain/index.js';
import type { CatchUpScope, RuleEngine } from './engine.js';
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

interface Logger {
  info(obj: object, msg: string): void;
}

export interface BacklogCatchUpDeps {
  engine: Pick<RuleEngine, 'evaluate' | 'beginCatchUp' | 'endCatchUp' | 'openAlertsIn'>;
  /** The store writer: what it committed, in commit order. */
  commits: { onFlush(listener: (result: { events: ReadonlyArray<{ event: { target: string; tsMs: number } }> }) => void): void };
  clock: Clock;
  log: Logger;
  /** The enabled rules that read the log alone (catalog.ts logOnlyRuleIds). */
  ruleIds: ReadonlySet<string>;
  /** The engine's evaluation interval: the backlog's steps, and how long a read may pause. */
  intervalMs: number;
}

interface TargetCatchUp {
  scope: CatchUpScope;
  stepper: ReplayStepper;
  firstEventMs: number;
  /** Steady time of the last backlog event committed. */
  lastReadMs: number;
}

export class BacklogCatchUp implements Component {
  readonly name = 'backlog-catch-up';
  private readonly active = new Map<string, TargetCatchUp>();
  private timer: { cancel(): void } | null = null;

  constructor(private readonly deps: BacklogCatchUpDeps) {
    deps.commits.onFlush(({ events }) => this.committed(events));
  }

  async start(): Promise<void> {
    this.timer = this.deps.clock.setInterval(() => this.endFinished(), this.deps.intervalMs);
  }

  /** Ends every catch-up: what was read is judged now rather than never. */
  async stop(): Promise<void> {
    this.timer?.cancel();
    this.timer = null;
    for (const catchUp of [...this.active.values()]) this.end(catchUp);
  }

  private committed(events: ReadonlyArray<{ event: { target: string; tsMs: number } }>): void {
    if (this.deps.ruleIds.size === 0) return;
    const behindBefore = this.deps.clock.nowMs() - backlogBehindMs(this.deps.intervalMs);
    for (const { event } of events) {
      if (event.tsMs >= behindBefore) continue;
      const catchUp = this.active.get(event.target) ?? this.begin(event.target, event.tsMs);
      catchUp.stepper.beforeEvent(event.tsMs, true);
      catchUp.lastReadMs = this.deps.clock.monotonicMs();
    }
  }

  private begin(target: string, firstEventMs: number): TargetCatchUp {
    const { engine, clock, ruleIds, intervalMs, log } = this.deps;
    const scope: CatchUpScope = { target, ruleIds };
    // The events are committed before the stepper hears of them: nothing to commit on its behalf.
    const stepper = new ReplayStepper({
      commit: () => undefined,
      evaluate: (nowMs) => engine.evaluate(nowMs, nowMs, scope),
      openAlerts: () => engine.openAlertsIn(scope),
    }, new EventTimeClock(), { intervalMs, ...REPLAY_DEFAULTS });
    engine.beginCatchUp(scope, firstEventMs);
    const catchUp: TargetCatchUp = { scope, stepper, firstEventMs, lastReadMs: clock.monotonicMs() };
    this.active.set(target, catchUp);
    log.info({ target, behindSeconds: Math.round((clock.nowMs() - firstEventMs) / 1000), rules: [...ruleIds] },
      'reading a log backlog: its log-only rules are evaluated on the log\'s own time until it is read');
    return catchUp;
  }

  private endFinished(): void {
    const nowMs = this.deps.clock.monotonicMs();
    for (const catchUp of [...this.active.values()]) if (nowMs - catchUp.lastReadMs >= this.deps.intervalMs) this.end(catchUp);
  }

  private end(catchUp: TargetCatchUp): void {
    const untilMs = this.deps.clock.nowMs();
    catchUp.stepper.finishUntil(untilMs);
    this.deps.engine.endCatchUp(catchUp.scope);
    this.active.delete(catchUp.scope.target);
    this.deps.log.info({ target: catchUp.scope.target, fromMs: catchUp.firstEventMs, evaluations: catchUp.stepper.evaluations },
      'log backlog read; its rules are live again');
  }
}
