/**
 * repack-change-ceiling: PostgreSQL 19 REPACK (CONCURRENTLY) keeps ~50 bytes per row other
 * sessions update or delete during the run and fails at the very end once more than 104,857,600
 * of them piled up (the next doubling of its array exceeds MaxAllocSize); no amount of RAM helps
 * and the whole run is lost. At a rate r of updates + deletes per second a run can last
 * hours_until_ceiling = 104,857,600 / r / 3600 (seed 000_ddfba2eacd9de59b.txt).
 *
 * Two findings:
 * - while a REPACK runs on a table: the changes piled up since it started (from the table's
 *   n_tup_upd + n_tup_del counters) past a fraction of the ceiling, or the ceiling reached within
 *   a short time at the current rate (warning; error past a second fraction);
 * - on a PG 19 target without a running REPACK: a table whose rate has kept the ceiling under a
 *   threshold for a while, so a REPACK of it would fail (info: advice before someone starts one).
 */
import { REPACK_CEILING_CHANGES } from '../domain/repack-ceiling.js';
import type { Labels } from '../domain/index.js';
import type { RuleView, SeriesData } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { describeRun, runningRepacks, runStartMs, type RepackRun, type TableRef } from './repack-runs.js';
import { provesPg19 } from './server-version.js';
import { formatCount, formatDuration, formatHours } from './summary-format.js';

export const ID = 'repack-change-ceiling';

const RATE = 'pg_stat_user_tables_changes_per_second';
/** Seconds a REPACK could run at the table's rate before REPACK_CEILING_CHANGES (the collector computes it). */
const SECONDS_UNTIL_CEILING = 'pg_stat_user_tables_repack_seconds_until_ceiling';
const UPDATES = 'pg_stat_user_tables_n_tup_upd_total';
const DELETES = 'pg_stat_user_tables_n_tup_del_total';

export interface RepackChangeCeilingOptions {
  /**
   * Concurrent updates + deletes a run can hold: PostgreSQL's fixed 104,857,600. An option only so
   * a live test can reach it in seconds; an operator has no reason to change it.
   */
  ceilingChanges: number;
  /** Running REPACK: warn once this fraction of the ceiling has piled up... */
  runningWarnFraction: number;
  /** ...or when the ceiling is this close at the current rate. */
  runningWarnHoursLeft: number;
  /** Running REPACK: error past this fraction. */
  runningErrorFraction: number;
  /** No REPACK running: advise when hours_until_ceiling stays under this... */
  advisoryHours: number;
  /** ...for this long (every sample in the window under the threshold). */
  advisorySustainMs: number;
  /** Samples the advisory window must hold. */
  advisoryMinSamples: number;
  lookbackMs: number;
}

export const DEFAULTS: RepackChangeCeilingOptions = {
  ceilingChanges: REPACK_CEILING_CHANGES,
  runningWarnFraction: 0.5,
  runningWarnHoursLeft: 0.5,
  runningErrorFraction: 0.9,
  advisoryHours: 1,
  advisorySustainMs: 15 * 60_000,
  advisoryMinSamples: 3,
  lookbackMs: 24 * 3_600_000,
};

export function repackChangeCeiling(options: RepackChangeCeilingOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'A table changes so fast that a REPACK (CONCURRENTLY) of it hits the 104,857,600-change ceiling and fails at the end.',
    evaluate(view, nowMs) {
      const running = runningRepacks(view, options.lookbackMs);
      const findings = running.flatMap((run) => whileRunning(view, run, nowMs, options));
      const busy = new Set(running.flatMap((run) => (run.table ? [`${run.target}\u0000${run.table.table}`] : [])));
      // Candidates first: proving PG 19 reads a day of events, and most evaluations have none.
      const candidates = view.latest(SECONDS_UNTIL_CEILING, { unlessValue: { atLeast: secondsUntilCeilingAbove(options.advisoryHours, options) } })
        .filter((s) => s.value !== null && hoursLeft(s.value, options) < options.advisoryHours && !busy.has(`${s.target}\u0000${s.labels.relname}`));
      for (const target of new Set(candidates.map((s) => s.target))) {
        if (!provesPg19(view, target)) continue;
        for (const c of candidates.filter((x) => x.target === target)) {
          const history = view.series(SECONDS_UNTIL_CEILING, { sinceMs: nowMs - options.advisorySustainMs, target, labels: c.labels })[0];
          const advice = history ? advisory(history, nowMs, options) : null;
          if (advice) findings.push(advice);
        }
      }
      return findings;
    },
  };
}

