/**
 * wraparound-approaching: a database's oldest unfrozen transaction ID (age(datfrozenxid)) or
 * multixact (mxid_age(datminmxid)) is old enough that vacuum is not keeping up with freezing, or
 * the server itself warns `database "x" must be vacuumed within N transactions` (pg_database
 * collector; wraparound_warning events, so `pgvigil analyze` finds it in a log alone).
 *
 * Thresholds, from PostgreSQL's own limits: XIDs and multixacts wrap at 2^31 (2,147,483,648) of
 * age; autovacuum starts an anti-wraparound vacuum at autovacuum_freeze_max_age (200M) /
 * autovacuum_multixact_freeze_max_age (400M), so an age of twice that means those vacuums are not
 * finishing (warning); vacuum_failsafe_age / vacuum_multixact_failsafe_age (1.6G) is where vacuum
 * gives up throttling and index cleanup to save the database (critical); the server's WARNING comes
 * 40M XIDs / 10M multixacts before the limit, its refusal a few million before it (critical).
 *
 * Those are the defaults' numbers. A server that raised autovacuum_freeze_max_age (or its multixact
 * twin; pg_settings samples) lets ages grow that far as a matter of course, before any
 * anti-wraparound vacuum even starts: judged against its own settings, the warning comes at twice
 * its freeze_max_age but at most a quarter of the way from there to the wrap, the error half way
 * between the warning and critical, critical no sooner than its own failsafe (1.05 x
 * freeze_max_age, as vacuum computes it). A lowered setting leaves the defaults' numbers alone.
 *
 * Freezing cannot pass the xmin horizon: when a holder (pg_xmin_horizon_holder_age_xids) is older
 * than vacuum_freeze_min_age (50M), it is what keeps datfrozenxid from advancing, and is named. A
 * logical slot's catalog_xmin counts too (the classic forgotten slot): datfrozenxid is the oldest
 * relfrozenxid of every table, system catalogs included, and the catalogs cannot be frozen past it.
 */
import type { Severity, WraparoundWarningDetails } from '../domain/index.js';
import type { LatestSample, RuleEvent, RuleView } from './rule-view.js';
import { describeHolderAndAge, HOLDER_AGE } from './horizon-holder.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS, standbyTargets, type CitedSeries } from './sample-evidence.js';
import { formatCount, formatDuration } from './summary-format.js';

export const ID = 'wraparound-approaching';

const XID_AGE = 'pg_database_datfrozenxid_age_xids';
const MXID_AGE = 'pg_database_datminmxid_age_mxids';
const WRAP_LIMIT = 2 ** 31;

export interface WraparoundApproachingOptions {
  warnAgeXids: number;
  errorAgeXids: number;
  criticalAgeXids: number;
  warnAgeMxids: number;
  errorAgeMxids: number;
  criticalAgeMxids: number;
  /** A horizon holder older than this (vacuum_freeze_min_age's default) is named as what stops freezing. */
  holderMinAgeXids: number;
  /** How long the server's own warning keeps the alert open after it was last logged. */
  eventActiveForMs: number;
}

export const DEFAULTS: WraparoundApproachingOptions = {
  warnAgeXids: 400_000_000, errorAgeXids: 1_000_000_000, criticalAgeXids: 1_600_000_000,
  warnAgeMxids: 800_000_000, errorAgeMxids: 1_200_000_000, criticalAgeMxids: 1_600_000_000,
  holderMinAgeXids: 50_000_000, eventActiveForMs: 3_600_000,
};

/** What runs out: XIDs, multixact IDs, or the members space every multixact shares (log only). */
type Counter = WraparoundWarningDetails['counter'];

interface Database {
  target: string;
  /** The name, or `OID n` when the server could only name it so. */
  name: string;
  counter: Counter;
  age: LatestSample | null;
  warnings: Array<RuleEvent<'wraparound_warning'>>;
}

