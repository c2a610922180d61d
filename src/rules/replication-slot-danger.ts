/**
 * replication-slot-danger: a replication slot that endangers the server or has already failed its
 * consumer: inactive while it retains WAL (pg_wal grows until the disk is full, or until
 * max_slot_wal_keep_size invalidates it), or active with a consumer that confirms nothing while
 * WAL piles up; about to lose its WAL (safe_wal_size nearly used up at the rate WAL is written:
 * critical), `wal_status` unreserved (the WAL it needs goes at the next checkpoint) or lost,
 * invalidated (pg-messages.md §5.1: WAL removed, rows removed, wal_level, 18's idle timeout), or
 * an xmin old enough that vacuum cannot freeze past it in any database.
 *
 * A slot counts as idle only when its position stood still over the whole window: a consumer
 * that reads with pg_logical_slot_get_changes() on a schedule is inactive in nearly every sample
 * but moves the slot. A synced failover slot on a standby (PG 17+) is never active there until
 * promotion and mirrors the primary's slot: only its loss or invalidation is told (failover would
 * lose the subscriber), never to drop it, which would break failover.
 *
 * From pg_replication_slots (every 5 s) and, in a log alone, the server's `invalidating ... slot`
 * lines (slot_invalidated events). xmin-horizon-held names a slot holding the horizon from 5M XIDs
 * on; this rule speaks of a slot's xmin only when it nears the freeze ages (100M by default).
 */
import type { Severity } from '../domain/index.js';
import type { LatestSample, RuleEvent, RuleView, SeriesPoint } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, type CitedSeries } from './sample-evidence.js';
import { formatBytes, formatCount, formatDuration, formatTime } from './summary-format.js';

export const ID = 'replication-slot-danger';

const ACTIVE = 'pg_replication_slots_active';
const RETAINED = 'pg_replication_slots_retained_wal_bytes';
const WAL_STATUS = 'pg_replication_slots_wal_status';
const INVALIDATED = 'pg_replication_slots_invalidated';
const XMIN_AGE = 'pg_replication_slots_xmin_age_xids';
const INACTIVE_SINCE = 'pg_replication_slots_inactive_since_timestamp_seconds';
const INFO = 'pg_replication_slots_info';
const SAFE_WAL = 'pg_replication_slots_safe_wal_size_bytes';
const RESTART_LSN = 'pg_replication_slots_restart_lsn_bytes';
const CONFIRMED_FLUSH_LSN = 'pg_replication_slots_confirmed_flush_lsn_bytes';

export interface ReplicationSlotDangerOptions {
  retainedWarnBytes: number;
  retainedErrorBytes: number;
  /**
   * Every sample in this window must be inactive (a subscriber reconnecting is not a dead slot), or,
   * for an active slot, its consumer confirmed nothing in it.
   */
  minInactiveMs: number;
  /** How far back the growth of retained WAL is measured. */
  growthWindowMs: number;
  xminWarnAgeXids: number;
  /** How long an invalidation seen only in the log keeps the alert open. */
  invalidatedActiveForMs: number;
  /** safe_wal_size used up within this long at the rate WAL is written: critical. */
  walLossWithinMs: number;
}

export const DEFAULTS: ReplicationSlotDangerOptions = {
  retainedWarnBytes: 1024 ** 3, retainedErrorBytes: 16 * 1024 ** 3, minInactiveMs: 300_000, growthWindowMs: 600_000,
  xminWarnAgeXids: 100_000_000, invalidatedActiveForMs: 3_600_000, walLossWithinMs: 30 * 60_000,
};

interface Danger {
  kind: 'inactive_retaining' | 'stuck_consumer' | 'wal_loss' | 'wal_status' | 'old_xmin' | 'invalidated';
  severity: Severity;
  text: string;
  series: CitedSeries[];
  eventIds: number[];
}

const RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2, critical: 3 };

