/**
 * vacuum-held-back: autovacuum keeps reporting dead rows it may not remove because its removable
 * cutoff has stayed behind for long, in one or several databases. Works from the log alone
 * (offline replay included); with pg_xmin_horizon samples it also names the holder.
 *
 * Held is judged as a DBA would, from each report: the cutoff is old in XIDs (next XID - cutoff)
 * AND has been behind for a while in time (since the first report whose next XID had reached it,
 * vacuum-cutoffs.ts), and the rows it keeps matter (dead rows not removable, in number and as a
 * share of the table's rows in the report). A busy normal server holds its horizon back all day
 * for seconds to minutes (a standby's reporting query with hot_standby_feedback, a pg_dump, a
 * CREATE INDEX CONCURRENTLY, a logical slot's consumer between confirmations): the defaults let
 * those be. A two-report "the cutoff did not move" test fired every few seconds on such a server.
 *
 * One cause, one alert: a hold is followed per database, across cutoffs (a holder that moves
 * slowly, a standby's feedback stepping from query to query, is one hold), from the newest report
 * back to the last one that showed a young cutoff. It ends when the newest report shows the cutoff
 * young again, or when no report has shown it for quietMs. Its key is the horizon held (user
 * tables', or catalogs' only), never its cutoff nor the databases seen so far.
 *
 * Where: vacuum's horizon for a user table (ComputeXidHorizons) counts the snapshots of sessions
 * in the table's own database, but replication slots, standby feedback and logical decoding
 * workers in every database. So several databases held at once is probably a server-wide holder
 * (a slot, hot_standby_feedback, a REPACK (CONCURRENTLY)); one database only, probably a session
 * or a prepared transaction there (or a server-wide one whose other databases had no autovacuum
 * run to show it). The log never names the holder: the summary says so, and what would.
 *
 * Only system catalogs held is a logical slot's catalog_xmin: it holds catalogs everywhere, never
 * user tables. Every report of the hold is of a catalog suggests it; the log proves it when a catalog's cutoff is older than one a user table of the
 * same database was already vacuumed at (horizons only move forward); such catalog reports are a
 * hold of their own, and do not end or extend the database's general hold.
 *
 * REPACK attribution (the cutoff equals the next XID at a REPACK's start, vacuum-cutoffs.ts) is
 * repack-holds-vacuum's job: a hold that began while samples showed a REPACK slot, or while the log
 * shows a REPACK (CONCURRENTLY) running, is left to it
 * (also after the run, until a report shows the hold over), so one incident raises one alert.
 */
import type { Labels } from '../domain/index.js';
import { firstAtOrAfter, type LatestSample, type RuleEvent, type RuleView } from './rule-view.js';
import { describeHolderAndAge, HOLDER_AGE } from './horizon-holder.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { logRepackRuns } from './repack-log-runs.js';
import { SLOT_INFO } from './repack-runs.js';
import { formatCount, formatDuration, formatTime, plural } from './summary-format.js';
import { cutoffBehindSince, nextXidAtReport, xidPrecedes } from './vacuum-cutoffs.js';

export const ID = 'vacuum-held-back';


/** What would have named the holder, in the alert's facts. */
const HOLDER_SOURCE = 'pgvigil run beside the server (pg_xmin_horizon samples)';

/**
 * How soon after a report a holder's sample still tells its age at the report (the collector
 * polls every 5 s by default): later, XIDs consumed since make a younger holder look old enough.
 */
const HOLDER_SAMPLE_MAX_GAP_MS = 30_000;

/** A REPACK slot's first sample can be a poll late: a hold seen this long before it is still the run's. */
const REPACK_START_UNCERTAINTY_MS = 30_000;

export interface VacuumHeldBackOptions {
  /** A report's cutoff this many XIDs behind the next XID (15+; 13/14 print no age) is old... */
  minAgeXids: number;
  /** ...and behind for this long: since the first report whose next XID had reached it. */
  minHeldMs: number;
  /** Dead rows not removable a table's report must show for the hold to matter... */
  minDeadTuples: number;
  /** ...and their share of the table's rows in that report (`N remain`), in percent. */
  minDeadPercent: number;
  /** A hold no report has shown for this long is over (autovacuum reports a held table every naptime). */
  quietMs: number;
  /** How far back reports are read. */
  lookbackMs: number;
}

