/**
 * The rules engine: evaluates every enabled rule on an interval and right after the store writer
 * commits, and turns findings into alert transitions.
 *
 * Owns: when rules run, isolating their failures, and the firing/resolved state machine per dedup
 * key (fire on appearance; update on a severity change or a summary that says something new, and,
 * rate-limited, on a summary whose quantities alone moved;
 * resolve once a finding has been absent for the hold-down, so a flapping condition pages once).
 * Never: SQL (the RuleViewSource reads the store), formatting notifications (AlertSink and the
 * notifiers do), or any judgement about the database (rules do).
 *
 * A rule that throws is counted and logged with its id; the other rules still run, and the
 * throwing rule's open alerts are neither resolved nor refreshed until it evaluates again.
 *
 * Catch-up: while a target's log backlog is read (backlog-catch-up.ts), its log-only rules are
 * evaluated on the backlog's own time through evaluate(t, t, scope), and live evaluations leave
 * that scope alone; begin/endCatchUp move the scope's hold-downs between the two time bases.
 * Each live evaluation runs inside `judged` (log-judgement.ts), which records in the same store
 * transaction which log events it judged, so a kill cannot keep the one without the other.
 */
import type { Clock, Component, Severity } from '../domain/index.js';
import type { FireInput } from '../store/alert-store.js';
import type { Finding, Rule } from './rule.js';
import type { RuleViewSource } from './rule-view.js';

export type AlertFireInput = FireInput;

/** What the engine writes alerts through (src/store/alert-store.ts implements it). */
export interface AlertSink {
  fire(alert: AlertFireInput, nowMs: number): unknown;
  resolve(dedupKey: string, nowMs: number): unknown;
  /** Stores an open alert's latest summary and evidence: no transition, nothing notified. */
  refresh?(alert: AlertFireInput, nowMs: number): unknown;
  /** Alerts open in the store, so a restart resolves conditions that ended while pgvigil was down. */
  openAlerts?(): ReadonlyArray<{ ruleId: string; dedupKey: string; target?: string; severity?: Severity; summary?: string }>;
  /** What time alone changes for open alerts (a silence that ended sends what it held), after each evaluation. */
  afterEvaluation?(nowMs: number): unknown;
}

/** One target's log-only rules, evaluated on the time of the log backlog being read. */
export interface CatchUpScope {
  target: string;
  ruleIds: ReadonlySet<string>;
}

/** Said of every alert a catch-up fires: it is news, but late news. */
export const FOUND_LATE_NOTE = 'found late, in log lines read after pgvigil was down or behind';

export interface EngineOptions {
  /** Evaluation interval. */
  intervalMs: number;
  /** A finding must stay absent this long before its alert resolves. */
  holdDownMs: number;
  /**
   * An open alert whose summary changed only in its quantities ("waited 6 s" -> "waited 11 s",
   * "1 query" -> "2 queries", "572 MB" -> "1.1 GB") is re-fired at most this often; one that says
   * something new (the holder named or changed, the server recovered) at once. AlertStore then
   * updates the stored summary and evidence, and notifies only if the severity changed.
   */
  refireMinIntervalMs: number;
  /** Evaluations triggered by store commits are at least this far apart. */
  flushMinGapMs: number;
}

export const ENGINE_DEFAULTS: EngineOptions = {
  intervalMs: 5_000,
  holdDownMs: 60_000,
  refireMinIntervalMs: 60_000,
  flushMinGapMs: 1_000,
};

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface EngineDeps {
  rules: readonly Rule[];
  views: RuleViewSource;
  alerts: AlertSink;
  clock: Clock;
  log: Logger;
  /** The store writer: evaluate right after each commit. */
  commits?: { onFlush(listener: () => void): void };
  /**
   * Records which log events each live evaluation judged (log-judgement.ts), in the store
   * transaction it runs `evaluate` in; `catchingUp` names the targets whose log-only rules it left alone.
   */
  judged?: { live(evaluate: () => void, nowMs: number, catchingUp: (target: string) => boolean): void };
  options?: Partial<EngineOptions>;
}