function whileRunning(view: RuleView, run: RepackRun, nowMs: number, o: RepackChangeCeilingOptions): Finding[] {
  if (!run.table) return [];
  const labels = tableLabels(view, run, run.table);
  if (!labels) return [];
  const startMs = runStartMs(run);
  const changed = changesSince(view, run.target, labels, startMs);
  if (changed === null) return [];
  const rate = view.latest(RATE, { target: run.target, labels })[0]?.value ?? null;
  const remaining = o.ceilingChanges - changed.changes;
  const secondsLeft = rate !== null && rate > 0 ? Math.max(0, remaining) / rate : null;
  const fraction = changed.changes / o.ceilingChanges;
  const close = secondsLeft !== null && secondsLeft <= o.runningWarnHoursLeft * 3600;
  if (fraction < o.runningWarnFraction && !close) return [];
  const atRate = secondsLeft === null
    ? 'no changes are arriving now'
    : `at ${formatCount(rate!)} changes/s it fails in ${formatDuration(secondsLeft * 1000)} and throws the run away`;
  const summary = `${describeRun(run)} has piled up ${formatCount(changed.changes)} of the ${formatCount(o.ceilingChanges)} ` +
    `concurrent updates+deletes it can hold (${Math.round(fraction * 100)}%) in ${formatDuration(nowMs - startMs)}; ${atRate}`;
  return [{
    dedupKey: findingKey(ID, run.target, 'running', labels.datname ?? '', labels.schemaname ?? '', labels.relname ?? ''),
    target: run.target,
    labels: { ...labels, slot_name: run.slotName ?? '' },
    summary,
    severity: fraction >= o.runningErrorFraction ? 'error' : 'warning',
    evidence: evidenceOf({
      eventIds: run.eventIds,
      series: [...run.series, ...(rate === null ? [] : [{ name: RATE, labels, value: rate, tsMs: nowMs }])],
      facts: {
        slot: run.slotName,
        repack_pid: run.sessionPid,
        changes_since_start: Math.round(changed.changes),
        changes_counted_from_ms: changed.fromMs,
        ceiling_changes: o.ceilingChanges,
        changes_per_second: rate,
        seconds_until_ceiling: secondsLeft === null ? null : Math.round(secondsLeft),
      },
    }),
  }];
}

/** The pg_stat_user_tables labels of the repacked table (public when the schema is unknown). */
function tableLabels(view: RuleView, run: RepackRun, table: TableRef): Labels | null {
  const wanted: Record<string, string> = { relname: table.table };
  const database = table.database ?? run.database;
  if (database !== null) wanted.datname = database;
  if (table.schema !== null) wanted.schemaname = table.schema;
  const candidates = view.latest(UPDATES, { target: run.target, labels: wanted });
  const chosen = candidates.find((c) => c.labels.schemaname === 'public') ?? candidates[0];
  return chosen?.labels ?? null;
}

/**
 * Updates + deletes since `startMs`: the counters' growth from their first sample in the run, plus
 * the rate times the gap when the first sample came after the start (the table entered the
 * per-table top-N late, or the run started before pgvigil did).
 */
function changesSince(view: RuleView, target: string, labels: Labels, startMs: number): { changes: number; fromMs: number } | null {
  const upd = view.series(UPDATES, { sinceMs: startMs, target, labels })[0];
  const del = view.series(DELETES, { sinceMs: startMs, target, labels })[0];
  if (!upd || !del) return null;
  const total = (s: SeriesData, i: number) => s.points[i]?.value ?? null;
  const first = [total(upd, 0), total(del, 0)];
  const last = [total(upd, upd.points.length - 1), total(del, del.points.length - 1)];
  if (first.includes(null) || last.includes(null)) return null;
  const grown = last[0]! + last[1]! - first[0]! - first[1]!;
  const firstMs = Math.max(upd.points[0]!.tsMs, del.points[0]!.tsMs);
  const rate = view.latest(RATE, { target, labels })[0]?.value ?? 0;
  // A counter that went backwards (stats reset) restarts the count.
  return { changes: Math.max(0, grown) + Math.max(0, rate ?? 0) * Math.max(0, firstMs - startMs) / 1000, fromMs: firstMs };
}

/**
 * The collector's seconds until the real ceiling past which hoursLeft is surely not under `hours`:
 * a bound for the store to leave the other tables out, a hair loose (rounding), hoursLeft decides.
 */
function secondsUntilCeilingAbove(hours: number, o: RepackChangeCeilingOptions): number {
  return (hours * 3600 * REPACK_CEILING_CHANGES / o.ceilingChanges) * (1 + 1e-9);
}

/** The collector's seconds until the real ceiling -> hours until the configured one. */
function hoursLeft(secondsUntilCeiling: number, o: RepackChangeCeilingOptions): number {
  return (secondsUntilCeiling * o.ceilingChanges) / REPACK_CEILING_CHANGES / 3600;
}

function advisory(s: SeriesData, nowMs: number, o: RepackChangeCeilingOptions): Finding | null {
  const values = s.points.map((p) => (p.value === null ? null : hoursLeft(p.value, o)));
  if (values.length < o.advisoryMinSamples || values.some((v) => v === null || v >= o.advisoryHours)) return null;
  const hours = values[values.length - 1]!;
  const seconds = s.points[s.points.length - 1]!.value!;
  const rate = o.ceilingChanges / (hours * 3600);
  const table = `${s.labels.datname}.${s.labels.schemaname}.${s.labels.relname}`;
  const sustained = formatDuration(nowMs - s.points[0]!.tsMs);
  return {
    dedupKey: findingKey(ID, s.target, 'advisory', s.labels.datname ?? '', s.labels.schemaname ?? '', s.labels.relname ?? ''),
    target: s.target,
    labels: { ...s.labels },
    severity: 'info',
    summary: `A REPACK (CONCURRENTLY) of ${table} could run only ${formatHours(hours)} before hitting the ` +
      `${formatCount(o.ceilingChanges)}-change ceiling: the table takes ${formatCount(rate)} updates+deletes/s (for ${sustained})`,
    evidence: evidenceOf({
      series: [{ name: SECONDS_UNTIL_CEILING, labels: { ...s.labels }, value: seconds, tsMs: s.points[s.points.length - 1]!.tsMs }],
      facts: { table, hours_until_ceiling: Math.round(hours * 100) / 100, changes_per_second: Math.round(rate), ceiling_changes: o.ceilingChanges },
    }),
  };
}