export const DEFAULTS: VacuumHeldBackOptions = {
  minAgeXids: 1_000, minHeldMs: 30 * 60_000, minDeadTuples: 10_000, minDeadPercent: 10, quietMs: 30 * 60_000, lookbackMs: 6 * 3_600_000,
};

type Report = RuleEvent<'autovacuum'>;

/** A report with what it says about the horizon. */
interface Judged {
  report: Report;
  /** Since when its cutoff has been behind (a lower bound). */
  behindSinceMs: number;
  old: boolean;
}

interface Hold {
  scope: 'cluster' | 'database' | 'catalog';
  /** Per database, its reports since the hold began there, in time order. */
  runs: Map<string, Judged[]>;
  /** Every report of the hold, in time order. */
  reports: Report[];
  databases: string[];
}

export function vacuumHeldBack(options: VacuumHeldBackOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Autovacuum reports many dead rows it may not remove, its removable cutoff behind for long; says whether the holder is server-wide or in one database.',
    evaluate(view, nowMs) {
      const byTarget = groupBy(view.events('autovacuum', { sinceMs: nowMs - options.lookbackMs }), (e) => e.target);
      const repackSlots = view.series(SLOT_INFO, { sinceMs: nowMs - options.lookbackMs, labels: { owner: 'repack' } });
      const findings: Finding[] = [];
      for (const [target, reports] of byTarget) {
        const loggedRuns = logRepackRuns(view, target, nowMs - options.lookbackMs).filter((run) => run.concurrently);
        for (const hold of currentHolds(reports, options, nowMs)) {
          const beganMs = hold.reports[0]!.tsMs;
          const bySampledRepack = repackSlots.some((slot) => slot.target === target &&
            beganMs >= slot.points[0]!.tsMs - REPACK_START_UNCERTAINTY_MS && beganMs <= slot.points[slot.points.length - 1]!.tsMs);
          const byLoggedRepack = loggedRuns.some((run) => beganMs >= run.startMs && (run.endMs === null || beganMs <= run.endMs));
          if (!bySampledRepack && !byLoggedRepack) findings.push(finding(view, target, hold));
        }
      }
      return findings;
    },
  };
}

const isCatalog = (e: Report): boolean => e.details.schema === 'pg_catalog';

function currentHolds(reports: Report[], options: VacuumHeldBackOptions, nowMs: number): Hold[] {
  const withCutoff = reports.filter((e) => e.details.removable_cutoff_xid !== null);
  const behindSince = cutoffBehindSince(withCutoff);
  const judge = (report: Report): Judged => {
    const behindSinceMs = behindSince(report.details.removable_cutoff_xid!) ?? report.tsMs;
    const ageXids = report.details.removable_cutoff_age_xids;
    return { report, behindSinceMs, old: (ageXids === null || ageXids >= options.minAgeXids) && report.tsMs - behindSinceMs >= options.minHeldMs };
  };
  const general = new Map<string, Judged[]>();
  const catalogs = new Map<string, Judged[]>();
  for (const [database, inDatabase] of groupBy(withCutoff, (e) => e.details.database)) {
    const { userOrUnproven, catalogOnly } = splitCatalogOnly(inDatabase);
    general.set(database, userOrUnproven.map(judge));
    catalogs.set(database, catalogOnly.map(judge));
  }
  const generalRuns = heldRuns(general, options, nowMs);
  const catalogRuns = heldRuns(catalogs, options, nowMs);
  // No user table shows the hold, only catalogs (no report yet proves it either way): catalogs only.
  if ([...generalRuns.values()].flat().every((j) => isCatalog(j.report))) {
    for (const [database, run] of generalRuns) catalogRuns.set(database, [...(catalogRuns.get(database) ?? []), ...run].sort((a, b) => a.report.tsMs - b.report.tsMs));
    generalRuns.clear();
  }
  const holds: Hold[] = [];
  if (matters(generalRuns, options)) holds.push(holdOf(generalRuns.size > 1 ? 'cluster' : 'database', generalRuns));
  if (matters(catalogRuns, options)) holds.push(holdOf('catalog', catalogRuns));
  return holds;
}

