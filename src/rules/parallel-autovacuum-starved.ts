/**
 * parallel-autovacuum-starved (PostgreSQL 19): autovacuum planned parallel index workers but
 * launched fewer, again and again. Parallel workers come from the max_parallel_workers pool
 * (itself inside max_worker_processes), shared with parallel queries and REPACK's decoding
 * workers; autovacuum_max_parallel_workers only caps what it plans (seed 002_484078be6aa57714.txt).
 * There is no log line of its own: only `parallel workers: index vacuum: N planned, M launched in
 * total` with M < N shows it (pg-messages.md §10, §13.7).
 *
 * "in total" sums over the index-vacuum passes while "planned" is per pass, so the comparison is
 * launched < planned x index scans; the cleanup line is per single pass.
 */
import type { LatestSample, RuleEvent, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample } from './sample-evidence.js';
import { formatDuration } from './summary-format.js';

export const ID = 'parallel-autovacuum-starved';

export interface ParallelAutovacuumStarvedOptions {
  /** Starved reports within the window that make it "repeatedly". */
  minReports: number;
  windowMs: number;
}

export const DEFAULTS: ParallelAutovacuumStarvedOptions = { minReports: 2, windowMs: 3_600_000 };

type Report = RuleEvent<'autovacuum'>;

const LIMITS = ['max_parallel_workers', 'max_worker_processes', 'autovacuum_max_parallel_workers'] as const;
const SETTING_PREFIX = 'pg_settings_';
const SETTINGS_MAX_AGE_MS = 10 * 60_000;

interface Shortfall {
  phase: 'index vacuum' | 'index cleanup';
  planned: number;
  launched: number;
}

export function parallelAutovacuumStarved(options: ParallelAutovacuumStarvedOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Autovacuum repeatedly launched fewer parallel index workers than it planned: the parallel worker pool is exhausted.',
    evaluate(view, nowMs) {
      const byTarget = new Map<string, { parallel: Report[]; starved: Array<{ e: Report; s: Shortfall }> }>();
      for (const e of view.events('autovacuum', { sinceMs: nowMs - options.windowMs })) {
        if (e.details.parallel_workers_planned === null && e.details.parallel_cleanup_workers_planned === null) continue;
        const entry = byTarget.get(e.target) ?? { parallel: [], starved: [] };
        entry.parallel.push(e);
        const s = shortfall(e);
        if (s) entry.starved.push({ e, s });
        byTarget.set(e.target, entry);
      }
      const findings: Finding[] = [];
      for (const [target, { parallel, starved }] of byTarget) {
        if (starved.length < options.minReports) continue;
        const worst = starved.reduce((a, b) => (b.s.planned - b.s.launched > a.s.planned - a.s.launched ? b : a));
        const limits = settings(view, target);
        const d = worst.e.details;
        findings.push({
          dedupKey: findingKey(ID, target),
          target,
          labels: {},
          summary: `autovacuum got fewer parallel workers than it planned in ${starved.length} of ${parallel.length} parallel runs ` +
            `in the last ${formatDuration(options.windowMs)} (worst: ${d.database}.${d.schema}.${d.table}, ${worst.s.phase}: ` +
            `${worst.s.planned} planned, ${worst.s.launched} launched): the max_parallel_workers / max_worker_processes pool is exhausted` +
            describeSettings(limits),
          evidence: evidenceOf({
            eventIds: starved.map((x) => x.e.id),
            // Cited so the alert's basis says the pool sizes were read from the server, not guessed.
            series: limits.map(citeSample),
            facts: {
              starved_runs: starved.length,
              parallel_runs: parallel.length,
              tables: [...new Set(starved.map((x) => `${x.e.details.database}.${x.e.details.schema}.${x.e.details.table}`))].join(', '),
              workers_planned: worst.s.planned,
              workers_launched: worst.s.launched,
              ...Object.fromEntries(limits.map((s) => [s.name.slice(SETTING_PREFIX.length), s.value])),
            },
          }),
        });
      }
      return findings;
    },
  };
}

/** The pools' sizes as last sampled (pg_settings collector, every minute), when known. */
function settings(view: RuleView, target: string): LatestSample[] {
  return LIMITS.flatMap((name) => {
    const sample = view.latest(`${SETTING_PREFIX}${name}`, { target, maxAgeMs: SETTINGS_MAX_AGE_MS })[0];
    return sample === undefined || sample.value === null ? [] : [sample];
  });
}

function describeSettings(limits: LatestSample[]): string {
  // From the log alone (pgvigil analyze) the pool's size is unknown: say where it is read.
  return limits.length === 0
    ? ' (its size is not sampled: pgvigil run reads max_parallel_workers and max_worker_processes from pg_settings)'
    : ` (${limits.map((s) => `${s.name.slice(SETTING_PREFIX.length)} = ${s.value}`).join(', ')})`;
}

function shortfall(e: Report): Shortfall | null {
  const d = e.details;
  if (d.parallel_workers_planned !== null && d.parallel_workers_launched !== null) {
    const planned = d.parallel_workers_planned * Math.max(1, d.index_scans ?? 1);
    if (d.parallel_workers_launched < planned) return { phase: 'index vacuum', planned, launched: d.parallel_workers_launched };
  }
  if (d.parallel_cleanup_workers_planned !== null && d.parallel_cleanup_workers_launched !== null &&
    d.parallel_cleanup_workers_launched < d.parallel_cleanup_workers_planned) {
    return { phase: 'index cleanup', planned: d.parallel_cleanup_workers_planned, launched: d.parallel_cleanup_workers_launched };
  }
  return null;
}
