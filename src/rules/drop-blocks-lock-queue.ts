/**
 * drop-blocks-lock-queue: a DROP TABLE, TRUNCATE, ALTER TABLE (or a rewrite's swap) waits for
 * ACCESS EXCLUSIVE behind a reader, and because PostgreSQL does not let later requests jump ahead
 * of a queued lock they conflict with, every query on the table that arrives after it waits too: a
 * table "nobody uses" is unavailable for as long as the oldest transaction on it stays open
 * (seed 003_e3cc2138bb41931f.txt). Weaker DDL locks queue the same way for the requests they
 * conflict with (domain/lock-modes.ts): a plain CREATE INDEX (SHARE) or REFRESH MATERIALIZED
 * VIEW CONCURRENTLY (EXCLUSIVE) waiting behind a long transaction stops every write, and a
 * CREATE TRIGGER or ADD FOREIGN KEY (SHARE ROW EXCLUSIVE) too, while reads still pass.
 *
 * Two sources, merged per waiting DDL session:
 * - log_lock_waits (on by default from 19): the DDL's own `still waiting for AccessExclusiveLock`
 *   (its STATEMENT says what it is, its DETAIL who holds the lock), and the queries queued behind
 *   it: later waiters on the same relation and the PIDs after the DDL's in any `Wait queue:`. The
 *   wait ends with the DDL's `acquired` line, its error (lock_timeout, deadlock, cancel), a server
 *   restart, or its absence from a complete lock-wait sample; with no news for `activeForMs` it is
 *   given up.
 * - the pg_lock_waits samples (lock-wait-samples.ts): a waiting DDL session and the sessions whose
 *   pg_blocking_pids name it; a sample taken before the log shows that wait's end is out of date.
 * From the log alone (`pgvigil analyze --rules`) the DDL, its holders and its end are exact; the
 * queries behind it are those that waited past deadlock_timeout, so their count is a lower bound.
 */
import { lockObjectName, resolvedLockName } from '../domain/index.js';
import { lockModesConflict } from '../domain/lock-modes.js';
import type { RuleView, RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { completeCollectionAtMs, lockWaitsSampled, sampledWaiters, type SampledWaiter } from './lock-wait-samples.js';
import { tableCommandOf } from './statements.js';
import { formatDuration, plural } from './summary-format.js';

export const ID = 'drop-blocks-lock-queue';

export interface DropBlocksLockQueueOptions {
  minBlockedQueries: number;
  /** Escalate to error at this many queued queries. */
  errorBlockedQueries: number;
  /** A logged wait with no end logged is forgotten after this long. */
  activeForMs: number;
}

export const DEFAULTS: DropBlocksLockQueueOptions = { minBlockedQueries: 1, errorBlockedQueries: 10, activeForMs: 30 * 60_000 };

const QUEUEING_COMMANDS = new Set(['DROP TABLE', 'TRUNCATE', 'ALTER TABLE', 'DROP INDEX', 'LOCK TABLE', 'REINDEX', 'REPACK', 'VACUUM FULL', 'CLUSTER',
  'CREATE INDEX', 'CREATE TRIGGER', 'REFRESH MATERIALIZED VIEW']);
/**
 * Modes that queue ordinary queries behind them: at least SHARE, which every write conflicts
 * with. SHARE UPDATE EXCLUSIVE (VACUUM, CREATE INDEX CONCURRENTLY) queues only maintenance.
 */
const QUEUEING_MODES = new Set(['ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock']);
const ENDED_PHASES = new Set(['acquired', 'failed', 'detected_deadlock']);
const ERROR_LEVELS = new Set(['ERROR', 'FATAL', 'PANIC']);

type Wait = RuleEvent<'lock_wait'>;

/** One DDL session waiting for a lock that queues queries, as the log and the samples show it. */
interface QueuedDdl {
  target: string;
  pid: number;
  /** The mode it waits for: AccessExclusiveLock, ShareLock... */
  mode: string;
  /** "DROP TABLE build_logs" */
  what: string;
  database: string | null;
  waitStartMs: number;
  holders: Set<number>;
  blocked: Set<number>;
  eventIds: number[];
  lock: string | null;
  /** `appdb.public.orders` when the daemon resolved the lock's OIDs, else null. */
  lockName: string | null;
  statement: string | null;
}

export function dropBlocksLockQueue(options: DropBlocksLockQueueOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A DROP / TRUNCATE / ALTER / CREATE INDEX waits for its lock and every later query on the table that conflicts with it queues behind it.',
    evaluate(view, nowMs) {
      const samples = sampledWaiters(view);
      const queued = new Map<string, QueuedDdl>();
      for (const ddl of [...fromLog(view, nowMs - options.activeForMs, samples), ...fromSamples(view, samples)]) {
        const key = findingKey(ID, ddl.target, ddl.pid);
        const known = queued.get(key);
        if (!known) queued.set(key, ddl);
        else merge(known, ddl);
      }
      const findings: Finding[] = [];
      for (const [key, ddl] of queued) {
        for (const s of samples) {
          if (s.target === ddl.target && s.pid !== ddl.pid && s.blockingPids.includes(ddl.pid) && !ddl.holders.has(s.pid)) ddl.blocked.add(s.pid);
        }
        if (ddl.blocked.size >= options.minBlockedQueries) findings.push(finding(key, ddl, nowMs, options, !lockWaitsSampled(view, ddl.target)));
      }
      return findings;
    },
  };
}

