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
        if (stuck) findings.push(finding(run, stuck, nowMs));
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

function finding(run: RepackRun, stuck: Stuck, nowMs: number): Finding {
  const tables = new Map<string, Report>();
  for (const e of stuck.reports) tables.set(`${e.details.database}.${e.details.schema}.${e.details.table}`, e);
  const databases = new Set(stuck.reports.map((e) => e.details.database));
  const deadTuples = [...tables.values()].reduce((sum, e) => sum + (e.details.tuples_dead_not_removable ?? 0), 0);
  const heldMs = nowMs - runStartMs(run);
  const summary = `${describeRun(run)} has held vacuum back in ${plural(databases.size, 'database')} ` +
    `(${plural(tables.size, 'table')}) for ${formatDuration(heldMs)}: removable cutoff stuck at XID ${stuck.cutoffXid}, ` +
    `${formatCount(deadTuples)} dead rows not removable`;
  return {
    dedupKey: findingKey(ID, run.target, runKey(run)),
    target: run.target,
    labels: { slot_name: run.slotName ?? '', database: run.database ?? '', ...(run.table && { table: run.table.table }) },
    summary,
    evidence: evidenceOf({
      eventIds: [...run.eventIds, ...stuck.reports.map((e) => e.id)],
      facts: {
        slot: run.slotName,
        repack_pid: run.sessionPid,
        slot_first_seen_ms: run.firstSeenMs,
        held_seconds: Math.round(heldMs / 1000),
        removable_cutoff_xid: stuck.cutoffXid,
        held_databases: [...databases].sort().join(', '),
        held_tables: [...tables.keys()].sort().join(', '),
        dead_tuples_not_removable: deadTuples,
      },
    }),
  };
}
