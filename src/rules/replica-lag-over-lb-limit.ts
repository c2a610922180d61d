/**
 * replica-lag-over-lb-limit: a replica replays more than `limitSeconds` (60 s by default) behind,
 * the point where read load balancers drop it (GitLab's max_replication_lag_time, seed
 * 003_e3cc2138bb41931f.txt): its read traffic moves to the others, or fails if all replicas
 * stall on the same record. The cause comes from the replay-stall analysis when pgvigil watches the
 * standby itself.
 *
 * Lag, measured on the standby: now() - pg_last_xact_replay_timestamp() while received WAL waits
 * (0 when nothing is pending: an idle primary makes that difference grow with nothing to replay).
 * When no standby of the cluster is watched, the primary's pg_stat_replication replay_lag is used
 * (NULL, hence no alert, once a standby is caught up and idle).
 */
import type { Labels } from '../domain/index.js';
import { clusterOf, type RuleView, type SeriesData } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { causeEventIds, describeCause, replayStalls, PENDING, STANDING_STILL, type ReplayStall } from './replay-stall.js';
import { formatDuration } from './summary-format.js';

export const ID = 'replica-lag-over-lb-limit';

const DELAY = 'pg_standby_replay_delay_seconds';
const PRIMARY_LAG = 'pg_stat_replication_replay_lag_seconds';

export interface ReplicaLagOverLbLimitOptions {
  limitSeconds: number;
  /** Every sample in this window must be over the limit (a single late commit is not an outage). */
  sustainMs: number;
  /** For naming the cause (passed to the replay-stall analysis). */
  ddlLookbackMs: number;
}

export const DEFAULTS: ReplicaLagOverLbLimitOptions = { limitSeconds: 60, sustainMs: 5_000, ddlLookbackMs: 15 * 60_000 };

export function replicaLagOverLbLimit(options: ReplicaLagOverLbLimitOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A replica is further behind than read load balancers allow (60 s by default): they stop sending it reads.',
    evaluate(view, nowMs) {
      const stalls = replayStalls(view, { minStallSeconds: 0, ddlLookbackMs: options.ddlLookbackMs });
      const findings: Finding[] = [];
      const watchedStandbys = new Set(view.latest(DELAY).map((s) => s.target));
      for (const target of watchedStandbys) {
        const lag = standbyLag(view, target, nowMs - options.sustainMs);
        if (lag === null || lag.minSeconds <= options.limitSeconds) continue;
        const lagAt = { seconds: lag.lastSeconds, tsMs: lag.lastTsMs, series: DELAY };
        findings.push(finding(target, target, {}, lagAt, stalls.find((s) => s.target === target) ?? null, options));
      }
      for (const s of view.series(PRIMARY_LAG, { sinceMs: nowMs - options.sustainMs })) {
        // A standby watched directly is judged by its own samples.
        if (clusterOf(view, s.target).some((t) => watchedStandbys.has(t)) || !isFresh(view, s)) continue;
        const values = s.points.map((p) => p.value);
        if (values.some((v) => v === null || v <= options.limitSeconds)) continue;
        const name = `standby ${s.labels.application_name || '?'}${s.labels.client_addr ? ` (${s.labels.client_addr})` : ''}`;
        const last = s.points[s.points.length - 1]!;
        findings.push(finding(s.target, name, s.labels, { seconds: last.value!, tsMs: last.tsMs, series: PRIMARY_LAG }, null, options));
      }
      return findings;
    },
  };
}

/** Standby-side lag per sample in the window; null without samples. */
function standbyLag(view: RuleView, target: string, sinceMs: number): { minSeconds: number; lastSeconds: number; lastTsMs: number } | null {
  const delay = view.series(DELAY, { sinceMs, target })[0];
  if (!delay) return null;
  const pending = pointsByTime(view.series(PENDING, { sinceMs, target })[0]);
  const still = pointsByTime(view.series(STANDING_STILL, { sinceMs, target })[0]);
  const lags: number[] = [];
  for (const p of delay.points) {
    const behind = (pending.get(p.tsMs) ?? 0) > 0 || (still.get(p.tsMs) ?? 0) > 0;
    lags.push(behind && p.value !== null ? p.value : 0);
  }
  return { minSeconds: Math.min(...lags), lastSeconds: lags[lags.length - 1]!, lastTsMs: delay.points[delay.points.length - 1]!.tsMs };
}

function pointsByTime(s: SeriesData | undefined): Map<number, number | null> {
  return new Map((s?.points ?? []).map((p) => [p.tsMs, p.value]));
}

function isFresh(view: RuleView, s: SeriesData): boolean {
  return view.latest(PRIMARY_LAG, { target: s.target, labels: s.labels }).length > 0;
}

function finding(
  target: string,
  replica: string,
  labels: Labels,
  lag: { seconds: number; tsMs: number; series: string },
  stall: ReplayStall | null,
  o: ReplicaLagOverLbLimitOptions,
): Finding {
  const cause = stall ? `: ${describeCause(stall.cause)}` : '';
  return {
    // A watched standby is its own target; a walsender row is named by its labels.
    dedupKey: findingKey(ID, target, ...(labels.application_name === undefined ? [] : [labels.application_name, labels.client_addr ?? ''])),
    target,
    labels: { ...labels },
    summary: `${replica} is ${formatDuration(lag.seconds * 1000)} behind the primary, past the ${o.limitSeconds} s ` +
      `at which load balancers drop it${cause}`,
    evidence: evidenceOf({
      eventIds: stall ? causeEventIds(stall.cause) : [],
      series: [{ name: lag.series, labels: { ...labels }, value: lag.seconds, tsMs: lag.tsMs }, ...(stall?.series ?? [])],
      facts: { lag_seconds: Math.round(lag.seconds), limit_seconds: o.limitSeconds, cause: stall?.cause.kind ?? null },
    }),
  };
}
