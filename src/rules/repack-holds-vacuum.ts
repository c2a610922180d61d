/**
 * repack-holds-vacuum: a REPACK (CONCURRENTLY) is running and autovacuum elsewhere (other tables,
 * other databases) keeps reporting dead rows it may not remove at one removable cutoff that does
 * not advance. REPACK's temporary logical slot belongs to the whole server, so it holds the
 * horizon in every database (seed 000_ddfba2eacd9de59b.txt; measured on 19rc1 with the slot's
 * xmin NULL, pg-messages.md §13.2).
 *
 * Evidence: the slot, how long it has existed, the autovacuum reports (event ids), the stuck cutoff.
 * A cutoff already reported before the slot appeared is not blamed on REPACK: something else held
 * it first (xmin-horizon-held names that).
 */
import type { RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { describeRun, runKey, runningRepacks, runStartMs, sameTable, type RepackRun } from './repack-runs.js';
import { nextXidAtReport } from './vacuum-cutoffs.js';
import { formatCount, formatDuration, plural } from './summary-format.js';

export const ID = 'repack-holds-vacuum';

export interface RepackHoldsVacuumOptions {
  /** Reports at one cutoff needed to call it stuck. */
  minReports: number;
  /** Dead-but-not-removable tuples a report needs to count as held. */
  minDeadTuples: number;
  /** How far back a slot's history and the reports are read. */
  lookbackMs: number;
}

export const DEFAULTS: RepackHoldsVacuumOptions = { minReports: 2, minDeadTuples: 1, lookbackMs: 6 * 3_600_000 };

type Report = RuleEvent<'autovacuum'>;

const START_UNCERTAINTY_MS = 30_000;

export function repackHoldsVacuum(options: RepackHoldsVacuumOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A REPACK (CONCURRENTLY) slot holds back vacuum in every database: autovacuum reports a removable cutoff that does not advance.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const run of runningRepacks(view, options.lookbackMs)) {
        const startMs = runStartMs(run);
        const all = view.events('autovacuum', { sinceMs: nowMs - options.lookbackMs, target: run.target });
        const during = all.filter((e) => e.tsMs >= startMs && !isRepackedTable(run, e) && isHeld(e, options));
        // Without the true start, the slot's first sample can be a poll interval late: reports
        // just before it may already be REPACK's doing, so they do not prove an earlier holder.
        const before = all.filter((e) => e.tsMs < startMs - (run.xactStartMs === null ? START_UNCERTAINTY_MS : 0));
        const stuck = stuckCutoff(during, before, options.minReports);
        if (!stuck) continue;
        if (!run.logOnly) {
          findings.push(finding(run, stuck, nowMs, null));
          continue;
        }
        const fromLog = logOnlyHold(run, stuck, all);
        if (fromLog) findings.push(finding(run, stuck, nowMs, fromLog));
      }
      return findings;
    },
  };
}

function isRepackedTable(run: RepackRun, e: Report): boolean {
  return run.table !== null && sameTable(run.table, e.details.database, e.details.schema, e.details.table);
}

function isHeld(e: Report, options: RepackHoldsVacuumOptions): boolean {
  const dead = e.details.tuples_dead_not_removable;
  return e.details.removable_cutoff_xid !== null && dead !== null && dead >= options.minDeadTuples;
}

interface Stuck {
  cutoffXid: number;
  reports: Report[];
}

/** The cutoff most reports share, if enough do and none of the reports before the run had it. */
function stuckCutoff(during: Report[], before: Report[], minReports: number): Stuck | null {
  const byCutoff = new Map<number, Report[]>();
  for (const e of during) {
    const cutoff = e.details.removable_cutoff_xid!;
    byCutoff.set(cutoff, [...(byCutoff.get(cutoff) ?? []), e]);
  }
  const heldBefore = new Set(before.map((e) => e.details.removable_cutoff_xid));
  let best: Stuck | null = null;
  for (const [cutoffXid, reports] of byCutoff) {
    if (reports.length < minReports || heldBefore.has(cutoffXid)) continue;
    if (!best || reports.length > best.reports.length) best = { cutoffXid, reports };
  }
  return best;
}

