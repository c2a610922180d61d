/**
 * Small shared pieces of the rules that read sampled series: citing a sample as evidence, how
 * long the sample of a slow collector (every minute: pg_database, pg_settings, pg_repack_leftovers)
 * stays current, since the view's default freshness (60 s) would lose it between two polls, and
 * which targets are standbys.
 */
import type { Evidence } from '../domain/index.js';
import type { LatestSample, RuleView, SeriesData } from './rule-view.js';

/** Three polls of a once-a-minute collector. */
export const SLOW_COLLECTOR_MAX_AGE_MS = 3 * 60_000;

export type CitedSeries = Evidence['series'][number];

export function citeSample(s: Pick<LatestSample, 'name' | 'labels' | 'value' | 'tsMs'>): CitedSeries {
  return { name: s.name, labels: { ...s.labels }, value: s.value, tsMs: s.tsMs };
}

/** The newest point of a series, cited. */
export function citeLast(s: SeriesData): CitedSeries {
  const last = s.points[s.points.length - 1]!;
  return { name: s.name, labels: { ...s.labels }, value: last.value, tsMs: last.tsMs };
}

/**
 * Targets sampled as standbys (the pg_standby collector runs only in recovery). A standby shows its
 * primary's catalogs: the same database ages and pg_repack objects, with none of the primary's
 * locks, so rules about those judge the primary only.
 */
export function standbyTargets(view: RuleView): Set<string> {
  return new Set(view.latest('pg_standby_replay_lsn_bytes').map((s) => s.target));
}