/**
 * Per database, the reports of the hold still on there: where the newest report is old, its run;
 * then a database whose newest report came before its cutoff was old enough, but at or behind the
 * held cutoff and since the hold began, joins with its reports since then (a server-wide holder
 * shows in each database as autovacuum gets there).
 */
function heldRuns(byDatabase: Map<string, Judged[]>, options: VacuumHeldBackOptions, nowMs: number): Map<string, Judged[]> {
  const runs = new Map<string, Judged[]>();
  for (const [database, judged] of byDatabase) {
    const run = heldRun(judged, options, nowMs);
    if (run) runs.set(database, run);
  }
  if (runs.size === 0) return runs;
  const anchors = [...runs.values()];
  const sinceMs = Math.min(...anchors.flat().map((j) => j.behindSinceMs));
  const heldCutoff = anchors.map((run) => run[run.length - 1]!.report.details.removable_cutoff_xid!)
    .reduce((newest, xid) => (xidPrecedes(newest, xid) ? xid : newest));
  for (const [database, judged] of byDatabase) {
    const newest = judged[judged.length - 1];
    if (runs.has(database) || !newest || newest.report.tsMs < sinceMs || nowMs - newest.report.tsMs > options.quietMs) continue;
    const ageXids = newest.report.details.removable_cutoff_age_xids;
    if (xidPrecedes(heldCutoff, newest.report.details.removable_cutoff_xid!) || (ageXids !== null && ageXids < options.minAgeXids)) continue;
    runs.set(database, judged.filter((j) => j.report.tsMs >= sinceMs));
  }
  return runs;
}

/**
 * A database's catalog reports whose cutoff is older than one its user tables were vacuumed at
 * before (a catalog-only hold, proven), apart from the rest.
 */
function splitCatalogOnly(inDatabase: Report[]): { userOrUnproven: Report[]; catalogOnly: Report[] } {
  const userOrUnproven: Report[] = [];
  const catalogOnly: Report[] = [];
  let newestUserCutoff: number | null = null;
  for (const e of inDatabase) {
    const cutoff = e.details.removable_cutoff_xid!;
    if (!isCatalog(e)) {
      if (newestUserCutoff === null || xidPrecedes(newestUserCutoff, cutoff)) newestUserCutoff = cutoff;
      userOrUnproven.push(e);
    } else if (newestUserCutoff !== null && xidPrecedes(cutoff, newestUserCutoff)) catalogOnly.push(e);
    else userOrUnproven.push(e);
  }
  return { userOrUnproven, catalogOnly };
}

/**
 * The reports of a hold still on in one database, in time order: back from the newest report
 * while each shows an old cutoff, then the earlier ones made while the oldest of those cutoffs was
 * already behind (the hold's first reports, before it was old enough). None when the newest is
 * young, or older than quietMs.
 */
function heldRun(judged: Judged[], options: VacuumHeldBackOptions, nowMs: number): Judged[] | null {
  let start = judged.length;
  while (start > 0 && judged[start - 1]!.old) start--;
  const newest = judged[judged.length - 1];
  if (start === judged.length || !newest || nowMs - newest.report.tsMs > options.quietMs) return null;
  const sinceMs = Math.min(...judged.slice(start).map((j) => j.behindSinceMs));
  while (start > 0 && judged[start - 1]!.report.tsMs >= sinceMs) start--;
  return judged.slice(start);
}

/** A hold matters when some table's newest report in it keeps enough dead rows, in number and share. */
function matters(runs: Map<string, Judged[]>, options: VacuumHeldBackOptions): boolean {
  return [...latestPerTable([...runs.values()].flat().map((j) => j.report)).values()].some((e) => {
    const dead = e.details.tuples_dead_not_removable ?? 0;
    const rows = e.details.tuples_remain;
    return dead >= options.minDeadTuples && (rows === null || dead * 100 >= options.minDeadPercent * rows);
  });
}

