/**
 * standby-disconnected: a standby that no longer streams WAL from its primary. Seen from the
 * standby (pg_standby collector): its walreceiver is gone, or it runs but has received nothing
 * (not even the sender's keepalives) for longer than its wal_receiver_timeout allows; the standby
 * then replays only what it already has, or what restore_command brings from the archive. Seen
 * from the primary (pg_stat_replication): a walsender that was streaming to a standby is gone.
 *
 * Gone for `sustainMs` (3 min): a planned restart of the standby or of its primary takes less, and
 * a standby that serves reads is dropped by replica-lag-over-lb-limit long before if it falls behind.
 * Only walsenders of physical standbys that replay count: pg_basebackup -X stream and
 * pg_receivewal stream WAL but report no replay position, and a logical subscriber (disabled for
 * maintenance, say) is no standby.
 *
 * A standby that never streamed while pgvigil watched it (archive recovery only) is not
 * "disconnected": the walreceiver must have been up within `lookbackMs`. The walreceiver's own log
 * lines (`could not connect to the primary server`, `replication terminated by primary server`)
 * are not classified yet: samples only.
 */
import { clusterOf, type LatestSample, type RuleView, type SeriesData } from './rule-view.js';
import { downSpell } from './down-spell.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeLast, citeSample } from './sample-evidence.js';
import { formatBytes, formatDuration, formatTime } from './summary-format.js';

export const ID = 'standby-disconnected';

const RECEIVER_UP = 'pg_stat_wal_receiver_up';
const RECEIVER_INFO = 'pg_stat_wal_receiver_info';
const SILENT = 'pg_stat_wal_receiver_silent_seconds';
const RECEIVE_LSN = 'pg_standby_receive_lsn_bytes';
const WALSENDER = 'pg_stat_replication_info';
const WALSENDER_REPLAY_LSN = 'pg_stat_replication_replay_lsn_bytes';
const RECEIVER_TIMEOUT = 'pg_settings_wal_receiver_timeout_seconds';
const STATUS_INTERVAL = 'pg_settings_wal_receiver_status_interval_seconds';
const SETTINGS_MAX_AGE_MS = 10 * 60_000;
const DEFAULT_STATUS_INTERVAL_SECONDS = 10;

export interface StandbyDisconnectedOptions {
  /** Down (or gone from pg_stat_replication) in every sample for this long: a planned restart is not an outage. */
  sustainMs: number;
  /** wal_receiver_timeout when the standby's setting was not sampled (its default). */
  silentSeconds: number;
  /** How far back a walreceiver or walsender must have been seen to count as disconnected now. */
  lookbackMs: number;
}

export const DEFAULTS: StandbyDisconnectedOptions = { sustainMs: 180_000, silentSeconds: 60, lookbackMs: 3_600_000 };

export function standbyDisconnected(options: StandbyDisconnectedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A standby stopped receiving WAL: its walreceiver is down or silent, or the primary lost its walsender.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const up of view.latest(RECEIVER_UP)) {
        const f = up.value === 0 ? receiverDown(view, up, nowMs, options) : receiverSilent(view, up.target, options);
        if (f) findings.push(f);
      }
      findings.push(...walsendersGone(view, nowMs, options));
      return findings;
    },
  };
}

function receiverDown(view: RuleView, up: LatestSample, nowMs: number, o: StandbyDisconnectedOptions): Finding | null {
  const { target } = up;
  const history = view.series(RECEIVER_UP, { sinceMs: nowMs - o.lookbackMs, target })[0]?.points ?? [];
  const { lastUpMs, downSinceMs: downSince } = downSpell(history);
  if (lastUpMs === undefined || downSince === undefined || nowMs - downSince < o.sustainMs) return null;
  const sender = view.series(RECEIVER_INFO, { sinceMs: nowMs - o.lookbackMs, target }).sort((a, b) => lastTs(b) - lastTs(a))[0];
  const from = sender ? ` from ${sender.labels.sender_host || '?'}:${sender.labels.sender_port || '?'}` : '';
  // From the first sample without it: WAL streamed between the last sample with it and the disconnect is no archive's.
  const received = view.series(RECEIVE_LSN, { sinceMs: downSince, target })[0];
  const arrived = received ? movedBy(received) : null;
  const still = arrived === null ? '' : arrived > 0
    ? `; ${formatBytes(arrived)} of WAL arrived since, from the archive (restore_command) only`
    : '; no WAL has arrived since: it replays only what it already has';
  return {
    dedupKey: findingKey(ID, target, 'walreceiver'),
    target,
    labels: { side: 'standby' },
    summary: `standby ${target} has no walreceiver for ${formatDuration(nowMs - downSince)} (it streamed${from} until ${formatTime(lastUpMs)})${still}`,
    evidence: evidenceOf({
      series: [citeSample(up), ...(sender ? [citeLast(sender)] : []), ...(received ? [citeLast(received)] : [])],
      facts: { last_streaming_ms: lastUpMs, sender_host: sender?.labels.sender_host ?? null, wal_arrived_bytes: arrived },
    }),
  };
}

