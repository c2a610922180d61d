/**
 * recovery_min_apply_delay as the replay rules read it. A delayed standby replays each commit only
 * that long after the primary committed it (the startup process waits on RecoveryApplyDelay), so
 * replay standing still and lag up to the delay are the setting at work, which
 * replay-delayed-on-purpose says at info level; only what goes beyond the delay is a stall
 * (replay-stall.ts) or lag a load balancer should know about (replica-lag-over-lb-limit).
 *
 * From pg_settings, sampled once a minute. A standby whose settings were not sampled is judged
 * without a delay: the log does not show the setting.
 */
import type { RuleView } from './rule-view.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS, type CitedSeries } from './sample-evidence.js';

/** The setting in seconds (pg_settings gives ms; the collector converts). */
export const APPLY_DELAY = 'pg_settings_recovery_min_apply_delay_seconds';

export interface ApplyDelay {
  seconds: number;
  cited: CitedSeries;
}

/** The standby's configured apply delay when it is sampled and above 0; null otherwise. */
export function applyDelayOf(view: RuleView, target: string): ApplyDelay | null {
  const setting = view.latest(APPLY_DELAY, { target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  if (setting?.value == null || setting.value <= 0) return null;
  return { seconds: setting.value, cited: citeSample(setting) };
}
