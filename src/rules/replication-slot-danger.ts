/**
 * replication-slot-danger: a replication slot that endangers the server or has already failed its
 * consumer: inactive while it retains WAL (pg_wal grows until the disk is full, or until
 * max_slot_wal_keep_size invalidates it), `wal_status` unreserved (the WAL it needs goes at the
 * next checkpoint) or lost, invalidated (pg-messages.md §5.1: WAL removed, rows removed, wal_level,
 * 18's idle timeout), or an xmin old enough that vacuum cannot freeze past it in any database.
 *
 * From pg_replication_slots (every 5 s) and, in a log alone, the server's `invalidating ... slot`
 * lines (slot_invalidated events). xmin-horizon-held names a slot holding the horizon from 5M XIDs
 * on; this rule speaks of a slot's xmin only when it nears the freeze ages (100M by default).
 */
import type { Severity } from '../domain/index.js';
import type { LatestSample, RuleEvent, RuleView } from './rule-view.js';
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

export interface ReplicationSlotDangerOptions {
  retainedWarnBytes: number;
  retainedErrorBytes: number;
  /** Every sample in this window must be inactive (a subscriber reconnecting is not a dead slot). */
  minInactiveMs: number;
  /** How far back the growth of retained WAL is measured. */
  growthWindowMs: number;
  xminWarnAgeXids: number;
  /** How long an invalidation seen only in the log keeps the alert open. */
  invalidatedActiveForMs: number;
}

export const DEFAULTS: ReplicationSlotDangerOptions = {
  retainedWarnBytes: 1024 ** 3, retainedErrorBytes: 16 * 1024 ** 3, minInactiveMs: 300_000, growthWindowMs: 600_000,
  xminWarnAgeXids: 100_000_000, invalidatedActiveForMs: 3_600_000,
};

interface Danger {
  kind: 'inactive_retaining' | 'wal_status' | 'old_xmin' | 'invalidated';
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
    description: 'A replication slot is inactive and retains WAL, is about to lose or has lost its WAL, was invalidated, or holds an old xmin.',
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
        add(s.target, slot, s.labels, inactiveRetaining(view, s, options));
        add(s.target, slot, s.labels, walStatus(view, s));
        add(s.target, slot, s.labels, oldXmin(view, s, options));
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

function inactiveRetaining(view: RuleView, active: LatestSample, o: ReplicationSlotDangerOptions): Danger | null {
  if (active.value !== 0) return null;
  const retained = view.latest(RETAINED, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0];
  if (!retained || retained.value === null || retained.value < o.retainedWarnBytes) return null;
  const since = view.latest(INACTIVE_SINCE, { target: active.target, labels: { slot_name: active.labels.slot_name ?? '' } })[0]?.value ?? null;
  const history = slotSeries(view, ACTIVE, active, view.nowMs - o.minInactiveMs)?.points ?? [];
  const inactiveLongEnough = since !== null
    ? view.nowMs - since * 1000 >= o.minInactiveMs
    : history.length >= 2 && history.every((p) => p.value === 0);
  if (!inactiveLongEnough) return null;
  const growth = slotSeries(view, RETAINED, retained, view.nowMs - o.growthWindowMs);
  const first = growth?.points.find((p) => p.value !== null);
  const grew = first && first.tsMs < retained.tsMs ? retained.value - first.value! : null;
  const growthText = grew === null ? '' : ` (${grew >= 0 ? '+' : '-'}${formatBytes(Math.abs(grew))} in ${formatDuration(retained.tsMs - first!.tsMs)})`;
  return {
    kind: 'inactive_retaining',
    severity: retained.value >= o.retainedErrorBytes ? 'error' : 'warning',
    text: `inactive${since !== null ? ` for ${formatDuration(view.nowMs - since * 1000)}` : ''}, retaining ${formatBytes(retained.value)} of WAL${growthText}: ` +
      'pg_wal grows until its consumer returns or the slot is dropped',
    series: [citeSample(retained), citeSample(active)],
    eventIds: [],
  };
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