function isQueueingDdl(mode: string, statement: string | null): ReturnType<typeof tableCommandOf> {
  const command = tableCommandOf(statement);
  return QUEUEING_MODES.has(mode) && command && QUEUEING_COMMANDS.has(command.command) ? command : null;
}

function fromLog(view: RuleView, sinceMs: number, samples: SampledWaiter[]): QueuedDdl[] {
  const waits = view.events('lock_wait', { sinceMs });
  const out: QueuedDdl[] = [];
  for (const w of waits) {
    const command = isQueueingDdl(w.details.lock_mode, w.details.statement);
    if (w.details.phase !== 'waiting' || !command || w.details.lock_object.relation_oid === null) continue;
    if (out.some((d) => d.target === w.target && d.pid === w.details.waiting_pid) || ended(view, w, samples)) continue;
    const holders = new Set(w.details.holder_pids ?? []);
    const behind = queuedBehind(w, holders, waits);
    out.push({
      target: w.target, pid: w.details.waiting_pid, mode: w.details.lock_mode, what: commandOn(command.command, command.relation), database: w.database,
      waitStartMs: w.tsMs - (w.details.wait_ms ?? 0), holders, blocked: behind.pids, eventIds: [w.id, ...behind.eventIds],
      lock: lockObjectName(w.details.lock_object), lockName: resolvedLockName(w.details.lock_object), statement: w.details.statement,
    });
  }
  return out;
}

function fromSamples(view: RuleView, samples: SampledWaiter[]): QueuedDdl[] {
  return samples.flatMap((s) => {
    const command = isQueueingDdl(s.mode, s.query);
    // A sample stays fresh for a while after the wait it saw ended: the log knows better. A backend
    // waits for one lock at a time, so any end of its wait logged after the sample is this one's.
    if (!command || endLogged(view, s.target, s.pid, s.tsMs, () => true)) return [];
    return [{
      target: s.target, pid: s.pid, mode: s.mode, what: commandOn(command.command, command.relation ?? s.relname), database: s.datname || null,
      waitStartMs: s.tsMs - (s.waitSeconds ?? 0) * 1000, holders: new Set(s.blockingPids), blocked: new Set<number>(), eventIds: [],
      lock: s.relname ? `relation ${s.relname}` : null, lockName: null, statement: s.query,
    }];
  });
}

/** "DROP TABLE build_logs", but "CREATE INDEX on build_logs": the table is not what those create. */
function commandOn(command: string, relation: string | null): string {
  if (!relation) return command;
  return command.startsWith('CREATE ') ? `${command} on ${relation}` : `${command} ${relation}`;
}

/** The log knows the statement and lock best; the samples may have seen the wait start earlier or more holders. */
function merge(into: QueuedDdl, from: QueuedDdl): void {
  into.waitStartMs = Math.min(into.waitStartMs, from.waitStartMs);
  from.holders.forEach((p) => into.holders.add(p));
  from.blocked.forEach((p) => into.blocked.add(p));
}

function sameLock(a: Wait, b: Wait): boolean {
  const x = a.details.lock_object;
  const y = b.details.lock_object;
  return a.target === b.target && x.relation_oid === y.relation_oid && x.database_oid === y.database_oid;
}