function holdOf(scope: Hold['scope'], runs: Map<string, Judged[]>): Hold {
  const reports = [...runs.values()].flat().map((j) => j.report).sort((a, b) => a.tsMs - b.tsMs);
  return { scope, runs, reports, databases: [...runs.keys()].sort() };
}

function finding(view: RuleView, target: string, hold: Hold): Finding {
  const judged = [...hold.runs.values()].flat();
  const newest = judged.reduce((a, b) => (b.report.tsMs > a.report.tsMs ? b : a));
  const sinceMs = Math.min(...judged.map((j) => j.behindSinceMs));
  const heldMs = newest.report.tsMs - sinceMs;
  const perTable = latestPerTable(hold.reports);
  const firstPerTable = new Map<string, Report>();
  for (const e of hold.reports) if (!firstPerTable.has(tableOf(e))) firstPerTable.set(tableOf(e), e);
  const deadNow = sumDead(perTable);
  const deadFirst = sumDead(firstPerTable);
  const worst = [...perTable.values()].reduce((a, b) => ((b.details.tuples_dead_not_removable ?? 0) > (a.details.tuples_dead_not_removable ?? 0) ? b : a));
  const worstDead = worst.details.tuples_dead_not_removable ?? 0;
  const worstRows = worst.details.tuples_remain;
  const worstPct = worstRows ? Math.round((worstDead * 100) / worstRows) : null;
  const latest = newest.report;
  const cutoffXid = latest.details.removable_cutoff_xid!;
  const ageXids = latest.details.removable_cutoff_age_xids;
  const holder = namedHolder(view, target, hold);

  const where = hold.databases.length > 1 ? `in ${plural(hold.databases.length, 'database')} (${hold.databases.join(', ')})` : `in database ${hold.databases[0]}`;
  const age = ageXids === null ? '' : ` (${formatCount(ageXids)} XIDs old)`;
  const growth = deadNow > deadFirst ? `, up from ${formatCount(deadFirst)}` : '';
  const share = worstPct === null ? '' : ` (${worstPct}% of ${tableOf(worst)}'s rows)`;
  const cause = holder
    ? `held by ${describeHolderAndAge(view, holder)}`
    : hold.scope === 'catalog'
      ? 'only system catalogs are held: probably a logical replication slot\'s catalog_xmin (a slot nobody consumes, or one far behind); the holder is not in the log'
      : hold.scope === 'cluster'
      ? 'probably a server-wide holder (a replication slot, a standby\'s hot_standby_feedback, or a REPACK (CONCURRENTLY)); the holder is not in the log'
      : `probably a session or prepared transaction in ${hold.databases[0]} (only this database reported it); the holder is not in the log`;
  const summary = `vacuum held back ${where} for ${formatDuration(heldMs)} (since ${formatTime(sinceMs)}): removable cutoff at XID ` +
    `${cutoffXid}${age} in ${plural(perTable.size, 'table')}, ${formatCount(deadNow)} dead rows not removable${growth}${share}; ${cause}`;
  return {
    // One key per horizon (user tables', catalogs'): a hold first seen in one database and then in
    // more, or moving from cutoff to cutoff, stays one alert whose summary follows.
    dedupKey: findingKey(ID, target, hold.scope === 'catalog' ? 'catalogs' : 'tables'),
    target,
    labels: { scope: hold.scope, database: hold.scope === 'database' ? hold.databases[0]! : '' },
    summary,
    evidence: evidenceOf({
      // Where the hold began in each database, and each table's newest report: not every report of a long hold.
      eventIds: uniqueInTimeOrder([...[...hold.runs.values()].map((run) => run[0]!.report), ...perTable.values()]).map((e) => e.id),
      series: holder ? [{ name: HOLDER_AGE, labels: { ...holder.labels }, value: holder.value, tsMs: holder.tsMs }] : [],
      facts: {
        removable_cutoff_xid: cutoffXid,
        removable_cutoff_age_xids: ageXids,
        next_xid_at_report: nextXidAtReport(latest.details),
        held_seconds: Math.round(heldMs / 1000),
        held_databases: hold.databases.join(', '),
        held_tables: [...perTable.keys()].sort().join(', '),
        dead_tuples_not_removable: deadNow,
        first_dead_tuples_not_removable: deadFirst,
        most_held_table: tableOf(worst),
        most_held_table_dead_pct: worstPct,
        autovacuum_pids: [...new Set(hold.reports.map((e) => e.pid).filter((pid) => pid !== null))].join(', '),
        holder_scope: hold.scope,
        holder: holder ? describeHolderAndAge(view, holder) : null,
        ...(holder ? {} : { would_be_certain_with: HOLDER_SOURCE }),
      },
    }),
  };
}

