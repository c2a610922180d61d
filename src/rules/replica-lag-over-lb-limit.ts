/**
 * replica-lag-over-lb-limit: a replica replays more than `limitSeconds` (60 s by default) behind,
 * the point where read load balancers drop it (GitLab's max_replication_lag_time, seed
 * 003_e3cc2138bb41931f.txt): its read traffic moves to the others, or fails if all replicas
 * stall on the same record. The cause comes from the replay-stall analysis when pgvigil watches the
 * standby itself.
 *
 * Lag, measured on the standby: how long the oldest WAL it received and has not replayed has
 * waited, from its receive and replay positions sampled every second (the first sample whose
 * receive LSN passed today's replay LSN; a lower bound). Not now() - pg_last_xact_replay_timestamp():
 * that moves only at commits, so an idle primary or one long bulk load (WAL streams, no commit)
 * reads as minutes behind while replay is current. A standby whose walreceiver is down receives
 * nothing and so has nothing waiting: standby-disconnected speaks for it.
 *
 * A standby pgvigil does not watch is judged by its row in the primary's pg_stat_replication
 * (replay_lag; NULL, hence no alert, once caught up and idle), if it is a standby that replays:
 * logical subscribers, pg_basebackup and pg_receivewal (no replay position) are no read replicas.
 * A row is a watched standby's when its application_name is that standby's target name or
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
import { clusterOf, type RuleView, type SeriesData, type SeriesPoint } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { applyDelayOf, type ApplyDelay } from './apply-delay.js';
import { causeEventIds, describeCause, replayStalls, type ReplayStall } from './replay-stall.js';
import { citeLast, citeSample, type CitedSeries } from './sample-evidence.js';
import { formatDuration } from './summary-format.js';

export const ID = 'replica-lag-over-lb-limit';

const RECEIVE_LSN = 'pg_standby_receive_lsn_bytes';
const REPLAY_LSN = 'pg_standby_replay_lsn_bytes';
const PRIMARY_LAG = 'pg_stat_replication_replay_lag_seconds';
const WALSENDER_REPLAY_LSN = 'pg_stat_replication_replay_lsn_bytes';
const RECEIVER_UP = 'pg_stat_wal_receiver_up';
const SETTINGS_MAX_AGE_MS = 10 * 60_000;

export interface ReplicaLagOverLbLimitOptions {
  limitSeconds: number;
  /** Every sample in this window must be over the limit (a single late sample is not an outage). */
  sustainMs: number;
  /** For naming the cause (passed to the replay-stall analysis). */
  ddlLookbackMs: number;
  /** How far back the arrival of unreplayed WAL is looked for (past the limit; on a delayed standby, this much beyond its delay). */
  lookbackMs: number;
}

export const DEFAULTS: ReplicaLagOverLbLimitOptions = { limitSeconds: 60, sustainMs: 5_000, ddlLookbackMs: 15 * 60_000, lookbackMs: 5 * 60_000 };

export function replicaLagOverLbLimit(options: ReplicaLagOverLbLimitOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A replica is further behind than read load balancers allow (60 s by default): they stop sending it reads.',
    evaluate(view, nowMs) {
      const stalls = replayStalls(view, { minStallSeconds: 0, ddlLookbackMs: options.ddlLookbackMs });
      const findings: Finding[] = [];
      const watchedStandbys = new Set(view.latest(RECEIVE_LSN).map((s) => s.target));
      for (const target of watchedStandbys) {
        const delay = applyDelayOf(view, target);
        const lookbackMs = options.lookbackMs + (delay?.seconds ?? 0) * 1000;
        const lag = standbyLag(view, target, nowMs - options.sustainMs, nowMs - lookbackMs);
        if (lag === null || lag.minSeconds - (delay?.seconds ?? 0) <= options.limitSeconds) continue;
        const lagAt = { seconds: lag.lastSeconds, cited: lag.cited, delay };
        findings.push(finding(target, target, {}, lagAt, stalls.find((s) => s.target === target) ?? null, options));
      }
      for (const stall of stalls) {
        // From the log alone: a logged conflict wait is a lower bound of the lag.
        if (stall.series.length > 0 || watchedStandbys.has(stall.target) || stall.cause.kind !== 'conflict' ||
          (stall.standingStillSeconds ?? 0) <= options.limitSeconds) continue;
        const lagAt = { seconds: stall.standingStillSeconds!, cited: null, delay: null };
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
        findings.push(finding(s.target, name, s.labels, { seconds: last.value!, cited: [citeLast(s)], delay: null }, null, options));
      }
      return findings;
    },
  };
}

