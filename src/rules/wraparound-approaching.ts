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
 * Freezing cannot pass the xmin horizon: when a holder (pg_xmin_horizon_holder_age_xids) is older
 * than vacuum_freeze_min_age (50M), it is what keeps datfrozenxid from advancing, and is named.
 */
import type { Severity } from '../domain/index.js';
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

type Counter = 'xid' | 'multixact';

interface Database {
  target: string;
  /** The name, or `OID n` when the server could only name it so. */
  name: string;
  counter: Counter;
  age: LatestSample | null;
  warnings: Array<RuleEvent<'wraparound_warning'>>;
}

const UNIT: Record<Counter, { ids: string; age: string; freezeMaxAge: string }> = {
  xid: { ids: 'XIDs', age: 'age(datfrozenxid)', freezeMaxAge: 'autovacuum_freeze_max_age' },
  multixact: { ids: 'multixacts', age: 'mxid_age(datminmxid)', freezeMaxAge: 'autovacuum_multixact_freeze_max_age' },
};

export function wraparoundApproaching(options: WraparoundApproachingOptions = DEFAULTS): Rule {
  const limits: Record<Counter, [warn: number, error: number, critical: number]> = {
    xid: [options.warnAgeXids, options.errorAgeXids, options.criticalAgeXids],
    multixact: [options.warnAgeMxids, options.errorAgeMxids, options.criticalAgeMxids],
  };
  const severityOf = (counter: Counter, age: number): Severity | null => {
    const [warn, error, critical] = limits[counter];
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
        const ageSeverity = age === null ? null : severityOf(db.counter, age);
        if (ageSeverity === null && db.warnings.length === 0) continue;
        const holder = db.counter === 'xid' ? horizonHolder(view, db, options.holderMinAgeXids) : null;
        const series: CitedSeries[] = [...(db.age && ageSeverity ? [citeSample(db.age)] : []), ...(holder ? [citeSample(holder)] : [])];
        const newest = db.warnings[db.warnings.length - 1];
        findings.push({
          dedupKey: findingKey(ID, db.target, db.name, db.counter),
          target: db.target,
          labels: { datname: db.name, counter: db.counter },
          severity: newest ? 'critical' : ageSeverity!,
          summary: [describeAge(db, ageSeverity ? age : null), describeWarnings(db.warnings, nowMs), holder ? `the xmin horizon is held by ${describeHolderAndAge(view, holder)}` : '']
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

function describeAge(db: Database, age: number | null): string {
  if (age === null) return '';
  const unit = UNIT[db.counter];
  return `database ${db.name} is ${formatCount(age)} ${unit.ids} old (${unit.age}; ${unit.freezeMaxAge} defaults to ` +
    `${db.counter === 'xid' ? '200,000,000' : '400,000,000'}), ${Math.round((age / WRAP_LIMIT) * 100)}% of the way to wraparound: ` +
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
  const what = d.counter === 'xid' ? 'transactions' : 'more multixacts';
  return `the server warns ${who} must be vacuumed within ${formatCount(d.remaining ?? 0)} ${what}${times}`;
}

/** The oldest holder that stops freezing in this database (its own sessions, or any cluster-wide holder). */
function horizonHolder(view: RuleView, db: Database, minAgeXids: number): LatestSample | null {
  let oldest: LatestSample | null = null;
  for (const h of view.latest(HOLDER_AGE, { target: db.target })) {
    const l = h.labels;
    if (h.value === null || h.value < minAgeXids || l.scope === 'catalog') continue;
    if (l.scope === 'database' && l.datname !== db.name) continue;
    if (!oldest || h.value > (oldest.value ?? 0)) oldest = h;
  }
  return oldest;
}

