/**
 * autovacuum-abnormal: autovacuum behaving unlike itself on one table, in two ways:
 * - slow: a run took far longer than that table's own runs of the same kind usually do (its
 *   median over the lookback), from the autovacuum reports' `elapsed` (log_autovacuum_min_duration),
 *   so it works on a log alone. Like with like: an aggressive run (anti-wraparound, every page not
 *   yet frozen) is measured against the table's aggressive runs, an ordinary one (all-visible pages
 *   skipped) against ordinary ones; the scheduled anti-wraparound run of a big table is always many
 *   times its ordinary runs and is no news. The report says why when it can: an aggressive run,
 *   several index passes (dead items did not fit in maintenance_work_mem / autovacuum_work_mem),
 *   time asleep in the cost delay (PG 18's `delay time`, track_cost_delay_timing).
 * - never coming: a table past its own trigger point (autovacuum_vacuum_threshold +
 *   autovacuum_vacuum_scale_factor x its live rows: pg_settings samples, else the defaults 50 and
 *   0.2; per-table reloptions are not read) for a whole hour, its dead rows growing, while
 *   autovacuum does not run on it (autovacuum_count unchanged, no report, no vacuum in progress):
 *   autovacuum is off for it, or all workers are busy elsewhere. Below the trigger point
 *   autovacuum is not due yet: a big table collects millions of dead rows before its turn.
 * A run that cannot remove dead rows because the horizon is held is xmin-horizon-held's to tell.
 */
import type { Labels } from '../domain/index.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeLast, SLOW_COLLECTOR_MAX_AGE_MS } from './sample-evidence.js';
import { formatCount, formatDuration } from './summary-format.js';

export const ID = 'autovacuum-abnormal';

const DEAD = 'pg_stat_user_tables_n_dead_tup';
const LIVE = 'pg_stat_user_tables_n_live_tup';
const AUTOVACUUMS = 'pg_stat_user_tables_autovacuum_count_total';
const LAST_AUTOVACUUM = 'pg_stat_user_tables_last_autovacuum_timestamp_seconds';
const IN_PROGRESS = 'pg_stat_progress_vacuum_heap_blocks';
const VACUUM_THRESHOLD = 'pg_settings_autovacuum_vacuum_threshold';
const VACUUM_SCALE_FACTOR = 'pg_settings_autovacuum_vacuum_scale_factor';
/** PostgreSQL's defaults, for a server whose settings were not sampled. */
const DEFAULT_VACUUM_THRESHOLD = 50;
const DEFAULT_VACUUM_SCALE_FACTOR = 0.2;

export interface AutovacuumAbnormalOptions {
  /** A run this many times its table's median elapsed is abnormal... */
  slowRatio: number;
  /** ...when it took at least this long (a 0.1 s run that took 1 s is not news). */
  slowMinSeconds: number;
  /** Earlier runs of the table needed for a median. */
  minHistoryRuns: number;
  /** How far back the table's history of runs goes. */
  lookbackMs: number;
  /** How long a slow run keeps its alert open. */
  activeForMs: number;
  /** Dead rows must have grown over this window, with no autovacuum of the table in it. */
  growthWindowMs: number;
  minDeadTuples: number;
  minDeadTupleGrowth: number;
}

export const DEFAULTS: AutovacuumAbnormalOptions = {
  slowRatio: 5, slowMinSeconds: 60, minHistoryRuns: 3, lookbackMs: 24 * 3_600_000, activeForMs: 3_600_000,
  growthWindowMs: 3_600_000, minDeadTuples: 1_000_000, minDeadTupleGrowth: 100_000,
};

type Report = RuleEvent<'autovacuum'>;

export function autovacuumAbnormal(options: AutovacuumAbnormalOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Autovacuum ran far longer than usual on a table, or never came to a table whose dead rows keep growing.',
    evaluate(view, nowMs) {
      return [...slowRuns(view, nowMs, options), ...neverComing(view, nowMs, options)];
    },
  };
}

function tableOf(e: Report): string {
  return `${e.details.database}.${e.details.schema}.${e.details.table}`;
}

function slowRuns(view: RuleView, nowMs: number, o: AutovacuumAbnormalOptions): Finding[] {
  const byTable = new Map<string, Report[]>();
  for (const e of view.events('autovacuum', { sinceMs: nowMs - o.lookbackMs })) {
    if (e.details.elapsed_s === null) continue;
    const key = `${e.target}\u0000${tableOf(e)}`;
    const runs = byTable.get(key);
    if (runs) runs.push(e);
    else byTable.set(key, [e]);
  }
  const findings: Finding[] = [];
  for (const runs of byTable.values()) {
    const last = runs[runs.length - 1]!;
    const elapsed = last.details.elapsed_s!;
    // Only a recent run can be news: the history is read for it alone.
    if (last.tsMs < nowMs - o.activeForMs || runs.length - 1 < o.minHistoryRuns || elapsed < o.slowMinSeconds) continue;
    const history = runs.slice(0, -1).filter((e) => e.details.aggressive === last.details.aggressive).map((e) => e.details.elapsed_s!);
    if (history.length < o.minHistoryRuns) continue;
    const usual = median(history);
    if (elapsed < o.slowRatio * usual) continue;
    const table = tableOf(last);
    const why = reasons(last);
    findings.push({
      dedupKey: findingKey(ID, last.target, table, 'slow'),
      target: last.target,
      labels: { table, kind: 'slow' },
      summary: `autovacuum of ${table} took ${formatDuration(elapsed * 1000)}, ${formatCount(elapsed / usual)}× its median of ` +
        `${formatDuration(usual * 1000)} over its last ${history.length} ${last.details.aggressive ? 'aggressive ' : ''}runs${why.length > 0 ? `: ${why.join('; ')}` : ''}`,
      evidence: evidenceOf({
        eventIds: [last.id],
        facts: { table, elapsed_s: elapsed, median_elapsed_s: usual, history_runs: history.length, index_scans: last.details.index_scans, aggressive: last.details.aggressive },
      }),
    });
  }
  return findings;
}

