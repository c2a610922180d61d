/**
 * Which severity a channel starts at for one alert: its min_severity, unless an override names
 * the alert's rule, its target, or both. Pure; the store asks it where routing decides.
 */
import type { Severity } from '../domain/index.js';

/** `notify.<channel>.min_severity_overrides[]`: rule, target or both (null: any). */
export interface MinSeverityOverride {
  rule: string | null;
  target: string | null;
  minSeverity: Severity;
}

export interface SeverityRouting {
  /** The channel's own min_severity, for alerts no override names. */
  readonly minSeverity: Severity;
  readonly minSeverityOverrides: readonly MinSeverityOverride[];
}

/**
 * The most specific override that matches wins: rule and target, then rule, then target, then the
 * channel's default. Config validation refuses two overrides with the same rule and target, so
 * the order of the list never decides.
 */
export function minSeverityFor(routing: SeverityRouting, ruleId: string, target: string): Severity {
  let best: { specificity: number; minSeverity: Severity } = { specificity: 0, minSeverity: routing.minSeverity };
  for (const override of routing.minSeverityOverrides) {
    if ((override.rule !== null && override.rule !== ruleId) || (override.target !== null && override.target !== target)) continue;
    const specificity = (override.rule !== null ? 2 : 0) + (override.target !== null ? 1 : 0);
    if (specificity > best.specificity) best = { specificity, minSeverity: override.minSeverity };
  }
  return best.minSeverity;
}