function ended(view: RuleView, w: Wait, samples: SampledWaiter[]): boolean {
  const pid = w.details.waiting_pid;
  if (endLogged(view, w.target, pid, w.tsMs, (e) => e.id !== w.id && sameLock(e, w))) return true;
  // Cancelled without a logged error (a client disconnect): a complete collection taken after the
  // wait was logged no longer shows it. One taken before says nothing: the wait was not there yet.
  const collectedAtMs = w.database === null ? null : completeCollectionAtMs(view, w.target, w.database);
  return collectedAtMs !== null && collectedAtMs > w.tsMs && !samples.some((s) => s.target === w.target && s.pid === pid);
}

/** The log shows the session's lock wait over since sinceMs: the lock (isWait) acquired or given up, an error, a restart. */
function endLogged(view: RuleView, target: string, pid: number, sinceMs: number, isWait: (e: Wait) => boolean): boolean {
  const after = { sinceMs, target, pid };
  if (view.events('lock_wait', after).some((e) => ENDED_PHASES.has(e.details.phase) && isWait(e))) return true;
  const failed = (['lock_timeout', 'deadlock', 'statement_timeout', 'generic'] as const)
    .some((kind) => view.events(kind, after).some((e) => ERROR_LEVELS.has(e.level)));
  return failed || view.events('server_restart', { sinceMs, target }).length > 0;
}

/** Sessions queued behind the DDL: later waiters on the relation and PIDs after it in a wait queue. */
function queuedBehind(ddl: Wait, holders: Set<number>, waits: Wait[]): { pids: Set<number>; eventIds: number[] } {
  const pid = ddl.details.waiting_pid;
  const startMs = ddl.tsMs - (ddl.details.wait_ms ?? 0);
  const pids = new Set<number>();
  const eventIds: number[] = [];
  for (const w of waits) {
    // A session that waited before the DDL's own line was logged is in front of it, not behind.
    if (!sameLock(w, ddl) || (w.tsMs < ddl.tsMs && w.id !== ddl.id)) continue;
    const queue = w.details.queue_pids ?? [];
    const position = queue.indexOf(pid);
    const behind = position >= 0 ? queue.slice(position + 1) : [];
    const waiter = w.details.waiting_pid;
    const waitStartMs = w.tsMs - (w.details.wait_ms ?? 0);
    const conflicts = lockModesConflict(ddl.details.lock_mode, w.details.lock_mode);
    if (waiter !== pid && w.details.phase === 'waiting' && waitStartMs >= startMs && conflicts) behind.push(waiter);
    const added = behind.filter((p) => p !== pid && !holders.has(p) && !pids.has(p));
    added.forEach((p) => pids.add(p));
    if (added.length > 0 && w.id !== ddl.id) eventIds.push(w.id);
  }
  return { pids, eventIds };
}

/** `logOnly`: no lock-wait samples, so queries that waited less than deadlock_timeout are not counted. */
function finding(key: string, ddl: QueuedDdl, nowMs: number, o: DropBlocksLockQueueOptions, logOnly: boolean): Finding {
  const waitedMs = nowMs - ddl.waitStartMs;
  const holders = [...ddl.holders].sort((a, b) => a - b);
  const behind = holders.length > 0 ? ` behind pid ${holders.join(', ')}` : '';
  // Only a resolved name adds to `what`, which already names the table as the statement spells it.
  const on = ddl.lockName !== null ? ` on ${ddl.lock}` : '';
  return {
    dedupKey: key,
    target: ddl.target,
    labels: { database: ddl.database ?? '', pid: String(ddl.pid) },
    severity: ddl.blocked.size >= o.errorBlockedQueries ? 'error' : 'warning',
    summary: `${ddl.what} has waited ${formatDuration(waitedMs)} for ${ddl.mode}${on}${behind} and blocks ` +
      `${logOnly ? 'at least ' : ''}${plural(ddl.blocked.size, 'query', 'queries')} queued behind it` +
      (logOnly ? ' (the log shows only waits past deadlock_timeout; pgvigil run\'s pg_lock_waits samples would count them all)' : ''),
    evidence: evidenceOf({
      eventIds: ddl.eventIds,
      facts: {
        waiting_pid: ddl.pid,
        statement: ddl.statement,
        lock: ddl.lock,
        holder_pids: holders.join(', ') || null,
        blocked_pids: [...ddl.blocked].sort((a, b) => a - b).join(', '),
        waited_seconds: Math.round(waitedMs / 1000),
      },
    }),
  };
}
