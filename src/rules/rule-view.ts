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
 *   without one form one group together, so a single-primary-single-standby setup needs no config.
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

/** Names of the targets in the same cluster as `target` (itself included). */
export function clusterOf(view: RuleView, target: string): string[] {
  const all = view.targets();
  const cluster = all.find((t) => t.name === target)?.cluster ?? null;
  const members = all.filter((t) => t.cluster === cluster).map((t) => t.name);
  return members.includes(target) ? members : [...members, target];
}
