/**
 * replay-delayed-on-purpose (info): a standby configured with recovery_min_apply_delay replays each
 * transaction only that long after its commit on the primary, so its replay lag is the setting
 * working, not a stall: said once, at info level, so nobody chases it. The startup process then
 * waits on wait_event RecoveryApplyDelay (pg-messages.md §7), which proves it even when the
 * setting was not sampled.
 *
 * Only while replay is behind (received WAL waits) and no further behind than the delay plus
 * `marginSeconds`: beyond that the delay does not explain the lag, and replay-stalled /
 * replica-lag-over-lb-limit speak. From pg_settings (recovery_min_apply_delay) and pg_standby;
 * nothing in the log says it.
 */
import { applyDelayOf } from './apply-delay.js';
import type { LatestSample } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample } from './sample-evidence.js';
import { formatBytes, formatDuration } from './summary-format.js';

export const ID = 'replay-delayed-on-purpose';

const STARTUP_WAIT = 'pg_standby_startup_wait_event';
const PENDING = 'pg_standby_replay_pending_bytes';
const REPLAY_DELAY = 'pg_standby_replay_delay_seconds';

export interface ReplayDelayedOnPurposeOptions {
  /** How far past recovery_min_apply_delay replay may be and still be explained by it. */
  marginSeconds: number;
}

export const DEFAULTS: ReplayDelayedOnPurposeOptions = { marginSeconds: 60 };

export function replayDelayedOnPurpose(options: ReplayDelayedOnPurposeOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'info',
    description: 'A standby\'s replay lag is recovery_min_apply_delay at work, not a stall.',
    evaluate(view) {
      const findings: Finding[] = [];
      for (const pending of view.latest(PENDING)) {
        const { target } = pending;
        if (pending.value === null || pending.value <= 0) continue;
        const setting = applyDelayOf(view, target);
        const delaySeconds = setting?.seconds ?? null;
        const waiting = view.latest(STARTUP_WAIT, { target, labels: { wait_event: 'RecoveryApplyDelay' } })[0];
        if (!waiting && delaySeconds === null) continue;
        const lag = view.latest(REPLAY_DELAY, { target })[0];
        if (delaySeconds !== null && lag?.value != null && lag.value > delaySeconds + options.marginSeconds) continue;
        findings.push({
          dedupKey: findingKey(ID, target),
          target,
          labels: {},
          severity: 'info',
          summary: `standby ${target} replays WAL late on purpose` +
            `${delaySeconds !== null ? ` (recovery_min_apply_delay = ${formatDuration(delaySeconds * 1000)})` : ' (startup process waits on RecoveryApplyDelay)'}: ` +
            `${lag?.value != null ? `replay ${formatDuration(lag.value * 1000)} behind, ` : ''}${formatBytes(pending.value)} received and waiting; expected, not a stall`,
          evidence: evidenceOf({
            series: [...(setting ? [setting.cited] : []), ...[waiting, lag, pending].filter((s): s is LatestSample => s !== undefined).map(citeSample)],
            facts: { recovery_min_apply_delay_seconds: delaySeconds, startup_waits_on_apply_delay: waiting !== undefined, replay_delay_seconds: lag?.value ?? null },
          }),
        });
      }
      return findings;
    },
  };
}