interface StandbyLag {
  minSeconds: number;
  lastSeconds: number;
  /** The receive and replay positions of the last sample. */
  cited: CitedSeries[];
}

/** Standby-side lag of each sample since windowSinceMs (unknown counts as none); null without samples. */
function standbyLag(view: RuleView, target: string, windowSinceMs: number, lookbackSinceMs: number): StandbyLag | null {
  const received = view.series(RECEIVE_LSN, { sinceMs: lookbackSinceMs, target })[0]?.points ?? [];
  const replayed = pointsByTime(view.series(REPLAY_LSN, { sinceMs: lookbackSinceMs, target })[0]);
  const lags: number[] = [];
  received.forEach((p, i) => {
    if (p.tsMs >= windowSinceMs) lags.push(unreplayedWaitSeconds(received, i, replayed.get(p.tsMs) ?? null) ?? 0);
  });
  const last = received[received.length - 1];
  if (lags.length === 0 || !last) return null;
  const cited = [citeSample({ name: RECEIVE_LSN, labels: {}, ...last }), citeSample({ name: REPLAY_LSN, labels: {}, tsMs: last.tsMs, value: replayed.get(last.tsMs) ?? null })];
  return { minSeconds: Math.min(...lags), lastSeconds: lags[lags.length - 1]!, cited };
}

/**
 * At received[at]: how long the WAL just past `replayLsn` has been there, counted from the first
 * sample whose receive LSN passed it (a lower bound: it arrived between that sample and the one
 * before). 0 when replay has caught up with what was received; null when a position is unknown.
 */
export function unreplayedWaitSeconds(received: readonly SeriesPoint[], at: number, replayLsn: number | null): number | null {
  const now = received[at];
  if (!now || now.value === null || replayLsn === null) return null;
  if (now.value <= replayLsn) return 0;
  let first = at;
  while (first > 0 && (received[first - 1]!.value ?? Infinity) > replayLsn) first -= 1;
  return (now.tsMs - received[first]!.tsMs) / 1000;
}

const rowKey = (target: string, labels: Labels) => `${target}\u0000${labels.application_name ?? ''}\u0000${labels.client_addr ?? ''}`;

/**
 * The current walsender rows (by rowKey) that are not a standby pgvigil watches: a row named
 * after a watched standby (target name or cluster_name) is its; unnamed rows are theirs only when
 * there are no more of them than watched standbys left streaming, else each is judged on its own.
 */
function unwatchedRows(view: RuleView, watched: ReadonlySet<string>): Set<string> {
  const replaying = new Set(view.latest(WALSENDER_REPLAY_LSN).filter((r) => r.value !== null).map((r) => rowKey(r.target, r.labels)));
  const rowsByPrimary = new Map<string, Labels[]>();
  for (const row of view.latest(PRIMARY_LAG)) {
    // Only standbys that replay are read replicas: not a subscriber, pg_basebackup or pg_receivewal.
    if (row.labels.kind === 'logical' || !replaying.has(rowKey(row.target, row.labels))) continue;
    rowsByPrimary.set(row.target, [...(rowsByPrimary.get(row.target) ?? []), row.labels]);
  }
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
  /** `cited` null: a lower bound from the log alone. */
  lag: { seconds: number; cited: CitedSeries[] | null; delay: ApplyDelay | null },
  stall: ReplayStall | null,
  o: ReplicaLagOverLbLimitOptions,
): Finding {
  const cause = stall ? `: ${describeCause(stall.cause)}` : '';
  const atLeast = lag.cited === null ? 'at least ' : '';
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
        ...(lag.cited ?? []),
        ...(lag.delay ? [lag.delay.cited] : []),
        ...(stall?.series ?? []),
      ],
      facts: {
        lag_seconds: Math.round(lag.seconds), limit_seconds: o.limitSeconds, cause: stall?.cause.kind ?? null,
        recovery_min_apply_delay_seconds: lag.delay?.seconds ?? null,
      },
    }),
  };
}