/** lastSeen and lastFired are steady times (see evaluate): a wall-clock jump must not end a hold-down. */
interface OpenAlert {
  ruleId: string;
  /** Null for an alert resumed from a sink that does not say (it then belongs to no catch-up). */
  target: string | null;
  severity: Severity | null;
  summary: string | null;
  lastSeenMs: number;
  lastFiredMs: number;
  /**
   * The latest finding the refire limit kept from the store (new quantities only): written
   * before the alert resolves, so the record ends with what the condition last looked like (a
   * storm's full count), not with its first sight.
   */
  unsaved?: AlertFireInput;
}

export interface EvaluationReport {
  fired: string[];
  updated: string[];
  resolved: string[];
  failedRules: string[];
}

export interface EngineStats {
  evaluations: number;
  lastEvaluationMs: number | null;
  /** Throws per rule id since start. */
  ruleFailures: Record<string, number>;
  /** fire/resolve calls that threw (the store could not write); retried on the next evaluation. */
  sinkFailures: number;
  /** Findings dropped because another finding of the same evaluation had the same dedup key. */
  duplicateFindings: number;
  openAlerts: number;
}

export class RuleEngine implements Component {
  readonly name = 'rules';
  private readonly rules: readonly Rule[];
  private readonly options: EngineOptions;
  private readonly open = new Map<string, OpenAlert>();
  private timer: { cancel(): void } | null = null;
  private running = false;
  private commitEvaluationQueued = false;
  /** Steady time of the last evaluation. */
  private lastRunMs = -Infinity;
  private readonly counters = { evaluations: 0, lastEvaluationMs: null as number | null, sinkFailures: 0, duplicateFindings: 0 };
  private readonly ruleFailures = new Map<string, number>();
  /** Scopes whose backlog is being read, by target: live evaluations leave them alone. */
  private readonly catchingUp = new Map<string, CatchUpScope>();

  constructor(private readonly deps: EngineDeps) {
    this.rules = deps.rules;
    this.options = { ...ENGINE_DEFAULTS, ...deps.options };
    deps.commits?.onFlush(() => this.afterCommit());
  }

