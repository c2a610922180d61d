/**
 * The server's own wraparound warnings (varsup.c GetNewTransactionId / SetTransactionIdLimit,
 * multixact.c GetNewMultiXactId / SetMultiXactIdLimit), 13-19:
 * - WARNING `database "<name>" must be vacuumed within <n> transactions`, or `database with OID
 *   <oid> ...` when the name cannot be looked up; from 40M XIDs before the wrap limit, on every
 *   XID assigned (and when the limit is recomputed).
 * - WARNING `database "<name>" must be vacuumed before <n> more MultiXactId is used` (plural
 *   `MultiXactIds are used`); from 10M multixacts before their wrap limit (PG 14+: earlier when the
 *   members space runs short).
 * - WARNING `database with OID <oid> must be vacuumed before <n> more multixact member is used`
 *   (plural `members are used`): the members space (2^32 members, shared by every multixact) runs
 *   short, from 20 SLRU segments before its stop limit (multixact.c GetNewMultiXactId, 13-18);
 *   always named by OID.
 * - ERROR `database is not accepting commands that assign new transaction IDs to avoid wraparound
 *   data loss in database "<name>"` (PG 16+; 13-15: `... not accepting commands to avoid
 *   wraparound data loss ...`), and `... that generate new MultiXactIds ...`: the server refuses.
 * The HINT changed across versions (database shutdown / XID assignment failures) and is not read.
 */
import type { WraparoundWarningDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { toInt } from './fields.js';

const DATABASE = String.raw`(?:"(.*)"|with OID (\d+))`;
const XID_WARNING = new RegExp(`^database ${DATABASE} must be vacuumed within (\\d+) transactions$`);
const MULTIXACT_WARNING = new RegExp(`^database ${DATABASE} must be vacuumed before (\\d+) more MultiXactIds? (?:is|are) used$`);
const MEMBERS_WARNING = new RegExp(`^database ${DATABASE} must be vacuumed before (\\d+) more multixact members? (?:is|are) used$`);
// PG 16+: "that assign new transaction IDs"; 13-15 say only "commands".
const REFUSING = new RegExp(
  `^database is not accepting commands (?:that (assign new transaction IDs|generate new MultiXactIds) )?to avoid wraparound data loss in database ${DATABASE}$`,
);

/** `message` starts with `database `. */
export function classifyWraparound(message: string): Classification | null {
  let g = XID_WARNING.exec(message);
  if (g) return of('xid', g[1], g[2], toInt(g[3]), false);
  g = MULTIXACT_WARNING.exec(message);
  if (g) return of('multixact', g[1], g[2], toInt(g[3]), false);
  g = MEMBERS_WARNING.exec(message);
  if (g) return of('multixact_member', g[1], g[2], toInt(g[3]), false);
  g = REFUSING.exec(message);
  if (g) return of(g[1] === 'generate new MultiXactIds' ? 'multixact' : 'xid', g[2], g[3], null, true);
  return null;
}

function of(
  counter: WraparoundWarningDetails['counter'], name: string | undefined, oid: string | undefined, remaining: number | null, refusing: boolean,
): Classification {
  const datname = name ?? null;
  const details: WraparoundWarningDetails = { counter, datname, database_oid: toInt(oid), remaining, refusing };
  return { kind: 'wraparound_warning', details, ...(datname !== null && { database: datname }) };
}
