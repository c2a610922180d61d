/**
 * repack-holds-vacuum: a REPACK (CONCURRENTLY) is running and autovacuum elsewhere (other tables,
 * other databases) keeps reporting dead rows it may not remove at one removable cutoff that does
 * not advance. REPACK's temporary logical slot belongs to the whole server, so it holds the
 * horizon in every database (seed 000_ddfba2eacd9de59b.txt; measured on 19rc1 with the slot's
 * xmin NULL, pg-messages.md §13.2).
 *
 * Evidence: the slot, how long it has existed, the autovacuum reports (event ids), the stuck cutoff.
 * A cutoff already reported before the slot appeared, or older than the next XID a report gave
 * before the run started, is not blamed on REPACK: something else held it first (xmin-horizon-held
 * names that). Without a report from before the run, the finding says "probably".
 */
import type { LatestSample, RuleEvent, RuleView } from './rule-view.js';
import { HOLDER_AGE, openForMs } from './horizon-holder.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { describeRun, runKey, runningRepacks, runStartMs, sameTable, type RepackRun } from './repack-runs.js';
import { nextXidAtReport, xidPrecedes } from './vacuum-cutoffs.js';
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
/** Holder owners that are the REPACK itself (its session, its decoding worker, its slot): horizon-holder.ts. */
const REPACK_OWNERS = new Set(['repack', 'repack_concurrently', 'repack_decoding_worker']);

function startedBefore(view: RuleView, holder: LatestSample, startMs: number): boolean {
  const openMs = openForMs(view, holder);
  return openMs !== null && view.nowMs - openMs < startMs;
}

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
        const hold = holdOf(view, run, stuck, before, all);
        if (hold) findings.push(finding(run, stuck, nowMs, hold));
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

/** How sure pgvigil is that the run holds the stuck cutoff. */
interface Hold {
  /**
   * A report from before the run bounds the cutoff (below), and the run's start is known: from
   * its slot's samples, or from a logged statement.
   */
  certain: boolean;
  /** Next XID of the last report before the run's start, when one was logged (15+). */
  nextXidBefore: number | null;
}

/**
 * Whether the run can be what holds the stuck cutoff. With the horizon's holders sampled, a
 * session or prepared transaction other than REPACK's that began before the run holds an older
 * xmin, and binds first. Otherwise: REPACK's slot holds the horizon at the next
 * XID when the run started; the next XID of a report before the start (cutoff + age) bounds that
 * from below: a stuck cutoff older than that was held first by something older (a pg_dump, a
 * forgotten session), which xmin-horizon-held names; stopping REPACK would not free it. Without
 * such a report the run only probably holds it. A run only the log shows may have ended without a
 * line: a later report past the cutoff says the hold is over.
 */
function holdOf(view: RuleView, run: RepackRun, stuck: Stuck, before: Report[], reports: Report[]): Hold | null {
  if (!run.logOnly) {
    const holders = view.latest(HOLDER_AGE, { target: run.target });
    // The sessions and prepared transactions that held the horizon are sampled with their start:
    // one that began before the run holds an older xmin than REPACK's slot, and binds first.
    if (holders.some((h) => !REPACK_OWNERS.has(h.labels.owner ?? '') && startedBefore(view, h, runStartMs(run)))) return null;
    if (holders.length > 0) return { certain: true, nextXidBefore: null };
  } else {
    const lastStuckMs = Math.max(...stuck.reports.map((e) => e.tsMs));
    const movedOn = reports.some((e) => e.tsMs > lastStuckMs && e.details.removable_cutoff_xid !== null
      && xidPrecedes(stuck.cutoffXid, e.details.removable_cutoff_xid));
    if (movedOn) return null;
  }
  const nextXidBefore = before.map((e) => nextXidAtReport(e.details)).filter((x): x is number => x !== null).pop() ?? null;
  if (nextXidBefore !== null && xidPrecedes(stuck.cutoffXid, nextXidBefore)) return null;
  const startKnown = !run.logOnly || run.xactStartMs !== null;
  return { certain: startKnown && nextXidBefore !== null, nextXidBefore };
}

function finding(run: RepackRun, stuck: Stuck, nowMs: number, hold: Hold): Finding {
  const tables = new Map<string, Report>();
  for (const e of stuck.reports) tables.set(`${e.details.database}.${e.details.schema}.${e.details.table}`, e);
  const databases = new Set(stuck.reports.map((e) => e.details.database));
  const deadTuples = [...tables.values()].reduce((sum, e) => sum + (e.details.tuples_dead_not_removable ?? 0), 0);
  const heldMs = nowMs - runStartMs(run);
  const held = hold.certain ? 'has held' : 'has probably held';
  const cutoff = hold.certain && run.logOnly ? `XID ${stuck.cutoffXid}, the next XID when it started` : `XID ${stuck.cutoffXid}`;
  const summary = `${describeRun(run)} ${held} vacuum back in ${plural(databases.size, 'database')} ` +
    `(${plural(tables.size, 'table')}) for ${formatDuration(heldMs)}: removable cutoff stuck at ${cutoff}, ` +
    `${formatCount(deadTuples)} dead rows not removable${run.logOnly ? logOnlyTail(run, hold) : sampledTail(hold)}`;
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
        certain: hold.certain,
        next_xid_before_start: hold.nextXidBefore,
      },
    }),
  };
}

/** What a finding from samples cannot know without a report from before the run. */
function sampledTail(hold: Hold): string {
  return hold.certain ? '' : ' (no autovacuum report from before it started shows whether an older snapshot held the horizon first)';
}

/** What a log-only finding cannot know, and what would tell it. */
function logOnlyTail(run: RepackRun, hold: Hold): string {
  const sure = hold.certain ? '' : run.xactStartMs === null
    ? ' (set log_statement = ddl to log when REPACK starts, or run `pgvigil run` beside the server to see its slot)'
    : ' (no autovacuum report before it started gives the next XID then; `pgvigil run` beside the server sees its slot)';
  return `; REPACK still running at the end of the log${sure}`;
}