function reasons(e: Report): string[] {
  const d = e.details;
  const out: string[] = [];
  if (d.aggressive) out.push(`an aggressive run${d.wraparound ? ' to prevent wraparound' : ''} (it scans every page not yet frozen)`);
  if (d.index_scans !== null && d.index_scans > 1) out.push(`${d.index_scans} index passes: the dead items did not fit in maintenance_work_mem / autovacuum_work_mem`);
  if (d.delay_time_ms !== null && d.elapsed_s && d.delay_time_ms / 1000 >= d.elapsed_s / 2) {
    out.push(`${Math.round((d.delay_time_ms / 10) / d.elapsed_s)}% of it asleep in the cost delay (autovacuum_vacuum_cost_limit / _delay)`);
  }
  return out;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function neverComing(view: RuleView, nowMs: number, o: AutovacuumAbnormalOptions): Finding[] {
  const sinceMs = nowMs - o.growthWindowMs;
  const reported = new Set(view.events('autovacuum', { sinceMs }).map((e) => `${e.target}\u0000${tableOf(e)}`));
  const findings: Finding[] = [];
  // Only a table whose last sample in the window's final tenth is not below minDeadTuples can
  // qualify (checked again below): the others of the thousands of tables are never read.
  const candidates = view.latest(DEAD, { maxAgeMs: o.growthWindowMs / 10, unlessValue: { below: o.minDeadTuples } });
  for (const candidate of candidates) {
    const dead = view.series(DEAD, { sinceMs, target: candidate.target, labels: candidate.labels })[0];
    if (!dead) continue;
    const points = dead.points.filter((p) => p.value !== null);
    const first = points[0];
    const last = points[points.length - 1];
    // The window must be covered (a table sampled for 5 min has not been neglected for an hour).
    if (!first || !last || first.tsMs > sinceMs + o.growthWindowMs / 10 || last.tsMs < nowMs - o.growthWindowMs / 10) continue;
    if (last.value! < o.minDeadTuples || last.value! - first.value! < o.minDeadTupleGrowth) continue;
    const { labels, target } = dead;
    const table = `${labels.datname}.${labels.schemaname}.${labels.relname}`;
    if (reported.has(`${target}\u0000${table}`) || vacuumedIn(view, target, labels, sinceMs)) continue;
    const live = view.latest(LIVE, { target, labels })[0]?.value ?? null;
    // Due for the whole window, or autovacuum was right not to come yet.
    const trigger = triggerPoint(view, target, live);
    if (first.value! < trigger) continue;
    const lastRunS = view.latest(LAST_AUTOVACUUM, { target, labels })[0]?.value ?? null;
    const share = live !== null && live + last.value! > 0 ? ` (${Math.round((last.value! / (live + last.value!)) * 100)}% of its rows)` : '';
    const lastRun = lastRunS === null ? 'never autovacuumed since the statistics were reset' : `last autovacuumed ${formatDuration(nowMs - lastRunS * 1000)} ago`;
    findings.push({
      dedupKey: findingKey(ID, target, table, 'not_vacuumed'),
      target,
      labels: { table, kind: 'not_vacuumed' },
      summary: `autovacuum has not come to ${table} while its dead rows grew from ${formatCount(first.value!)} to ${formatCount(last.value!)}${share} ` +
        `in ${formatDuration(last.tsMs - first.tsMs)}, past its trigger point of ${formatCount(trigger)}; ${lastRun}: autovacuum off for the table, or every worker busy elsewhere`,
      evidence: evidenceOf({
        series: [citeLast(dead)],
        facts: { table, dead_tuples: last.value!, dead_tuples_growth: last.value! - first.value!, live_tuples: live, trigger_dead_tuples: trigger, last_autovacuum_s: lastRunS },
      }),
    });
  }
  return findings;
}

/** Dead rows past which autovacuum is due on a table: threshold + scale factor x its rows (n_live_tup stands for reltuples). */
function triggerPoint(view: RuleView, target: string, live: number | null): number {
  const setting = (name: string, fallback: number) => view.latest(name, { target, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0]?.value ?? fallback;
  return Math.round(setting(VACUUM_THRESHOLD, DEFAULT_VACUUM_THRESHOLD) + setting(VACUUM_SCALE_FACTOR, DEFAULT_VACUUM_SCALE_FACTOR) * (live ?? 0));
}

/** autovacuum_count moved in the window, or a vacuum of the table is running now. */
function vacuumedIn(view: RuleView, target: string, labels: Labels, sinceMs: number): boolean {
  if (view.latest(IN_PROGRESS, { target, labels }).length > 0) return true;
  const counts = view.series(AUTOVACUUMS, { sinceMs, target, labels })[0]?.points.map((p) => p.value).filter((v): v is number => v !== null) ?? [];
  return counts.length > 1 && counts[counts.length - 1]! > counts[0]!;
}