const tableOf = (e: Report): string => `${e.details.database}.${e.details.schema}.${e.details.table}`;

function latestPerTable(reports: readonly Report[]): Map<string, Report> {
  const latest = new Map<string, Report>();
  for (const e of reports) latest.set(tableOf(e), e);
  return latest;
}

function uniqueInTimeOrder(reports: readonly Report[]): Report[] {
  return [...new Set(reports)].sort((a, b) => a.tsMs - b.tsMs);
}

function groupBy<K, T>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const group = groups.get(key(item));
    if (group) group.push(item);
    else groups.set(key(item), [item]);
  }
  return groups;
}

function sumDead(reports: Map<string, Report>): number {
  let sum = 0;
  for (const e of reports.values()) sum += e.details.tuples_dead_not_removable ?? 0;
  return sum;
}

/**
 * The holder named by its sample at the reports, not by its latest one: a standby's query that
 * ends, a session that commits, let go some time before autovacuum next reports the hold over
 * (up to autovacuum_naptime), and meanwhile the hold must keep its holder. Ages are compared at
 * one instant: a report's age is `next XID at the report - cutoff`, a sample's `next XID at the
 * sample - holder's xmin`, so a holder of the cutoff sampled at or after the report is at least as
 * old as the report says; sampled before it, XIDs consumed in between make it look younger.
 * So, from the newest report back, the first poll after a report (within
 * HOLDER_SAMPLE_MAX_GAP_MS) that sampled a holder fitting these databases (a server-wide one for
 * several; for one, a session or prepared transaction there too; a logical slot's catalog_xmin
 * only for catalogs) at least as old as the report: the oldest such holder of that poll. One poll,
 * so every age in it counts from the same next XID.
 */
function namedHolder(view: RuleView, target: string, hold: Hold): LatestSample | null {
  const fits = (l: Labels): boolean => l.scope === 'cluster' || (hold.scope === 'catalog' && l.scope === 'catalog') ||
    (hold.databases.length === 1 && l.scope === 'database' && l.datname === hold.databases[0]);
  const holders = view.series(HOLDER_AGE, { sinceMs: hold.reports[0]!.tsMs, target }).filter((s) => fits(s.labels));
  if (holders.length === 0) return null;
  for (let i = hold.reports.length - 1; i >= 0; i--) {
    const report = hold.reports[i]!;
    const ageXids = report.details.removable_cutoff_age_xids;
    const next = holders.map((s) => ({ s, point: s.points[firstAtOrAfter(s.points, report.tsMs)] }));
    const pollMs = Math.min(...next.map(({ point }) => point?.tsMs ?? Infinity));
    if (pollMs - report.tsMs > HOLDER_SAMPLE_MAX_GAP_MS) continue;
    const oldEnough = next.flatMap(({ s, point }) => point?.tsMs === pollMs && point.value !== null && (ageXids === null || point.value >= ageXids)
      ? [{ name: HOLDER_AGE, target, labels: s.labels, tsMs: pollMs, value: point.value }]
      : []);
    if (oldEnough.length > 0) return oldEnough.reduce((oldest, h) => (h.value > oldest.value ? h : oldest));
  }
  return null;
}