const INVALIDATION_CAUSES: Record<string, string> = {
  wal_removed: 'WAL it needed was removed (max_slot_wal_keep_size)',
  rows_removed: 'rows it needed were removed (on a standby: the primary vacuumed them)',
  wal_level_insufficient: 'wal_level on the primary is below logical',
  idle_timeout: 'it was idle longer than idle_replication_slot_timeout',
};

export function replicationSlotDanger(options: ReplicationSlotDangerOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A replication slot is inactive (or its consumer stuck) and retains WAL, is about to lose or has lost its WAL, was invalidated, or holds an old xmin.',
    evaluate(view, nowMs) {
      const bySlot = new Map<string, { target: string; slot: string; labels: Record<string, string>; dangers: Danger[] }>();
      const add = (target: string, slot: string, labels: Record<string, string>, danger: Danger | null) => {
        if (!danger) return;
        const key = `${target}\u0000${slot}`;
        const entry = bySlot.get(key) ?? { target, slot, labels, dangers: [] };
        entry.dangers.push(danger);
        bySlot.set(key, entry);
      };
      for (const s of view.latest(ACTIVE)) {
        const slot = s.labels.slot_name ?? '';
        // A synced copy mirrors the primary's slot, which is judged there.
        if (!isSyncedCopy(view, s)) {
          add(s.target, slot, s.labels, retaining(view, s, options));
          add(s.target, slot, s.labels, oldXmin(view, s, options));
        }
        add(s.target, slot, s.labels, walLoss(view, s, options));
        add(s.target, slot, s.labels, walStatus(view, s));
      }
      const invalidations = view.events('slot_invalidated', { sinceMs: nowMs - options.invalidatedActiveForMs }).filter((e) => e.details.phase === 'invalidated');
      for (const s of view.latest(INVALIDATED)) {
        if (s.value !== 1) continue;
        const slot = s.labels.slot_name ?? '';
        const logged = invalidations.filter((e) => e.target === s.target && e.details.slot === slot);
        add(s.target, slot, s.labels, invalidated(s.labels.invalidation_reason || null, logged, [citeSample(s)]));
      }
      for (const e of invalidations) {
        if (bySlot.get(`${e.target}\u0000${e.details.slot}`)?.dangers.some((d) => d.kind === 'invalidated')) continue;
        add(e.target, e.details.slot, { slot_name: e.details.slot }, invalidated(e.details.reason, [e], []));
      }
      return [...bySlot.values()].map(({ target, slot, labels, dangers }): Finding => {
        const worst = dangers.reduce((a, b) => (RANK[b.severity] > RANK[a.severity] ? b : a));
        return {
          dedupKey: findingKey(ID, target, slot),
          target,
          labels: { slot_name: slot, slot_type: labels.slot_type ?? '', owner: labels.owner ?? '' },
          severity: worst.severity,
          summary: `replication slot ${slot}${describeSlot(labels)}: ${dangers.map((d) => d.text).join('; ')}`,
          evidence: evidenceOf({
            eventIds: dangers.flatMap((d) => d.eventIds),
            series: dangers.flatMap((d) => d.series),
            facts: { slot_name: slot, slot_type: labels.slot_type ?? null, owner: labels.owner ?? null, dangers: dangers.map((d) => d.kind).join(', ') },
          }),
        };
      });
    },
  };
}

function describeSlot(labels: Record<string, string>): string {
  const parts = [labels.slot_type, labels.owner && labels.owner !== 'unknown' ? `owner ${labels.owner}` : ''].filter(Boolean);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

function slotSeries(view: RuleView, name: string, s: LatestSample, sinceMs: number) {
  return view.series(name, { sinceMs, target: s.target, labels: { slot_name: s.labels.slot_name ?? '' } })[0];
}

/** A slot synced from the primary onto this standby (PG 17+ sync_replication_slots). */
function isSyncedCopy(view: RuleView, active: LatestSample): boolean {
  return view.latest(INFO, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '', synced: 'true' } }).length > 0;
}

/**
 * Retaining at least retainedWarnBytes with nobody moving the slot for minInactiveMs: inactive all
 * along (or since inactive_since, PG 17+), or active with a consumer that confirms nothing.
 */
