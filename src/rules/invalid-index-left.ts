/**
 * invalid-index-left: an index left invalid (pg_index.indisvalid = false) with nothing working on
 * it for `minLeftMs` (5 min): a CREATE INDEX CONCURRENTLY that failed (a unique index over
 * duplicate keys, a deadlock) or was cancelled (statement_timeout, Ctrl-C while it waited for old
 * snapshots), or a REINDEX CONCURRENTLY that did (its `_ccnew` copy before the swap, the `_ccold`
 * one after it; ChooseRelationName appends a digit when the name is taken).
 *
 * Warning: the planner never uses the index, yet one whose build got as far as indisready is
 * maintained on every write; a retried CREATE INDEX CONCURRENTLY of the same name fails with
 * "already exists", and with IF NOT EXISTS (as migration tools write it) succeeds without
 * building anything, so the queries it was for keep scanning. It will not go away by itself.
 *
 * Quiet on a normal day: a CREATE INDEX CONCURRENTLY that runs, however long, is marked as worked
 * on by the collector (its table has a pg_stat_progress_create_index row) and one that succeeds
 * leaves a valid index. Resolves at the first poll of its database that no longer lists it
 * (dropped, or rebuilt valid) or that finds something working on it again.
 */
import { sqlIdentifier } from '../lib/sql-identifier.js';
import type { LatestSample, RuleView } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { citeSample, SLOW_COLLECTOR_MAX_AGE_MS } from './sample-evidence.js';
import { formatBytes, heldFor } from './summary-format.js';
import { trailingRun } from './trailing-run.js';

export const ID = 'invalid-index-left';

const LEFT_BEHIND = 'pg_invalid_indexes_left_behind';
const READY = 'pg_invalid_indexes_ready';
const SIZE = 'pg_invalid_indexes_size_bytes';
/** Sampled in every run of a database, listed indexes or not: a newer one without the index means it is gone. */
const DATABASE_RUN = 'pg_invalid_indexes_indexes';

export interface InvalidIndexLeftOptions {
  /** Invalid with nothing working on it in every sample for this long: a build starting between two polls is not a leftover. */
  minLeftMs: number;
  /** How far back the samples are read to say since when ("for more than 6 h" beyond). */
  lookbackMs: number;
}

export const DEFAULTS: InvalidIndexLeftOptions = { minLeftMs: 300_000, lookbackMs: 21_600_000 };

type Origin = 'create_index_concurrently' | 'reindex_concurrently_new' | 'reindex_concurrently_old';

/** REINDEX CONCURRENTLY's names for its copies (ChooseRelationName: `<index>_ccnew`, `_ccnew1`, ...). */
function originOf(indexName: string): Origin {
  if (/_ccnew\d*$/.test(indexName)) return 'reindex_concurrently_new';
  if (/_ccold\d*$/.test(indexName)) return 'reindex_concurrently_old';
  return 'create_index_concurrently';
}

const ORIGIN_TEXT: Record<Origin, string> = {
  create_index_concurrently: 'probably left by a CREATE INDEX CONCURRENTLY that failed or was cancelled',
  reindex_concurrently_new: 'by its name the new copy a REINDEX CONCURRENTLY was building when it failed or was cancelled (the index it rebuilt still serves)',
  reindex_concurrently_old: 'by its name the old copy a REINDEX CONCURRENTLY swapped out and did not get to drop (the rebuilt index serves under the old name)',
};

export function invalidIndexLeft(options: InvalidIndexLeftOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'An index left invalid by a failed or cancelled CREATE INDEX / REINDEX CONCURRENTLY: never used, maybe maintained on every write, blocks a retry under its name.',
    evaluate(view, nowMs) {
      const findings: Finding[] = [];
      for (const s of view.latest(LEFT_BEHIND, { maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })) {
        if (s.value !== 1 || !listedInLatestRun(view, s)) continue;
        const points = view.series(LEFT_BEHIND, { sinceMs: nowMs - options.lookbackMs, target: s.target, labels: s.labels })[0]?.points ?? [];
        const first = trailingRun(points, (p) => p.value === 1)[0];
        if (!first || nowMs - first.tsMs < options.minLeftMs) continue;
        findings.push(finding(view, s, heldFor(first.tsMs, points[0]?.tsMs, nowMs, options.lookbackMs), first.tsMs));
      }
      return findings;
    },
  };
}

/** Its database's newest run listed it: a run after its last sample that did not means it was dropped or became valid. */
function listedInLatestRun(view: RuleView, s: LatestSample): boolean {
  const run = view.latest(DATABASE_RUN, { target: s.target, labels: { datname: s.labels.datname ?? '' }, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  return run !== undefined && run.tsMs <= s.tsMs;
}

function finding(view: RuleView, s: LatestSample, since: string, sinceMs: number): Finding {
  const { target } = s;
  const datname = s.labels.datname ?? '';
  const schema = s.labels.schemaname ?? '';
  const table = s.labels.relname ?? '';
  const index = s.labels.indexrelname ?? '';
  const origin = originOf(index);
  const ready = view.latest(READY, { target, labels: s.labels, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  const size = view.latest(SIZE, { target, labels: s.labels, maxAgeMs: SLOW_COLLECTOR_MAX_AGE_MS })[0];
  const qualified = `${sqlIdentifier(schema)}.${sqlIdentifier(index)}`;
  const drop = `DROP INDEX CONCURRENTLY ${qualified}`;
  const cost = ready?.value === 1
    ? `the planner never uses it, yet it is maintained on every write${size?.value != null ? ` (${formatBytes(size.value)})` : ''}`
    : ready?.value === 0 ? 'the planner never uses it (not maintained either: its build failed before it was ready)' : 'the planner never uses it';
  const action = origin === 'create_index_concurrently'
    ? `${drop}, then run the CREATE INDEX CONCURRENTLY again once what failed it is fixed (a unique index fails again on the same duplicate keys), ` +
      `or rebuild it with REINDEX INDEX CONCURRENTLY ${qualified}`
    : drop;
  const retry = origin === 'create_index_concurrently'
    ? '; a CREATE INDEX CONCURRENTLY of the same name fails ("already exists"), and with IF NOT EXISTS builds nothing' : '';
  return {
    dedupKey: findingKey(ID, target, datname, schema, index),
    target,
    labels: { datname, schemaname: schema, relname: table, indexrelname: index },
    summary: `Invalid index ${schema}.${index} on ${datname}.${schema}.${table} ${since}, ${ORIGIN_TEXT[origin]}: ${cost}${retry}. ${action}`,
    evidence: evidenceOf({
      series: [s, ready, size].filter((x) => x !== undefined).map(citeSample),
      facts: {
        datname, table: `${schema}.${table}`, index: `${schema}.${index}`, origin, invalid_since_ms: sinceMs,
        ready: ready?.value ?? null, size_bytes: size?.value ?? null, action,
      },
    }),
  };
}
