/**
 * For rule tests: runs rules through the real engine at a list of instants and records the alert
 * transitions it writes, so a table-driven test asserts "fires at t1, stays open, resolves at t2,
 * paged once" instead of poking at the engine's state.
 */
import type { Clock, Severity } from '../domain/index.js';
import { RuleEngine, type AlertFireInput, type AlertSink, type EngineOptions } from './engine.js';
import type { Rule } from './rule.js';
import type { RuleViewSource } from './rule-view.js';
import { NOTATION_STEP_MS, NOTATION_T0 } from './series-notation.js';

export interface Transition {
  atMs: number;
  action: 'fire' | 'resolve';
  dedupKey: string;
  severity?: Severity;
  summary?: string;
  alert?: AlertFireInput;
}

export class RecordingSink implements AlertSink {
  readonly transitions: Transition[] = [];

  fire(alert: AlertFireInput, nowMs: number): void {
    this.transitions.push({ atMs: nowMs, action: 'fire', dedupKey: alert.dedupKey, severity: alert.severity, summary: alert.summary, alert });
  }

  resolve(dedupKey: string, nowMs: number): void {
    this.transitions.push({ atMs: nowMs, action: 'resolve', dedupKey });
  }
}

const QUIET_LOG = { info() {}, warn() {}, error() {} };

/** Instants `from`, `from + step`, ... up to and including `to` (defaults: the notation's grid). */
export function instants(fromStep: number, toStep: number, stepMs = NOTATION_STEP_MS, startMs = NOTATION_T0): number[] {
  const out: number[] = [];
  for (let i = fromStep; i <= toStep; i++) out.push(startMs + i * stepMs);
  return out;
}

export function timeline(
  rules: readonly Rule[],
  views: RuleViewSource,
  at: readonly number[],
  options: Partial<EngineOptions> = {},
): Transition[] {
  const sink = new RecordingSink();
  let now = at[0] ?? 0;
  const clock = { nowMs: () => now } as Clock;
  const engine = new RuleEngine({ rules, views, alerts: sink, clock, log: QUIET_LOG, options: { holdDownMs: 0, ...options } });
  for (const t of at) {
    now = t;
    engine.evaluate(t);
  }
  return sink.transitions;
}

/** `[['fire', step], ['resolve', step]]` per dedup key: the shape most rule tests assert. */
export function transitionSteps(transitions: readonly Transition[], startMs = NOTATION_T0, stepMs = NOTATION_STEP_MS): Array<[string, string, number]> {
  return transitions.map((t) => [t.action, t.dedupKey, (t.atMs - startMs) / stepMs]);
}
