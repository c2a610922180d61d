/**
 * repack-failed: a PostgreSQL 19 REPACK failed for a reason other than a lock at its swap (that is
 * repack-lost-at-swap: lock_timeout, deadlock), and the whole run was rolled back, its copy, index
 * builds and catch-up lost (seed 000_ddfba2eacd9de59b.txt; pg-messages.md §9.5, §13.5):
 * - the change ceiling: for every row updated or deleted during the run REPACK keeps a combo
 *   command id, in an array that starts at 100 entries of 8 bytes and doubles (combocid.c); past
 *   104,857,600 entries the next doubling asks for 1,677,721,600 bytes, over MaxAllocSize, and the
 *   run fails with `invalid memory alloc request size 1677721600` (XX000) at the very end;
 * - `out of memory` (53200);
 * - statement_timeout or a cancel while it waited for ACCESS EXCLUSIVE at the swap: the same loss as
 *   a lock_timeout there, alerted here so one failure gives one alert.
 *
 * Its backend killed while it ran (`terminated by signal 9: Killed` with `Failed process was
 * running: REPACK ...`, on Linux the OOM killer, as the seed measured) is a server crash: every
 * connection went down with it, and server-crashed names the REPACK and the work lost in its one
 * alert. This rule recognises the crash as the end of the run and stays quiet, so the same kill
 * does not page twice as two unrelated causes.
 *
 * The failure is tied to its run by the session's pid and the run's start (repack-log-runs.ts):
 * the session's REPACK statement, its lock waits' STATEMENT lines, or its sampled slot. The finding
 * stays open for `activeForMs` after the failure: it is news, not a state.
 */
import { REPACK_CEILING_CHANGES } from '../domain/repack-ceiling.js';
import { isKind, logRepackRuns, type LogRun } from './repack-log-runs.js';
import { describeRun, failedRun, runStartMs, SLOT_INFO, type RepackRun } from './repack-runs.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeLast, type CitedSeries } from './sample-evidence.js';
import { formatCount, formatDuration } from './summary-format.js';

export const ID = 'repack-failed';

export interface RepackFailedOptions {
  /** How long the alert stays open after the failure. */
  activeForMs: number;
  /** How far before the failure the run's start is looked for. */
  lookbackMs: number;
}

export const DEFAULTS: RepackFailedOptions = { activeForMs: 30 * 60_000, lookbackMs: 24 * 3_600_000 };

/** 104,857,600 combo command ids doubled, 8 bytes each: the allocation that fails at the ceiling. */
export const CEILING_ALLOC_BYTES = REPACK_CEILING_CHANGES * 2 * 8;
const SWAP_LOCK = 'AccessExclusiveLock';
const ALLOC_REQUEST = /^invalid memory alloc request size (\d+)$/;
const OUT_OF_MEMORY = 'out of memory';
const CANCEL = 'canceling statement due to user request';
/** The decoding worker's lines come just before the session's error (pg-messages.md §13.5). */
const WORKER_LINES_BEFORE_MS = 10_000;
const WORKER_LINE = /"REPACK decoding worker"/;

type Cause = 'change_ceiling' | 'alloc_limit' | 'out_of_memory' | 'statement_timeout_at_swap' | 'cancel_at_swap';

interface Failure {
  cause: Cause;
  event: RuleEvent;
  pid: number;
  /** What the failure says, for the summary. */
  what: string;
  facts: Record<string, string | number | null>;
  /** The samples that tied the failure to a REPACK (its session's slot), when no log line did. */
  series: CitedSeries[];
}

export function repackFailed(options: RepackFailedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'error',
    description: 'A REPACK failed for a reason other than a lock at its swap or a server crash (the change ceiling, out of memory, a timeout or cancel at the swap): its work was thrown away.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      const recentMs = nowMs - options.activeForMs;
      for (const { name: target } of view.targets()) {
        const logged = logRepackRuns(view, target, nowMs - options.lookbackMs);
        for (const run of logged) {
          if (run.endEvent === null || run.endEvent.tsMs < recentMs) continue;
          const failure = failureOf(run.endEvent, run.pid, run);
          if (failure) findings.push(finding(view, failure, options));
        }
        const loggedPids = new Set(logged.map((r) => r.pid));
        for (const failure of sampledOnlyFailures(view, target, recentMs, loggedPids)) findings.push(finding(view, failure, options));
      }
      return findings;
    },
  };
}

/**
 * Failures of sessions whose REPACK only the samples show (no statement or lock wait logged): an
 * error of the slot's owner. Which lock it waited for is unknown, so only the failures that need
 * no wait (the ceiling, out of memory) are told.
 */
