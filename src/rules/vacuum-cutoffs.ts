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