/** How sure the log alone is that a run it shows holds the stuck cutoff. */
interface LogHold {
  /** The cutoff lies between the next XIDs reported just before and after the run's logged start. */
  certain: boolean;
  /** Next XID of the last report before the run's start, when one was logged. */
  nextXidBefore: number | null;
}

/**
 * A run only the log shows: its slot is unseen, so the cutoff must fit its start. REPACK's slot
 * holds the horizon at the next XID when the run started; the next XID of a report before the
 * start (cutoff + age) bounds that from below: a stuck cutoff under it was held by something older.
 * A later report past the cutoff means the hold is over (the run ended; a successful REPACK logs nothing).
 */
function logOnlyHold(run: RepackRun, stuck: Stuck, reports: Report[]): LogHold | null {
  const startMs = runStartMs(run);
  const lastStuckMs = Math.max(...stuck.reports.map((e) => e.tsMs));
  const movedOn = reports.some((e) => e.tsMs > lastStuckMs && (e.details.removable_cutoff_xid ?? 0) > stuck.cutoffXid);
  if (movedOn) return null;
  const nextXidBefore = reports.filter((e) => e.tsMs < startMs).map((e) => nextXidAtReport(e.details)).filter((x): x is number => x !== null).pop() ?? null;
  if (nextXidBefore !== null && stuck.cutoffXid < nextXidBefore) return null;
  return { certain: run.xactStartMs !== null && nextXidBefore !== null, nextXidBefore };
}

function finding(run: RepackRun, stuck: Stuck, nowMs: number, fromLog: LogHold | null): Finding {
  const tables = new Map<string, Report>();
  for (const e of stuck.reports) tables.set(`${e.details.database}.${e.details.schema}.${e.details.table}`, e);
  const databases = new Set(stuck.reports.map((e) => e.details.database));
  const deadTuples = [...tables.values()].reduce((sum, e) => sum + (e.details.tuples_dead_not_removable ?? 0), 0);
  const heldMs = nowMs - runStartMs(run);
  const held = fromLog !== null && !fromLog.certain ? 'has probably held' : 'has held';
  const cutoff = fromLog?.certain ? `XID ${stuck.cutoffXid}, the next XID when it started` : `XID ${stuck.cutoffXid}`;
  const summary = `${describeRun(run)} ${held} vacuum back in ${plural(databases.size, 'database')} ` +
    `(${plural(tables.size, 'table')}) for ${formatDuration(heldMs)}: removable cutoff stuck at ${cutoff}, ` +
    `${formatCount(deadTuples)} dead rows not removable${fromLog ? logOnlyTail(run, fromLog) : ''}`;
  return {
    dedupKey: findingKey(ID, run.target, runKey(run)),
    target: run.target,
    labels: { slot_name: run.slotName ?? '', database: run.database ?? '', ...(run.table && { table: run.table.table }) },
    summary,
    evidence: evidenceOf({
      eventIds: [...run.eventIds, ...stuck.reports.map((e) => e.id)],
      series: run.series,
      facts: {
        slot: run.slotName,
        repack_pid: run.sessionPid,
        slot_first_seen_ms: run.firstSeenMs,
        held_seconds: Math.round(heldMs / 1000),
        removable_cutoff_xid: stuck.cutoffXid,
        held_databases: [...databases].sort().join(', '),
        held_tables: [...tables.keys()].sort().join(', '),
        dead_tuples_not_removable: deadTuples,
        seen_in: run.logOnly ? 'log' : 'samples',
        ...(fromLog && { certain: fromLog.certain, next_xid_before_start: fromLog.nextXidBefore }),
      },
    }),
  };
}

/** What a log-only finding cannot know, and what would tell it. */
function logOnlyTail(run: RepackRun, hold: LogHold): string {
  const sure = hold.certain ? '' : run.xactStartMs === null
    ? ' (set log_statement = ddl to log when REPACK starts, or run `pgvigil run` beside the server to see its slot)'
    : ' (no autovacuum report before it started gives the next XID then; `pgvigil run` beside the server sees its slot)';
  return `; REPACK still running at the end of the log${sure}`;
}