function retaining(view: RuleView, active: LatestSample, o: ReplicationSlotDangerOptions): Danger | null {
  const retained = view.latest(RETAINED, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0];
  if (!retained || retained.value === null || retained.value < o.retainedWarnBytes || active.value === null) return null;
  // Moved: consumed (by a client that polls, if inactive). Unknown: an active slot is given the benefit of the doubt.
  const moved = positionMoved(view, active, o.minInactiveMs);
  if (moved === true || (moved === null && active.value === 1)) return null;
  const growth = slotSeries(view, RETAINED, retained, view.nowMs - o.growthWindowMs);
  const first = growth?.points.find((p) => p.value !== null);
  const grew = first && first.tsMs < retained.tsMs ? retained.value - first.value! : null;
  const growthText = grew === null ? '' : ` (${grew >= 0 ? '+' : '-'}${formatBytes(Math.abs(grew))} in ${formatDuration(retained.tsMs - first!.tsMs)})`;
  const severity = retained.value >= o.retainedErrorBytes ? 'error' : 'warning';
  const retainedText = `retaining ${formatBytes(retained.value)} of WAL${growthText}`;
  if (active.value === 1) {
    const pid = view.latest('pg_replication_slots_active_pid', { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0]?.value;
    return {
      kind: 'stuck_consumer', severity, series: [citeSample(retained), citeSample(active)], eventIds: [],
      text: `active, but its consumer${pid ? ` (pid ${pid})` : ''} has confirmed nothing for ${formatDuration(o.minInactiveMs)} while ${retainedText}: ` +
        'pg_wal grows until it catches up; it is stuck or cannot keep up',
    };
  }
  if (!inactiveFor(view, active, o.minInactiveMs)) return null;
  const since = view.latest(INACTIVE_SINCE, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0]?.value ?? null;
  return {
    kind: 'inactive_retaining', severity, series: [citeSample(retained), citeSample(active)], eventIds: [],
    text: `inactive${since !== null ? ` for ${formatDuration(view.nowMs - since * 1000)}` : ''}, ${retainedText}: ` +
      'pg_wal grows until its consumer returns or the slot is dropped',
  };
}

/** Inactive for windowMs: since inactive_since (PG 17+), or in every sample of a window the samples cover. */
function inactiveFor(view: RuleView, active: LatestSample, windowMs: number): boolean {
  const since = view.latest(INACTIVE_SINCE, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0]?.value ?? null;
  if (since !== null) return view.nowMs - since * 1000 >= windowMs;
  const history = covering(view, ACTIVE, active, windowMs);
  return history !== null && history.every((p) => p.value === 0);
}

/**
 * Whether the slot's consumer moved it within windowMs: confirmed_flush_lsn for a logical slot
 * (its restart_lsn waits for the oldest open transaction, a long bulk load), restart_lsn for a
 * physical one. null when the samples do not cover the window.
 */
function positionMoved(view: RuleView, active: LatestSample, windowMs: number): boolean | null {
  const name = active.labels.slot_type === 'logical' ? CONFIRMED_FLUSH_LSN : RESTART_LSN;
  const points = covering(view, name, active, windowMs);
  if (points === null || points.some((p) => p.value === null)) return null;
  return points.some((p) => p.value !== points[0]!.value);
}

/**
 * The slot's points over the last windowMs, from the last one at or before the window's start:
 * null when the samples do not reach back that far (pgvigil started since, or the slot is new).
 */
function covering(view: RuleView, name: string, active: LatestSample, windowMs: number): SeriesPoint[] | null {
  const windowStartMs = view.nowMs - windowMs;
  const points = slotSeries(view, name, active, windowStartMs - windowMs)?.points ?? [];
  const start = points.findLastIndex((p) => p.tsMs <= windowStartMs);
  return start === -1 ? null : points.slice(start);
}

/**
 * About to lose its WAL: safe_wal_size (NULL without max_slot_wal_keep_size) used up, or used up
 * within walLossWithinMs at the rate WAL was written over the growth window.
 */
function walLoss(view: RuleView, active: LatestSample, o: ReplicationSlotDangerOptions): Danger | null {
  const safe = view.latest(SAFE_WAL, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0];
  if (!safe || safe.value === null) return null;
  const rate = walBytesPerSecond(view, active, o.growthWindowMs);
  const secondsLeft = safe.value <= 0 ? 0 : rate === null || rate <= 0 ? null : safe.value / rate;
  if (secondsLeft === null || secondsLeft * 1000 > o.walLossWithinMs) return null;
  const when = secondsLeft === 0 ? 'at the next checkpoint' : `in about ${formatDuration(secondsLeft * 1000)} at ${formatBytes(rate!)}/s of WAL`;
  return {
    kind: 'wal_loss', severity: 'critical', series: [citeSample(safe)], eventIds: [],
    text: `about to lose the WAL it needs: ${formatBytes(Math.max(0, safe.value))} left before max_slot_wal_keep_size, gone ${when}; ` +
      'then it is invalidated and its consumer must be re-created from a new copy',
  };
}

/** WAL written per second over the window: the server's WAL position is the slot's restart_lsn plus what it retains. */
function walBytesPerSecond(view: RuleView, active: LatestSample, windowMs: number): number | null {
  const restart = new Map((slotSeries(view, RESTART_LSN, active, view.nowMs - windowMs)?.points ?? []).map((p) => [p.tsMs, p.value]));
  const positions = (slotSeries(view, RETAINED, active, view.nowMs - windowMs)?.points ?? []).flatMap((p) => {
    const lsn = restart.get(p.tsMs);
    return p.value === null || lsn === undefined || lsn === null ? [] : [{ tsMs: p.tsMs, bytes: lsn + p.value }];
  });
  const first = positions[0];
  const last = positions[positions.length - 1];
  return first && last && last.tsMs > first.tsMs ? (last.bytes - first.bytes) / ((last.tsMs - first.tsMs) / 1000) : null;
}

function walStatus(view: RuleView, active: LatestSample): Danger | null {
  const status = view.latest(WAL_STATUS, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })
    .sort((a, b) => b.tsMs - a.tsMs)[0];
  if (status?.labels.wal_status === 'lost') {
    return { kind: 'wal_status', severity: 'error', text: 'wal_status lost: the WAL it needs is gone, its consumer can never catch up', series: [citeSample(status)], eventIds: [] };
  }
  if (status?.labels.wal_status === 'unreserved') {
    return {
      kind: 'wal_status', severity: 'warning', series: [citeSample(status)], eventIds: [],
      text: 'wal_status unreserved: it retains more than max_slot_wal_keep_size, the WAL it needs goes at the next checkpoint unless it catches up',
    };
  }
  return null;
}