  async start(): Promise<void> {
    this.loadFiring();
    this.running = true;
    this.timer = this.deps.clock.setInterval(() => this.tick(), this.options.intervalMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    this.timer?.cancel();
    this.timer = null;
  }

  get stats(): EngineStats {
    return {
      ...this.counters,
      ruleFailures: Object.fromEntries(this.ruleFailures),
      openAlerts: this.open.size,
    };
  }

  /**
   * One evaluation of every rule at `nowMs` (the clock's time by default). Hold-downs and the
   * re-fire interval are measured in `steadyMs`: the monotonic clock when the engine runs live,
   * so a wall clock jumping an hour forward does not resolve an alert whose condition was absent
   * for one evaluation, and one jumping back does not hold an alert open until it catches up.
   * A caller that gives nowMs (a replay, a test) drives both with it.
   *
   * With `scope` (a catch-up), only its rules' findings and alerts on its target; without, all
   * but those of scopes catching up.
   */
  evaluate(nowMs: number = this.deps.clock.nowMs(), steadyMs: number = nowMs, scope?: CatchUpScope): EvaluationReport {
    const started = performance.now();
    if (!scope) this.lastRunMs = steadyMs;
    const report: EvaluationReport = { fired: [], updated: [], resolved: [], failedRules: [] };
    const view = this.deps.views.at(nowMs);
    const seen = new Set<string>();
    const mine = (ruleId: string, target: string | null) => (scope ? inScope(scope, ruleId, target) : !this.caughtUpElsewhere(ruleId, target));
    for (const rule of scope ? this.rules.filter((r) => scope.ruleIds.has(r.id)) : this.rules) {
      let findings: Finding[];
      try {
        findings = rule.evaluate(view, nowMs);
      } catch (err) {
        this.ruleFailures.set(rule.id, (this.ruleFailures.get(rule.id) ?? 0) + 1);
        this.deps.log.error({ err, ruleId: rule.id }, 'rule failed; its open alerts are kept as they are');
        report.failedRules.push(rule.id);
        continue;
      }
      for (const finding of findings) {
        if (!mine(rule.id, finding.target)) continue;
        if (seen.has(finding.dedupKey)) {
          this.counters.duplicateFindings++;
          continue;
        }
        seen.add(finding.dedupKey);
        this.apply(rule, finding, nowMs, steadyMs, report, scope !== undefined);
      }
    }
    this.resolveAbsent(seen, new Set(report.failedRules), nowMs, steadyMs, report, mine);
    if (!scope) this.call(() => this.deps.alerts.afterEvaluation?.(nowMs), { dedupKey: '', action: 'after evaluation' });
    this.counters.evaluations++;
    this.counters.lastEvaluationMs = performance.now() - started;
    return report;
  }

  /**
   * Starts evaluating `scope` on the backlog's time: its open alerts' hold-downs start again at
   * `steadyMs` (the backlog's first instant), as after a restart.
   */
  beginCatchUp(scope: CatchUpScope, steadyMs: number): void {
    this.catchingUp.set(scope.target, scope);
    this.restartHoldDowns(scope, steadyMs);
  }

  /** Live again: the alerts the catch-up left open go on with a fresh hold-down on the steady clock. */
  endCatchUp(scope: CatchUpScope): void {
    this.catchingUp.delete(scope.target);
    this.restartHoldDowns(scope, this.deps.clock.monotonicMs());
  }

  openAlertsIn(scope: CatchUpScope): number {
    let n = 0;
    for (const alert of this.open.values()) if (inScope(scope, alert.ruleId, alert.target)) n++;
    return n;
  }

  private restartHoldDowns(scope: CatchUpScope, steadyMs: number): void {
    for (const alert of this.open.values()) {
      if (inScope(scope, alert.ruleId, alert.target)) alert.lastSeenMs = alert.lastFiredMs = steadyMs;
    }
  }

  private caughtUpElsewhere(ruleId: string, target: string | null): boolean {
    const scope = target === null ? undefined : this.catchingUp.get(target);
    return scope !== undefined && scope.ruleIds.has(ruleId);
  }

  private apply(rule: Rule, finding: Finding, nowMs: number, steadyMs: number, report: EvaluationReport, late: boolean): void {
    const severity = finding.severity ?? rule.severity;
    const known = this.open.get(finding.dedupKey);
    const input: AlertFireInput = {
      ruleId: rule.id, dedupKey: finding.dedupKey, severity, target: finding.target, labels: finding.labels,
      summary: late ? `${finding.summary} (${FOUND_LATE_NOTE})` : finding.summary,
      evidence: late ? { ...finding.evidence, facts: { ...finding.evidence.facts, found_in_backlog: true } } : finding.evidence,
    };
    if (known) {
      known.lastSeenMs = steadyMs;
      // Resumed after a restart without severity or summary: adopt the current ones, no re-page.
      known.severity ??= severity;
      known.summary ??= finding.summary;
      const severityChanged = known.severity !== severity;
      const summaryDue = known.summary !== finding.summary &&
        (gistOf(known.summary) !== gistOf(finding.summary) || steadyMs - known.lastFiredMs >= this.options.refireMinIntervalMs);
      if (!severityChanged && !summaryDue) {
        if (known.summary !== finding.summary) known.unsaved = input;
        return;
      }
    }
    if (!this.call(() => this.deps.alerts.fire(input, nowMs), { dedupKey: finding.dedupKey, action: 'fire' })) return;
    this.open.set(finding.dedupKey, { ruleId: rule.id, target: finding.target, severity, summary: finding.summary, lastSeenMs: steadyMs, lastFiredMs: steadyMs });
    (known ? report.updated : report.fired).push(finding.dedupKey);
  }

  private resolveAbsent(
    seen: Set<string>, failed: Set<string>, nowMs: number, steadyMs: number, report: EvaluationReport,
    mine: (ruleId: string, target: string | null) => boolean,
  ): void {
    const enabled = new Set(this.rules.map((r) => r.id));
    for (const [key, alert] of this.open) {
      if (seen.has(key) || failed.has(alert.ruleId) || !mine(alert.ruleId, alert.target)) continue;
      // An alert of a rule that is disabled or no longer exists would never resolve otherwise.
      const watched = enabled.has(alert.ruleId);
      if (watched && steadyMs - alert.lastSeenMs < this.options.holdDownMs) continue;
      const { unsaved } = alert;
      const sink = this.deps.alerts;
      if (unsaved && sink.refresh && !this.call(() => sink.refresh!(unsaved, nowMs), { dedupKey: key, action: 'refresh' })) continue;
      delete alert.unsaved;
      if (!this.call(() => this.deps.alerts.resolve(key, nowMs), { dedupKey: key, action: 'resolve' })) continue;
      this.open.delete(key);
      report.resolved.push(key);
    }
  }

  private call(fn: () => unknown, context: { dedupKey: string; action: string }): boolean {
    try {
      fn();
      return true;
    } catch (err) {
      this.counters.sinkFailures++;
      this.deps.log.error({ err, ...context }, 'could not write an alert transition; retrying on the next evaluation');
      return false;
    }
  }

  private loadFiring(): void {
    const steadyMs = this.deps.clock.monotonicMs();
    let firing: ReturnType<NonNullable<AlertSink['openAlerts']>> = [];
    try {
      firing = this.deps.alerts.openAlerts?.() ?? [];
    } catch (err) {
      this.deps.log.error({ err }, 'could not read the open alerts; they resolve only when their rule fires and clears again');
    }
    for (const a of firing) {
      // A fresh hold-down: the condition must be seen absent for a while after a restart too.
      this.open.set(a.dedupKey, {
        ruleId: a.ruleId, target: a.target ?? null, severity: a.severity ?? null, summary: a.summary ?? null, lastSeenMs: steadyMs, lastFiredMs: steadyMs,
      });
    }
    if (firing.length > 0) this.deps.log.info({ openAlerts: firing.length }, 'rules engine resumed open alerts');
  }

  private tick(): void {
    if (this.running) this.guarded();
  }

  private afterCommit(): void {
    if (!this.running || this.commitEvaluationQueued) return;
    if (this.deps.clock.monotonicMs() - this.lastRunMs < this.options.flushMinGapMs) return;
    this.commitEvaluationQueued = true;
    // After the writer's listeners return: the commit must not wait for the rules.
    queueMicrotask(() => {
      this.commitEvaluationQueued = false;
      this.tick();
    });
  }

  private guarded(): void {
    const nowMs = this.deps.clock.nowMs();
    const evaluate = () => {
      this.evaluate(nowMs, this.deps.clock.monotonicMs());
    };
    try {
      if (this.deps.judged) this.deps.judged.live(evaluate, nowMs, (target) => this.catchingUp.has(target));
      else evaluate();
    } catch (err) {
      // The view could not be built (the store is unreadable): try again on the next tick.
      this.deps.log.error({ err }, 'rules evaluation failed');
    }
  }
}

/**
 * What a summary says without its quantities: each number and the word after it (its unit or
 * noun: "6 s", "2 queries", "1.1 GB", "pid 4242 (") become one mark.
 */
function gistOf(summary: string): string {
  return summary.replace(/\d[\d,.]*(?:\s+\S+)?/g, '#');
}

function inScope(scope: CatchUpScope, ruleId: string, target: string | null): boolean {
  return target === scope.target && scope.ruleIds.has(ruleId);
}
