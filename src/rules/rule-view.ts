/**
 * RuleView: the read model rules see, fixed at one instant (`nowMs`): stored events with their
 * ids, stored series, and the configured targets. Nothing after `nowMs` is visible, so a rule
 * evaluated at a past instant sees what was known then.
 *
 * Two implementations: store-rule-view.ts (SQL over the SQLite store, for the daemon) and
 * memory-rule-view.ts (arrays, for table-driven tests with compact series notation).
 *
 * Glossary
 * - fresh: a series whose latest sample is at most `staleAfterMs` old; a slot or a session that
 *   was not sampled recently is gone, not "still there with its last value".
 * - cluster: targets sharing a `cluster` name in the config (a primary and its standbys). Targets
 *   without one form one group when that is unambiguous: at most one of them can be a primary (the
 *   others showed themselves as standbys), so one primary with its standbys needs no config;
 *   otherwise each is a group of its own, and a DDL on one primary is never blamed for a stall on
 *   a standby of another.
 */
import type { EventKind, Labels, LogEvent } from '../domain/index.js';

/** Samples older than this are not "latest": the thing they describe is gone or unobserved. */
export const DEFAULT_STALE_AFTER_MS = 60_000;

/** A stored event: the LogEvent envelope plus its row id (cited as evidence). */
export type RuleEvent<K extends EventKind = EventKind> = LogEvent<K> & { id: number };

export interface EventQuery {
  sinceMs: number;
  /** One target, several, or (absent) every target. */
  target?: string | readonly string[];
  /** Only events of this process. */
  pid?: number;
}

/** Events counted per bucket, newest bucket first; the buckets end at `untilMs` (exclusive, at most nowMs + 1). */
export interface EventCountQuery {
  target: string;
  untilMs: number;
  bucketMs: number;
  buckets: number;
}

export interface SeriesQuery {
  sinceMs: number;
  target?: string;
  /** Subset match: every given label must be equal. */
  labels?: Labels;
}

export interface SeriesPoint {
  tsMs: number;
  value: number | null;
}

export interface SeriesData {
  name: string;
  target: string;
  labels: Labels;
  /** Ascending by time, at least one point. */
  points: SeriesPoint[];
}

export interface LatestQuery {
  target?: string;
  labels?: Labels;
  /** Overrides the view's staleAfterMs. */
  maxAgeMs?: number;
  /**
   * Leaves out series whose latest value is below / at least this (a null value is neither: kept).
   * For a rule that wants the few of thousands of per-table series past a threshold: the store
   * answers it without reading the others' labels.
   */
  unlessValue?: ValueBounds;
}

export interface ValueBounds {
  below?: number;
  atLeast?: number;
}

/** The value is known to be outside: below `below` or at least `atLeast`. */
export function valueOutside(value: number | null, bounds: ValueBounds | undefined): boolean {
  if (value === null || bounds === undefined) return false;
  return (bounds.below !== undefined && value < bounds.below) || (bounds.atLeast !== undefined && value >= bounds.atLeast);
}

export interface LatestSample {
  name: string;
  target: string;
  labels: Labels;
  tsMs: number;
  value: number | null;
}

export interface TargetInfo {
  name: string;
  cluster: string | null;
}

export interface RuleView {
  readonly nowMs: number;
  targets(): readonly TargetInfo[];
  /** Events of one kind with sinceMs <= tsMs <= nowMs, ascending by time then id. */
  events<K extends EventKind>(kind: K, query: EventQuery): Array<RuleEvent<K>>;
  /** Events of these kinds per bucket: a rate over hours without reading the events themselves. */
  eventCounts(kinds: readonly EventKind[], query: EventCountQuery): number[];
  /** Series of one name with their points in [sinceMs, nowMs]; series without points are left out. */
  series(name: string, query: SeriesQuery): SeriesData[];
  /** The latest sample of every fresh series of one name. */
  latest(name: string, query?: LatestQuery): LatestSample[];
}

/** Builds the view of one instant; the engine asks for one per evaluation. */
export interface RuleViewSource {
  at(nowMs: number): RuleView;
}

export function labelsMatch(labels: Labels, wanted: Labels | undefined): boolean {
  if (!wanted) return true;
  for (const [key, value] of Object.entries(wanted)) if (labels[key] !== value) return false;
  return true;
}

/** eventCounts over events already read (the in-memory views): `events` of the right kinds and target. */
export function countInBuckets(events: ReadonlyArray<{ tsMs: number }>, q: EventCountQuery, nowMs: number): number[] {
  const untilMs = Math.min(q.untilMs, nowMs + 1);
  const counts = new Array<number>(q.buckets).fill(0);
  for (const e of events) {
    const back = Math.floor((untilMs - 1 - e.tsMs) / q.bucketMs);
    if (e.tsMs < untilMs && back < q.buckets) counts[back]!++;
  }
  return counts;
}

/** Index of the first item at or after `ms` in items ascending by time (binary search). */
export function firstAtOrAfter(items: ReadonlyArray<{ tsMs: number }>, ms: number): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (items[mid]!.tsMs < ms) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Names of the targets in the same cluster as `target` (itself included). */
export function clusterOf(view: RuleView, target: string): string[] {
  const all = view.targets();
  const cluster = all.find((t) => t.name === target)?.cluster ?? null;
  const members = all.filter((t) => t.cluster === cluster).map((t) => t.name);
  const group = members.includes(target) ? members : [...members, target];
  if (cluster !== null) return group;
  const possiblePrimaries = group.filter((name) => !isStandby(view, name));
  return possiblePrimaries.length <= 1 ? group : [target];
}

/** How far back a target's standby signs count: a standby stays one between incidents. */
const ROLE_MEMORY_MS = 24 * 3_600_000;

/** Sampled by the standby collector (it runs only in recovery) within maxAgeMs (default: fresh). */
export function sampledAsStandby(view: RuleView, target: string, maxAgeMs?: number): boolean {
  return view.latest('pg_standby_replay_standing_still_seconds', { target, ...(maxAgeMs !== undefined && { maxAgeMs }) }).length > 0;
}

/**
 * A target that showed itself as a standby: sampled by the standby collector, or logged a recovery
 * conflict (only a standby's startup process and queries do).
 */
function isStandby(view: RuleView, target: string): boolean {
  const sinceMs = view.nowMs - ROLE_MEMORY_MS;
  return sampledAsStandby(view, target, ROLE_MEMORY_MS) ||
    view.events('recovery_conflict_wait', { sinceMs, target }).length > 0 ||
    view.events('recovery_conflict', { sinceMs, target }).length > 0;
}
