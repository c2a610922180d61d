/**
 * Bounds on what a collector exports that the rules rely on: a rule that reads a bounded list
 * must know where it was cut to tell "all of them" from "the first few".
 */

/** pg_lock_waits: waiting sessions reported one by one (the longest waits); all are counted. */
export const LOCK_WAIT_SESSIONS_REPORTED = 20;