function oldXmin(view: RuleView, active: LatestSample, o: ReplicationSlotDangerOptions): Danger | null {
  const xmin = view.latest(XMIN_AGE, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0];
  if (!xmin || xmin.value === null || xmin.value < o.xminWarnAgeXids) return null;
  return {
    kind: 'old_xmin', severity: 'warning', series: [citeSample(xmin)], eventIds: [],
    text: `its xmin is ${formatCount(xmin.value)} XIDs old: vacuum keeps every row deleted since and cannot freeze past it, in every database`,
  };
}

function invalidated(reason: string | null, logged: ReadonlyArray<RuleEvent<'slot_invalidated'>>, series: CitedSeries[]): Danger {
  const last = logged[logged.length - 1];
  const exceeded = last?.details.exceeded_bytes;
  const cause = reason ? INVALIDATION_CAUSES[reason] ?? reason : null;
  return {
    kind: 'invalidated',
    severity: 'error',
    text: `invalidated${last ? ` at ${formatTime(last.tsMs)}` : ''}${cause ? `: ${cause}` : ''}` +
      `${exceeded ? ` (restart_lsn past the limit by ${formatBytes(exceeded)})` : ''}; its consumer must be re-created from a new copy`,
    series,
    eventIds: logged.map((e) => e.id),
  };
}
