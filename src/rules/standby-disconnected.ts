/**
 * standby-disconnected: a standby that no longer streams WAL from its primary. Seen from the
 * standby (pg_standby collector): its walreceiver is gone, or it runs but has received nothing
 * (not even the sender's keepalives) for longer than wal_receiver_timeout's default; the standby
 * then replays only what it already has, or what restore_command brings from the archive. Seen
 * from the primary (pg_stat_replication): a walsender that was streaming to a standby is gone.
 *
 * A standby that never streamed while pgvigil watched it (archive recovery only) is not
 * "disconnected": the walreceiver must have been up within `lookbackMs`. The walreceiver's own log
 * lines (`could not connect to the primary server`, `replication terminated by primary server`)
 * are not classified yet: samples only.
 */
import { clusterOf, type LatestSample, type RuleView, type SeriesData } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeLast, citeSample } from './sample-evidence.js';
import { formatBytes, formatDuration, formatTime } from './summary-format.js';

export const ID = 'standby-disconnected';

const RECEIVER_UP = 'pg_stat_wal_receiver_up';
const RECEIVER_INFO = 'pg_stat_wal_receiver_info';
const LAST_RECEIPT = 'pg_stat_wal_receiver_last_msg_receipt_timestamp_seconds';
const RECEIVE_LSN = 'pg_standby_receive_lsn_bytes';
const WALSENDER = 'pg_stat_replication_info';

export interface StandbyDisconnectedOptions {
  /** Down (or gone from pg_stat_replication) in every sample for this long: a reconnect is not an outage. */
  sustainMs: number;
  /** Connected but nothing received for this long (wal_receiver_timeout's default). */
  silentSeconds: number;
  /** How far back a walreceiver or walsender must have been seen to count as disconnected now. */
  lookbackMs: number;
}

export const DEFAULTS: StandbyDisconnectedOptions = { sustainMs: 30_000, silentSeconds: 60, lookbackMs: 3_600_000 };

export function standbyDisconnected(options: StandbyDisconnectedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A standby stopped receiving WAL: its walreceiver is down or silent, or the primary lost its walsender.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const up of view.latest(RECEIVER_UP)) {
        const f = up.value === 0 ? receiverDown(view, up, nowMs, options) : receiverSilent(view, up.target, nowMs, options);
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
  const lastUp = history.filter((p) => p.value === 1).pop();
  const downSince = history.find((p) => lastUp && p.tsMs > lastUp.tsMs)?.tsMs;
  if (!lastUp || downSince === undefined || nowMs - downSince < o.sustainMs) return null;
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
    summary: `standby ${target} has no walreceiver for ${formatDuration(nowMs - downSince)} (it streamed${from} until ${formatTime(lastUp.tsMs)})${still}`,
    evidence: evidenceOf({
      series: [citeSample(up), ...(sender ? [citeLast(sender)] : []), ...(received ? [citeLast(received)] : [])],
      facts: { last_streaming_ms: lastUp.tsMs, sender_host: sender?.labels.sender_host ?? null, wal_arrived_bytes: arrived },
    }),
  };
}

function receiverSilent(view: RuleView, target: string, nowMs: number, o: StandbyDisconnectedOptions): Finding | null {
  const receipt = view.latest(LAST_RECEIPT, { target })[0];
  if (!receipt || receipt.value === null) return null;
  const silentMs = receipt.tsMs - receipt.value * 1000;
  if (silentMs < o.silentSeconds * 1000) return null;
  const sender = view.latest(RECEIVER_INFO, { target })[0];
  return {
    dedupKey: findingKey(ID, target, 'walreceiver'),
    target,
    labels: { side: 'standby' },
    summary: `standby ${target}'s walreceiver${sender ? ` (from ${sender.labels.sender_host || '?'}:${sender.labels.sender_port || '?'})` : ''} ` +
      `has received nothing, not even a keepalive, for ${formatDuration(silentMs)}: the connection is dead or the primary is stuck`,
    evidence: evidenceOf({ series: [citeSample(receipt)], facts: { silent_seconds: Math.round(silentMs / 1000) } }),
  };
}

/** On a primary: a walsender that was streaming within the lookback and has not been seen for sustainMs. */
function walsendersGone(view: RuleView, nowMs: number, o: StandbyDisconnectedOptions): Finding[] {
  const byStandby = new Map<string, SeriesData[]>();
  for (const s of view.series(WALSENDER, { sinceMs: nowMs - o.lookbackMs })) {
    const key = [s.target, s.labels.application_name, s.labels.client_addr].join('\u0000');
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

function lastTs(s: SeriesData): number {
  return s.points[s.points.length - 1]!.tsMs;
}

function movedBy(s: SeriesData): number | null {
  const values = s.points.map((p) => p.value).filter((v): v is number => v !== null);
  return values.length < 2 ? null : values[values.length - 1]! - values[0]!;
}