/** Silence measured by the standby's own clock: pgvigil's may be off from the server's by more than the limit. */
function receiverSilent(view: RuleView, target: string, o: StandbyDisconnectedOptions): Finding | null {
  const silent = view.latest(SILENT, { target })[0];
  const limitSeconds = silenceLimitSeconds(view, target, o);
  if (!silent || silent.value === null || limitSeconds === null || silent.value < limitSeconds) return null;
  const silentMs = silent.value * 1000;
  const sender = view.latest(RECEIVER_INFO, { target })[0];
  return {
    dedupKey: findingKey(ID, target, 'walreceiver'),
    target,
    labels: { side: 'standby' },
    summary: `standby ${target}'s walreceiver${sender ? ` (from ${sender.labels.sender_host || '?'}:${sender.labels.sender_port || '?'})` : ''} ` +
      `has received nothing, not even a keepalive, for ${formatDuration(silentMs)}: the connection is dead or the primary is stuck`,
    evidence: evidenceOf({ series: [citeSample(silent)], facts: { silent_seconds: Math.round(silent.value), limit_seconds: limitSeconds } }),
  };
}

/**
 * A quiet sender sends nothing until the walreceiver, silent for half its wal_receiver_timeout,
 * asks for a reply; at wal_receiver_timeout it gives up and reconnects. Still streaming and silent
 * past the timeout plus one status interval (the slack of its wake-ups and of sampling) is stuck.
 * wal_receiver_timeout = 0 turns the asking off: an idle primary then sends nothing for as long
 * as it stays idle, and silence tells nothing.
 */
function silenceLimitSeconds(view: RuleView, target: string, o: StandbyDisconnectedOptions): number | null {
  const setting = (name: string) => view.latest(name, { target, maxAgeMs: SETTINGS_MAX_AGE_MS })[0]?.value ?? null;
  const timeoutSeconds = setting(RECEIVER_TIMEOUT) ?? o.silentSeconds;
  if (timeoutSeconds <= 0) return null;
  return timeoutSeconds + Math.max(0, setting(STATUS_INTERVAL) ?? DEFAULT_STATUS_INTERVAL_SECONDS);
}

/** On a primary: a standby's walsender that was streaming within the lookback and has not been seen for sustainMs. */
function walsendersGone(view: RuleView, nowMs: number, o: StandbyDisconnectedOptions): Finding[] {
  const sinceMs = nowMs - o.lookbackMs;
  const replaying = new Set(view.series(WALSENDER_REPLAY_LSN, { sinceMs })
    .filter((s) => s.points.some((p) => p.value !== null)).map((s) => walsenderKey(s)));
  const byStandby = new Map<string, SeriesData[]>();
  for (const s of view.series(WALSENDER, { sinceMs })) {
    const key = walsenderKey(s);
    if (s.labels.kind === 'logical' || !replaying.has(key)) continue;
    byStandby.set(key, [...(byStandby.get(key) ?? []), s]);
  }
  const watched = new Set(view.latest(RECEIVER_UP).map((s) => s.target));
  const findings: Finding[] = [];
  for (const connections of byStandby.values()) {
    const { target, labels } = connections[0]!;
    const lastSeen = Math.max(...connections.map(lastTs));
    const streamed = connections.some((c) => c.labels.state === 'streaming');
    if (!streamed || nowMs - lastSeen < o.sustainMs) continue;
    // A standby pgvigil watches itself says more (and is judged by its own walreceiver).
    if (clusterOf(view, target).some((t) => t !== target && watched.has(t))) continue;
    const name = `${labels.application_name || '?'}${labels.client_addr ? ` (${labels.client_addr})` : ''}`;
    findings.push({
      dedupKey: findingKey(ID, target, labels.application_name ?? '', labels.client_addr ?? ''),
      target,
      labels: { side: 'primary', application_name: labels.application_name ?? '', client_addr: labels.client_addr ?? '' },
      summary: `standby ${name} has not been connected to ${target} for ${formatDuration(nowMs - lastSeen)} ` +
        `(last seen streaming at ${formatTime(lastSeen)} in pg_stat_replication)`,
      evidence: evidenceOf({
        series: connections.map(citeLast),
        facts: { application_name: labels.application_name ?? null, client_addr: labels.client_addr ?? null, last_seen_ms: lastSeen },
      }),
    });
  }
  return findings;
}

/** A walsender's labels without its pid, state and kind: the standby it serves, across reconnects. */
function walsenderKey(s: SeriesData): string {
  return [s.target, s.labels.application_name, s.labels.client_addr].join('\u0000');
}

function lastTs(s: SeriesData): number {
  return s.points[s.points.length - 1]!.tsMs;
}

function movedBy(s: SeriesData): number | null {
  const values = s.points.map((p) => p.value).filter((v): v is number => v !== null);
  return values.length < 2 ? null : values[values.length - 1]! - values[0]!;
}