const UNIT: Record<Counter, { ids: string; age: string; freezeMaxAge: string; defaultFreezeMaxAge: number }> = {
  xid: { ids: 'XIDs', age: 'age(datfrozenxid)', freezeMaxAge: 'autovacuum_freeze_max_age', defaultFreezeMaxAge: 200_000_000 },
  multixact: { ids: 'multixacts', age: 'mxid_age(datminmxid)', freezeMaxAge: 'autovacuum_multixact_freeze_max_age', defaultFreezeMaxAge: 400_000_000 },
  // No age is sampled for the members space: only the server's warning tells.
  multixact_member: { ids: 'multixact members', age: '', freezeMaxAge: 'autovacuum_multixact_freeze_max_age', defaultFreezeMaxAge: 400_000_000 },
};

/** vacuum's failsafe is never sooner than this multiple of the freeze_max_age (vacuum.c, PG 14+). */
const FAILSAFE_FREEZE_MAX_AGE_MULTIPLE = 1.05;

type Levels = [warn: number, error: number, critical: number];

/** The thresholds for a server whose freeze_max_age is `freezeMaxAge`: the defaults', raised when it was. */
export function levelsFor(counter: Counter, defaults: Levels, freezeMaxAge: number | null): Levels {
  if (freezeMaxAge === null || freezeMaxAge <= UNIT[counter].defaultFreezeMaxAge) return defaults;
  const [warnDefault, errorDefault, criticalDefault] = defaults;
  const warn = Math.max(warnDefault, Math.min(2 * freezeMaxAge, freezeMaxAge + (WRAP_LIMIT - freezeMaxAge) / 4));
  const critical = Math.max(criticalDefault, FAILSAFE_FREEZE_MAX_AGE_MULTIPLE * freezeMaxAge, warn);
  const error = errorDefault > warn && errorDefault < critical ? errorDefault : (warn + critical) / 2;
  return [warn, error, critical].map(Math.round) as Levels;
}

export function wraparoundApproaching(options: WraparoundApproachingOptions = DEFAULTS): Rule {
  const limits: Record<Counter, Levels> = {
    xid: [options.warnAgeXids, options.errorAgeXids, options.criticalAgeXids],
    multixact: [options.warnAgeMxids, options.errorAgeMxids, options.criticalAgeMxids],
    multixact_member: [options.warnAgeMxids, options.errorAgeMxids, options.criticalAgeMxids],
  };
  const severityOf = (view: RuleView, db: Database, age: number): Severity | null => {
    const [warn, error, critical] = levelsFor(db.counter, limits[db.counter], freezeMaxAge(view, db));
    return age >= critical ? 'critical' : age >= error ? 'error' : age >= warn ? 'warning' : null;
  };
  return {
    id: ID,
    severity: 'warning',
    description: 'A database nears transaction ID or multixact wraparound: freezing is not keeping up, or the server already warns; names what holds the horizon.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const db of databases(view, nowMs - options.eventActiveForMs)) {
        const age = db.age?.value ?? null;
        const ageSeverity = age === null ? null : severityOf(view, db, age);
        if (ageSeverity === null && db.warnings.length === 0) continue;
        const holder = db.counter === 'xid' ? horizonHolder(view, db, options.holderMinAgeXids) : null;
        const series: CitedSeries[] = [...(db.age && ageSeverity ? [citeSample(db.age)] : []), ...(holder ? [citeSample(holder)] : [])];
        const newest = db.warnings[db.warnings.length - 1];
        findings.push({
          dedupKey: findingKey(ID, db.target, db.name, db.counter),
          target: db.target,
          labels: { datname: db.name, counter: db.counter },
          severity: newest ? 'critical' : ageSeverity!,
          summary: [describeAge(db, ageSeverity ? age : null, freezeMaxAge(view, db)), describeWarnings(db.warnings, nowMs), holder ? `the xmin horizon is held by ${describeHolderAndAge(view, holder)}` : '']
            .filter(Boolean).join('; '),
          evidence: evidenceOf({
            eventIds: [...(newest ? [newest.id] : []), ...(db.warnings[0] ? [db.warnings[0].id] : [])],
            series,
            facts: {
              datname: db.name, counter: db.counter, age: age, server_warnings: db.warnings.length,
              remaining: newest?.details.remaining ?? null, refusing: newest?.details.refusing ?? false,
              holder_kind: holder?.labels.kind ?? null, holder_age_xids: holder?.value ?? null,
            },
          }),
        });
      }
      return findings;
    },
  };
}

