/**
 * vacuum-held-back: autovacuum keeps reporting dead rows it may not remove at one removable cutoff
 * that does not advance, in one or several databases. Works from the log alone (offline replay
 * included); with pg_xmin_horizon samples it also names the holder.
 *
 * Where: vacuum's horizon for a user table (ComputeXidHorizons) counts the snapshots of sessions
 * in the table's own database, but replication slots, standby feedback and logical decoding
 * workers in every database. So one cutoff stuck in several databases is a server-wide holder (a
 * slot, hot_standby_feedback, a REPACK (CONCURRENTLY)); stuck in one database only, it is probably
 * a session or a prepared transaction there (or a server-wide one whose other databases had no
 * autovacuum run to show it). The log never names the holder: the summary says so, and what would.
 *
 * Only system catalogs held (every report at the cutoff is of a pg_catalog table) is a logical
 * slot's catalog_xmin: it holds catalogs everywhere, never user tables.
 *
 * A cutoff reported again at a newer XID in one of those databases, for the same class of table
 * (catalog or user: a catalog-only hold leaves user tables' cutoffs free), means the holder let go.
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
import { formatCount, formatTime, plural } from './summary-format.js';
import { nextXidAtReport, xidPrecedes } from './vacuum-cutoffs.js';

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
  /** Reports with dead rows not removable at one cutoff needed to call it stuck. */
  minReports: number;
  /** Dead-but-not-removable tuples a report needs to count as held. */
  minDeadTuples: number;
  /** How far back reports are read. */
  lookbackMs: number;
}

export const DEFAULTS: VacuumHeldBackOptions = { minReports: 2, minDeadTuples: 1, lookbackMs: 6 * 3_600_000 };

type Report = RuleEvent<'autovacuum'>;

export function vacuumHeldBack(options: VacuumHeldBackOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Autovacuum reports dead rows it may not remove at a removable cutoff that does not advance; says whether the holder is server-wide or in one database.',
    evaluate(view, nowMs) {
      const byTarget = groupBy(view.events('autovacuum', { sinceMs: nowMs - options.lookbackMs }), (e) => e.target);
      const repackSlots = view.series(SLOT_INFO, { sinceMs: nowMs - options.lookbackMs, labels: { owner: 'repack' } });
      const findings: Finding[] = [];
      for (const [target, reports] of byTarget) {
        const loggedRuns = logRepackRuns(view, target, nowMs - options.lookbackMs).filter((run) => run.concurrently);
        for (const hold of stuckCutoffs(reports, options)) {
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

interface Hold {
  cutoffXid: number;
  /** The held reports at the cutoff, in time order. */
  reports: Report[];
  databases: string[];
  catalogsOnly: boolean;
}

const isCatalog = (e: Report): boolean => e.details.schema === 'pg_catalog';

function stuckCutoffs(reports: Report[], options: VacuumHeldBackOptions): Hold[] {
  const held = reports.filter((e) => e.details.removable_cutoff_xid !== null &&
    e.details.tuples_dead_not_removable !== null && e.details.tuples_dead_not_removable >= options.minDeadTuples);
  const byCutoff = groupBy(held, (e) => e.details.removable_cutoff_xid!);
  const holds: Hold[] = [];
  for (const [cutoffXid, atCutoff] of byCutoff) {
    if (atCutoff.length < options.minReports) continue;
    const databases = [...new Set(atCutoff.map((e) => e.details.database))].sort();
    const lastMs = atCutoff[atCutoff.length - 1]!.tsMs;
    const catalogsOnly = atCutoff.every(isCatalog);
    const released = reports.some((e) => e.tsMs > lastMs && databases.includes(e.details.database) && (!catalogsOnly || isCatalog(e)) &&
      e.details.removable_cutoff_xid !== null && xidPrecedes(cutoffXid, e.details.removable_cutoff_xid));
    if (!released) holds.push({ cutoffXid, reports: atCutoff, databases, catalogsOnly });
  }
  return holds;
}

function finding(view: RuleView, target: string, hold: Hold): Finding {
  const latestPerTable = new Map<string, Report>();
  const firstPerTable = new Map<string, Report>();
  for (const e of hold.reports) {
    const table = `${e.details.database}.${e.details.schema}.${e.details.table}`;
    latestPerTable.set(table, e);
    if (!firstPerTable.has(table)) firstPerTable.set(table, e);
  }
  const deadNow = sumDead(latestPerTable);
  const deadFirst = sumDead(firstPerTable);
  const latest = hold.reports[hold.reports.length - 1]!;
  const ageXids = latest.details.removable_cutoff_age_xids;
  const serverWide = hold.databases.length > 1;
  const scope = hold.catalogsOnly ? 'catalog' : serverWide ? 'cluster' : 'database';
  const holder = namedHolder(view, target, hold);

  const where = serverWide ? `in ${plural(hold.databases.length, 'database')} (${hold.databases.join(', ')})` : `in database ${hold.databases[0]}`;
  const age = ageXids === null ? '' : ` (${formatCount(ageXids)} XIDs old)`;
  const growth = deadNow > deadFirst ? `, up from ${formatCount(deadFirst)}` : '';
  const cause = holder
    ? `held by ${describeHolderAndAge(view, holder)}`
    : hold.catalogsOnly
      ? 'only system catalogs are held: probably a logical replication slot\'s catalog_xmin (a slot nobody consumes, or one far behind); the holder is not in the log'
      : serverWide
      ? 'a server-wide holder (a replication slot, a standby\'s hot_standby_feedback, or a REPACK (CONCURRENTLY)); the holder is not in the log'
      : `probably a session or prepared transaction in ${hold.databases[0]} (only this database reported it); the holder is not in the log`;
  const summary = `vacuum held back ${where} since ${formatTime(hold.reports[0]!.tsMs)}: removable cutoff stuck at XID ` +
    `${hold.cutoffXid}${age} in ${plural(latestPerTable.size, 'table')}, ${formatCount(deadNow)} dead rows not removable${growth}; ${cause}`;
  return {
    dedupKey: findingKey(ID, target, hold.cutoffXid),
    target,
    labels: { scope, database: serverWide ? '' : hold.databases[0]! },
    summary,
    evidence: evidenceOf({
      eventIds: hold.reports.map((e) => e.id),
      series: holder ? [{ name: HOLDER_AGE, labels: { ...holder.labels }, value: holder.value, tsMs: holder.tsMs }] : [],
      facts: {
        removable_cutoff_xid: hold.cutoffXid,
        removable_cutoff_age_xids: ageXids,
        next_xid_at_report: nextXidAtReport(latest.details),
        held_databases: hold.databases.join(', '),
        held_tables: [...latestPerTable.keys()].sort().join(', '),
        dead_tuples_not_removable: deadNow,
        first_dead_tuples_not_removable: deadFirst,
        autovacuum_pids: [...new Set(hold.reports.map((e) => e.pid).filter((pid) => pid !== null))].join(', '),
        holder_scope: scope,
        holder: holder ? describeHolderAndAge(view, holder) : null,
        ...(holder ? {} : { would_be_certain_with: HOLDER_SOURCE }),
      },
    }),
  };
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
  const fits = (l: Labels): boolean => l.scope === 'cluster' || (hold.catalogsOnly && l.scope === 'catalog') ||
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
