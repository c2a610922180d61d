/**
 * PostgreSQL 19 REPACK (CONCURRENTLY)'s change ceiling (seed 000_ddfba2eacd9de59b.txt): it keeps
 * ~50 bytes per row updated or deleted during the run and fails once more than 104,857,600 of them
 * pile up (its next allocation would exceed MaxAllocSize). The collectors compute a table's budget
 * from it and the rules judge runs by it, so it lives here rather than in either.
 */
export const REPACK_CEILING_CHANGES = 104_857_600;

/** How long a REPACK can run at this rate; the seed's hours_until_ceiling is this / 3600. */
export function secondsUntilCeiling(changesPerSec: number): number | null {
  return changesPerSec > 0 ? REPACK_CEILING_CHANGES / changesPerSec : null;
}