function databases(view: RuleView, eventsSinceMs: number): Database[] {
  const byKey = new Map<string, Database>();
  const entry = (target: string, name: string, counter: Counter): Database => {
    const key = `${target}\u0000${name}\u0000${counter}`;
    const db = byKey.get(key) ?? { target, name, counter, age: null, warnings: [] };
    byKey.set(key, db);
    return db;
  };
  // A standby reports its primary's ages; only a VACUUM on the primary moves them.
  const standbys = standbyTargets(view);
  for (const [counter, series] of [['xid', XID_AGE], ['multixact', MXID_AGE]] as const) {
    for (const s of view.latest(series, { maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })) {
      if (!standbys.has(s.target)) entry(s.target, s.labels.datname ?? '', counter).age = s;
    }
  }
  for (const e of view.events('wraparound_warning', { sinceMs: eventsSinceMs })) {
    const d = e.details;
    entry(e.target, d.datname ?? `OID ${d.database_oid ?? '?'}`, d.counter).warnings.push(e);
  }
  return [...byKey.values()];
}

/** The server's freeze_max_age for this counter, from its pg_settings sample; null when not sampled. */
function freezeMaxAge(view: RuleView, db: Database): number | null {
  return view.latest(`pg_settings_${UNIT[db.counter].freezeMaxAge}`, { target: db.target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0]?.value ?? null;
}

function describeAge(db: Database, age: number | null, serverFreezeMaxAge: number | null): string {
  if (age === null) return '';
  const unit = UNIT[db.counter];
  const setting = serverFreezeMaxAge === null
    ? `${unit.freezeMaxAge} defaults to ${formatCount(unit.defaultFreezeMaxAge)}`
    : `${unit.freezeMaxAge} is ${formatCount(serverFreezeMaxAge)}`;
  return `database ${db.name} is ${formatCount(age)} ${unit.ids} old (${unit.age}; ${setting}), ${Math.round((age / WRAP_LIMIT) * 100)}% of the way to wraparound: ` +
    `about ${formatCount(WRAP_LIMIT - age)} left before the server refuses new ${unit.ids}`;
}

function describeWarnings(warnings: ReadonlyArray<RuleEvent<'wraparound_warning'>>, nowMs: number): string {
  const newest = warnings[warnings.length - 1];
  if (!newest) return '';
  const d = newest.details;
  const who = d.datname !== null ? `database "${d.datname}"` : `database with OID ${d.database_oid ?? '?'}`;
  const times = warnings.length === 1 ? '' : ` (${formatCount(warnings.length)} times, last ${formatDuration(nowMs - newest.tsMs)} ago)`;
  if (d.refusing) {
    return `the server refuses commands that assign new ${d.counter === 'xid' ? 'transaction IDs' : 'MultiXactIds'} ` +
      `to avoid wraparound data loss in ${who}${times}`;
  }
  if (d.counter === 'multixact_member') {
    // Few, large multixacts (many sessions locking the same rows) fill the members space long before the IDs run out.
    return `the server warns ${who} must be vacuumed before ${formatCount(d.remaining ?? 0)} more multixact members are used: ` +
      `the space every multixact's members share runs out before the multixact IDs do${times}`;
  }
  const what = d.counter === 'xid' ? 'transactions' : 'more multixacts';
  return `the server warns ${who} must be vacuumed within ${formatCount(d.remaining ?? 0)} ${what}${times}`;
}

/**
 * The oldest holder that stops freezing in this database: its own sessions, any cluster-wide
 * holder, or a logical slot's catalog_xmin (every database's catalogs).
 */
function horizonHolder(view: RuleView, db: Database, minAgeXids: number): LatestSample | null {
  let oldest: LatestSample | null = null;
  for (const h of view.latest(HOLDER_AGE, { target: db.target })) {
    const l = h.labels;
    if (h.value === null || h.value < minAgeXids) continue;
    if (l.scope === 'database' && l.datname !== db.name) continue;
    if (!oldest || h.value > (oldest.value ?? 0)) oldest = h;
  }
  return oldest;
}

