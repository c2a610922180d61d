/**
 * replica-lag-over-lb-limit: a replica replays more than `limitSeconds` (60 s by default) behind,
 * the point where read load balancers drop it (GitLab's max_replication_lag_time, seed
 * 003_e3cc2138bb41931f.txt): its read traffic moves to the others, or fails if all replicas
 * stall on the same record. The cause comes from the replay-stall analysis when pgvigil watches the
 * standby itself.
 *
 * Lag, measured on the standby: now() - pg_last_xact_replay_timestamp() while received WAL waits
 * or the walreceiver is down (0 when it streams and nothing is pending: an idle primary makes that
 * difference grow with nothing to replay). A standby pgvigil does not watch is judged by its row
 * in the primary's pg_stat_replication (replay_lag; NULL, hence no alert, once caught up and
 * idle). A row is a watched standby's when its application_name is that standby's target name or
 * cluster_name, or, unnamed, when there are no more such rows than watched standbys streaming.
 *
 * From a standby's log alone: replay waiting on a logged recovery conflict for longer than the
 * limit puts the standby at least that far behind (replay-stall-log.ts).
 *
 * A watched standby with recovery_min_apply_delay (apply-delay.ts) is meant to be that far behind:
 * only the lag beyond the delay counts against the limit. The primary's pg_stat_replication row of
 * an unwatched standby does not say whether it is delayed, so its lag counts whole.
 */
import type { Labels } from '../domain/index.js';
import { clusterOf, type RuleView, type SeriesData } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { applyDelayOf, type ApplyDelay } from './apply-delay.js';
import { causeEventIds, describeCause, replayStalls, PENDING, STANDING_STILL, type ReplayStall } from './replay-stall.js';
import { formatDuration } from './summary-format.js';

export const ID = 'replica-lag-over-lb-limit';

const DELAY = 'pg_standby_replay_delay_seconds';
const PRIMARY_LAG = 'pg_stat_replication_replay_lag_seconds';
const RECEIVER_UP = 'pg_stat_wal_receiver_up';
const SETTINGS_MAX_AGE_MS = 10 * 60_000;

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
        const delay = applyDelayOf(view, target);
        if (lag === null || lag.minSeconds - (delay?.seconds ?? 0) <= options.limitSeconds) continue;
        const lagAt = { seconds: lag.lastSeconds, tsMs: lag.lastTsMs, series: DELAY, receiverDown: lag.receiverDown, delay };
        findings.push(finding(target, target, {}, lagAt, stalls.find((s) => s.target === target) ?? null, options));
      }
      for (const stall of stalls) {
        // From the log alone: a logged conflict wait is a lower bound of the lag.
        if (stall.series.length > 0 || watchedStandbys.has(stall.target) || stall.cause.kind !== 'conflict' ||
          (stall.standingStillSeconds ?? 0) <= options.limitSeconds) continue;
        const lagAt = { seconds: stall.standingStillSeconds!, tsMs: nowMs, series: null, receiverDown: false, delay: null };
        findings.push(finding(stall.target, stall.target, {}, lagAt, stall, options));
      }
      const unwatched = unwatchedRows(view, watchedStandbys);
      for (const s of view.series(PRIMARY_LAG, { sinceMs: nowMs - options.sustainMs })) {
        // A standby watched directly is judged by its own samples.
        if (!unwatched.has(rowKey(s.target, s.labels))) continue;
        const values = s.points.map((p) => p.value);
        if (values.some((v) => v === null || v <= options.limitSeconds)) continue;
        const name = `standby ${s.labels.application_name || '?'}${s.labels.client_addr ? ` (${s.labels.client_addr})` : ''}`;
        const last = s.points[s.points.length - 1]!;
        findings.push(finding(s.target, name, s.labels, { seconds: last.value!, tsMs: last.tsMs, series: PRIMARY_LAG, receiverDown: false, delay: null }, null, options));
      }
      return findings;
    },
  };
}

interface StandbyLag {
  minSeconds: number;
  lastSeconds: number;
  lastTsMs: number;
  receiverDown: boolean;
}

