/**
 * What an autovacuum report says about the XID counter. From 15 the report prints `removable
 * cutoff: X, which was N XIDs old when operation ended`, where N is computed as
 * `(int32) (ReadNextTransactionId() - OldestXmin)` (vacuumlazy.c): so the next XID to be assigned
 * when the report was written was X + N, modulo 2^32. A holder whose snapshot was taken at that
 * next XID (REPACK's slot, a snapshot opened then) is the one whose xmin equals a later cutoff.
 * 13/14 print `oldest xmin` without its age: no next XID there.
 */
import type { AutovacuumDetails } from '../domain/index.js';

const XID_MODULUS = 2 ** 32;

/** The next XID when the report ended (cutoff + age, wrapping like TransactionId); null before 15. */
export function nextXidAtReport(details: Pick<AutovacuumDetails, 'removable_cutoff_xid' | 'removable_cutoff_age_xids'>): number | null {
  const cutoff = details.removable_cutoff_xid;
  const age = details.removable_cutoff_age_xids;
  if (cutoff === null || age === null) return null;
  return (((cutoff + age) % XID_MODULUS) + XID_MODULUS) % XID_MODULUS;
}

/** True when XID `a` is older than `b`, comparing modulo 2^32 as TransactionIdPrecedes does. */
export function xidPrecedes(a: number, b: number): boolean {
  const diff = (((b - a) % XID_MODULUS) + XID_MODULUS) % XID_MODULUS;
  return diff > 0 && diff < 2 ** 31;
}

/** A report's XIDs: when it ended, its removable cutoff and (15+) the next XID. */
export interface CutoffPoint {
  tsMs: number;
  details: Pick<AutovacuumDetails, 'removable_cutoff_xid' | 'removable_cutoff_age_xids'>;
}

/**
 * For a server's reports (any database, any table: the XID counter is the server's), a function
 * telling since when a cutoff has been behind: the end of the first report whose next XID (or,
 * before 15, whose own cutoff: the next XID is at least that) had reached it. The horizon has not
 * moved past the cutoff since, so this is a lower bound of how long vacuum has been held there,
 * in time: what a DBA weighs, where an age in XIDs means minutes on one server and days on
 * another. XIDs are unwrapped around the newest report's, so a counter that wraps keeps its order.
 */
export function cutoffBehindSince(reports: readonly CutoffPoint[]): (cutoffXid: number) => number | null {
  const points = reports.flatMap((r) => {
    const reached = nextXidAtReport(r.details) ?? r.details.removable_cutoff_xid;
    return reached === null ? [] : [{ tsMs: r.tsMs, reached }];
  }).sort((a, b) => a.tsMs - b.tsMs);
  const newest = points[points.length - 1]?.reached ?? 0;
  const unwrap = (xid: number): number => newest - ((newest - xid) | 0);
  const reachedByThen: number[] = [];
  for (const p of points) reachedByThen.push(Math.max(reachedByThen[reachedByThen.length - 1] ?? -Infinity, unwrap(p.reached)));
  return (cutoffXid) => {
    const target = unwrap(cutoffXid);
    let lo = 0;
    let hi = points.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (reachedByThen[mid]! >= target) hi = mid;
      else lo = mid + 1;
    }
    return points[lo]?.tsMs ?? null;
  };
}
