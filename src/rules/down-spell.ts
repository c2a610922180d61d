/**
 * The current spell of a 0/1 "up" series (pg_up, pg_stat_wal_receiver_up): when it was last up,
 * and since when it has been down after that. Shared by the rules that speak of a thing that was
 * up and is no longer (server-unreachable, standby-disconnected), so they agree on the moment.
 */
import type { SeriesPoint } from './rule-view.js';

export interface DownSpell {
  /** The last sample that was up; undefined when none in the points. */
  lastUpMs: number | undefined;
  /** The first down sample after it (after the start when never up); undefined while up. */
  downSinceMs: number | undefined;
}

export function downSpell(points: readonly SeriesPoint[]): DownSpell {
  const lastUpMs = points.filter((p) => p.value === 1).pop()?.tsMs;
  const downSinceMs = points.find((p) => p.value === 0 && (lastUpMs === undefined || p.tsMs > lastUpMs))?.tsMs;
  return { lastUpMs, downSinceMs };
}