/** Standby-side lag per sample in the window; null without samples. */
function standbyLag(view: RuleView, target: string, sinceMs: number): StandbyLag | null {
  const delay = view.series(DELAY, { sinceMs, target })[0];
  if (!delay) return null;
  const pending = pointsByTime(view.series(PENDING, { sinceMs, target })[0]);
  const still = pointsByTime(view.series(STANDING_STILL, { sinceMs, target })[0]);
  const receiver = pointsByTime(view.series(RECEIVER_UP, { sinceMs, target })[0]);
  const lags: number[] = [];
  for (const p of delay.points) {
    // Without a walreceiver nothing arrives, so nothing is pending however far the primary went on.
    const behind = (pending.get(p.tsMs) ?? 0) > 0 || (still.get(p.tsMs) ?? 0) > 0 || receiver.get(p.tsMs) === 0;
    lags.push(behind && p.value !== null ? p.value : 0);
  }
  const lastTsMs = delay.points[delay.points.length - 1]!.tsMs;
  return { minSeconds: Math.min(...lags), lastSeconds: lags[lags.length - 1]!, lastTsMs, receiverDown: receiver.get(lastTsMs) === 0 };
}

const rowKey = (target: string, labels: Labels) => `${target}\u0000${labels.application_name ?? ''}\u0000${labels.client_addr ?? ''}`;

/**
 * The current walsender rows (by rowKey) that are not a standby pgvigil watches: a row named
 * after a watched standby (target name or cluster_name) is its; unnamed rows are theirs only when
 * there are no more of them than watched standbys left streaming, else each is judged on its own.
 */
function unwatchedRows(view: RuleView, watched: ReadonlySet<string>): Set<string> {
  const rowsByPrimary = new Map<string, Labels[]>();
  for (const row of view.latest(PRIMARY_LAG)) rowsByPrimary.set(row.target, [...(rowsByPrimary.get(row.target) ?? []), row.labels]);
  const out = new Set<string>();
  for (const [primary, rows] of rowsByPrimary) {
    const standbys = clusterOf(view, primary).filter((t) => watched.has(t));
    const nameOf = (labels: Labels) => standbys.find((t) => standbyNames(view, t).includes(labels.application_name ?? ''));
    const named = new Set(rows.map(nameOf).filter((t) => t !== undefined));
    const unnamed = rows.filter((labels) => nameOf(labels) === undefined);
    const streaming = standbys.filter((t) => !named.has(t) && view.latest(RECEIVER_UP, { target: t })[0]?.value !== 0);
    if (unnamed.length > streaming.length) unnamed.forEach((labels) => out.add(rowKey(primary, labels)));
  }
  return out;
}

/** The application_names a standby's walreceiver may connect with: its target name, its cluster_name. */
function standbyNames(view: RuleView, target: string): string[] {
  const clusterName = view.latest('pg_settings_info', { target, labels: { name: 'cluster_name' }, maxAgeMs: SETTINGS_MAX_AGE_MS })[0]?.labels.setting;
  return clusterName ? [target, clusterName] : [target];
}

function pointsByTime(s: SeriesData | undefined): Map<number, number | null> {
  return new Map((s?.points ?? []).map((p) => [p.tsMs, p.value]));
}

function finding(
  target: string,
  replica: string,
  labels: Labels,
  lag: { seconds: number; tsMs: number; series: string | null; receiverDown: boolean; delay: ApplyDelay | null },
  stall: ReplayStall | null,
  o: ReplicaLagOverLbLimitOptions,
): Finding {
  const known = stall && !(lag.receiverDown && stall.cause.kind === 'unknown') ? stall : null;
  const cause = known ? `: ${describeCause(known.cause)}` : lag.receiverDown ? ': its walreceiver is down (no WAL arrives)' : '';
  const atLeast = lag.series === null ? 'at least ' : '';
  const beyond = lag.delay ? `, ${formatDuration((lag.seconds - lag.delay.seconds) * 1000)} beyond its recovery_min_apply_delay of ${formatDuration(lag.delay.seconds * 1000)}` : '';
  return {
    // A watched standby is its own target; a walsender row is named by its labels.
    dedupKey: findingKey(ID, target, ...(labels.application_name === undefined ? [] : [labels.application_name, labels.client_addr ?? ''])),
    target,
    labels: { ...labels },
    summary: `${replica} is ${atLeast}${formatDuration(lag.seconds * 1000)} behind the primary${beyond}, past the ${o.limitSeconds} s ` +
      `at which load balancers drop it${cause}`,
    evidence: evidenceOf({
      eventIds: stall ? causeEventIds(stall.cause) : [],
      series: [
        ...(lag.series === null ? [] : [{ name: lag.series, labels: { ...labels }, value: lag.seconds, tsMs: lag.tsMs }]),
        ...(lag.delay ? [lag.delay.cited] : []),
        ...(stall?.series ?? []),
      ],
      facts: {
        lag_seconds: Math.round(lag.seconds), limit_seconds: o.limitSeconds, cause: stall?.cause.kind ?? null,
        recovery_min_apply_delay_seconds: lag.delay?.seconds ?? null,
        walreceiver_down: lag.receiverDown,
      },
    }),
  };
}