function sampledOnlyFailures(view: RuleView, target: string, sinceMs: number, loggedPids: ReadonlySet<number>): Failure[] {
  const slots = new Map<number, CitedSeries>();
  for (const s of view.series(SLOT_INFO, { sinceMs, target, labels: { owner: 'repack' } })) {
    const pid = Number(s.labels.owner_pid);
    if (Number.isInteger(pid) && pid > 0 && !loggedPids.has(pid)) slots.set(pid, citeLast(s));
  }
  const failures: Failure[] = [];
  for (const [pid, slot] of slots) {
    const failure = view.events('generic', { sinceMs, target, pid }).map((e) => failureOf(e, pid, null)).find((f) => f !== null);
    if (failure) failures.push({ ...failure, series: [slot] });
  }
  return failures;
}

/**
 * What ended the run, if it is one of this rule's causes; null for a success, a lock failure at the
 * swap (repack-lost-at-swap) or a crash (server-crashed).
 */
function failureOf(e: RuleEvent, pid: number, run: LogRun | null): Failure | null {
  if (isKind(e, 'statement_timeout')) return atSwap(run) ? swapFailure('statement_timeout_at_swap', e, pid, run, 'statement_timeout expired') : null;
  if (!isKind(e, 'generic') || e.level !== 'ERROR') return null;
  const alloc = ALLOC_REQUEST.exec(e.message);
  if (alloc) {
    const bytes = Number(alloc[1]);
    // Only a concurrent run keeps a combo command id per concurrent change (a sampled slot is one).
    return bytes === CEILING_ALLOC_BYTES && (run === null || run.concurrently)
      ? {
        cause: 'change_ceiling', event: e, pid, facts: { alloc_request_bytes: bytes, ceiling_changes: REPACK_CEILING_CHANGES }, series: [],
        what: `it hit the ${formatCount(REPACK_CEILING_CHANGES)}-change ceiling (${e.message}): more rows were updated or deleted during the run than REPACK can hold`,
      }
      : { cause: 'alloc_limit', event: e, pid, facts: { alloc_request_bytes: bytes }, series: [], what: `a single allocation over 1 GB failed (${e.message})` };
  }
  if (e.message === OUT_OF_MEMORY) return { cause: 'out_of_memory', event: e, pid, facts: {}, series: [], what: 'it ran out of memory' };
  if (e.message === CANCEL && atSwap(run)) return swapFailure('cancel_at_swap', e, pid, run, 'it was cancelled (pg_cancel_backend or the client)');
  return null;
}

/** The run's last logged lock wait is for the swap lock and was not acquired: it failed waiting for it. */
function atSwap(run: LogRun | null): run is LogRun {
  const wait = run?.lastWait;
  return !!run?.concurrently && wait?.details.phase === 'waiting' && wait.details.lock_mode === SWAP_LOCK;
}

function swapFailure(cause: Cause, e: RuleEvent, pid: number, run: LogRun, what: string): Failure {
  const holders = run.lastWait?.details.holder_pids ?? [];
  const behind = holders.length > 0 ? ` behind pid ${holders.join(', ')}` : '';
  return { cause, event: e, pid, what: `${what} at the final swap, waiting for ${SWAP_LOCK}${behind}`, facts: { blocking_pids: holders.join(', ') || null }, series: [] };
}

function finding(view: RuleView, f: Failure, o: RepackFailedOptions): Finding {
  const e = f.event;
  const { run, logged } = failedRun(view, e, f.pid, o.lookbackMs);
  const startMs = run && !(run.logOnly && run.xactStartMs === null) ? runStartMs(run) : null;
  const subject = describe(run, logged, f.pid);
  const summary = startMs === null
    ? `${subject} failed and was rolled back, all its work lost: ${f.what}`
    : `${subject} failed after ${formatDuration(e.tsMs - startMs)} and threw that work away: ${f.what}`;
  const workerLines = view.events('generic', { sinceMs: e.tsMs - WORKER_LINES_BEFORE_MS, target: e.target })
    .filter((w) => w.tsMs <= e.tsMs && WORKER_LINE.test(w.message));
  return {
    dedupKey: findingKey(ID, e.target, f.pid, e.id),
    target: e.target,
    labels: { database: run?.database ?? e.database ?? '', relation: run?.table?.table ?? '', pid: String(f.pid), cause: f.cause },
    summary,
    evidence: evidenceOf({
      eventIds: [...(run?.eventIds ?? []), ...workerLines.map((w) => w.id), e.id],
      series: [...f.series, ...(run?.series ?? [])],
      facts: {
        repack_pid: f.pid,
        cause: f.cause,
        failed_at_ms: e.tsMs,
        work_started_ms: startMs,
        work_lost_seconds: startMs === null ? null : Math.round((e.tsMs - startMs) / 1000),
        statement: logged?.statement ?? null,
        ...f.facts,
      },
    }),
  };
}

/** "REPACK (CONCURRENTLY) of shop.orders"; a plain REPACK when its statement says so. */
function describe(run: RepackRun | null, logged: LogRun | null, pid: number): string {
  const command = logged && !logged.concurrently ? 'REPACK' : 'REPACK (CONCURRENTLY)';
  return run ? describeRun(run, command) : `${command} by pid ${pid}`;
}
