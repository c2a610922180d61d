/**
 * error-storm: statements cancelled in bulk (lock timeouts, statement timeouts, deadlocks,
 * cancellations by recovery conflicts on a standby) far above the server's own usual rate: one
 * alert per storm per target, not one per error, naming the counts per kind and the relations and
 * databases most hit. A storm is usually one cause (a DDL in the lock queue, a long transaction,
 * replay conflicting with queries) seen by many sessions; the relations point at it.
 *
 * Judged against the target's baseline: an application that uses statement_timeout as a guard
 * cancels a few statements a minute all day, and that is its normal. The usual count per window
 * is the median over the previous hours' windows (a storm within the last half of them does not
 * raise it); a storm is at least `surgeRatio` times that and at least `minEvents`. Each kind is
 * also reported on its own, grouped per cause, by an info rule (lock-timeouts, statement-timeouts,
 * deadlocks, recovery-conflict-cancellations); the summary names those whose causes it counts.
 *
 * From the log alone: lock_timeout, statement_timeout, deadlock and recovery_conflict events. The
 * relation is the one the statement names (PG 19's lock timeouts and every deadlock also name the
 * locked relation by OID, used when the statement names none).
 */
import type { EventKind } from '../domain/index.js';
import { ID as DEADLOCKS } from './deadlocks.js';
import { ID as LOCK_TIMEOUTS } from './lock-timeouts.js';
import { ID as CONFLICT_CANCELLATIONS } from './recovery-conflict-cancellations.js';
import type { RuleEvent, RuleView } from './rule-view.js';
import { ID as STATEMENT_TIMEOUTS } from './statement-timeouts.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { statementRelationOf } from './statements.js';
import { formatCount, formatDuration, plural } from './summary-format.js';

export const ID = 'error-storm';

export interface ErrorStormOptions {
  windowMs: number;
  /** Cancellations within the window below which nothing is a storm (20 in 5 min: 4 a minute). */
  minEvents: number;
  errorEvents: number;
  /** How far back before the window the usual rate is read (3 h). */
  baselineMs: number;
  /** A storm is at least this many times the usual count per window. */
  surgeRatio: number;
}

export const DEFAULTS: ErrorStormOptions = { windowMs: 300_000, minEvents: 20, errorEvents: 200, baselineMs: 3 * 3_600_000, surgeRatio: 4 };

/** Per kind: its name, and the info rule that reports its causes. */
const KINDS = {
  lock_timeout: ['lock timeout', 'lock timeouts', LOCK_TIMEOUTS],
  statement_timeout: ['statement timeout', 'statement timeouts', STATEMENT_TIMEOUTS],
  deadlock: ['deadlock', 'deadlocks', DEADLOCKS],
  recovery_conflict: ['recovery conflict cancellation', 'recovery conflict cancellations', CONFLICT_CANCELLATIONS],
} as const satisfies Partial<Record<EventKind, readonly [string, string, string]>>;

type StormKind = keyof typeof KINDS;
type StormEvent = RuleEvent<StormKind>;

const TOP = 3;
const EVIDENCE_EVENTS = 20;

export function errorStorm(options: ErrorStormOptions = DEFAULTS): Rule {
  return {
    id: ID,
    severity: 'warning',
    description: 'Lock timeouts, statement timeouts, deadlocks or recovery-conflict cancellations above a rate: one alert per storm with the relations and databases hit.',
    evaluate(view, nowMs) {
      const byTarget = new Map<string, StormEvent[]>();
      for (const kind of Object.keys(KINDS) as StormKind[]) {
        for (const e of view.events(kind, { sinceMs: nowMs - options.windowMs })) byTarget.set(e.target, [...(byTarget.get(e.target) ?? []), e]);
      }
      const findings: Finding[] = [];
      for (const [target, events] of byTarget) {
        if (events.length < options.minEvents) continue;
        const usual = usualCount(view, target, nowMs, options);
        if (events.length < options.surgeRatio * usual) continue;
        events.sort((a, b) => a.tsMs - b.tsMs || a.id - b.id);
        const kinds = countBy(events, (e) => e.kind);
        const relations = countBy(events, relationOf);
        const databases = countBy(events, (e) => e.database);
        const perKind = [...kinds].map(([kind, n]) => plural(n, KINDS[kind as StormKind][0], KINDS[kind as StormKind][1])).join(', ');
        findings.push({
          dedupKey: findingKey(ID, target),
          target,
          labels: {},
          severity: events.length >= options.errorEvents ? 'error' : 'warning',
          summary: `${formatCount(events.length)} statements cancelled on ${target} in the last ${formatDuration(options.windowMs)} (${perKind}), ` +
            `usually ${formatCount(usual)} per ${formatDuration(options.windowMs)} over the previous ${formatDuration(options.baselineMs)}` +
            `${describeTop('relations', relations)}${describeTop('databases', databases)}; causes in ${[...kinds.keys()].map((k) => KINDS[k as StormKind][2]).join(', ')}`,
          evidence: evidenceOf({
            eventIds: events.slice(-EVIDENCE_EVENTS).map((e) => e.id),
            facts: {
              cancelled: events.length,
              usual_per_window: usual,
              ...Object.fromEntries([...kinds].map(([kind, n]) => [kind, n])),
              top_relation: [...relations.keys()][0] ?? null,
              top_database: [...databases.keys()][0] ?? null,
            },
          }),
        });
      }
      return findings;
    },
  };
}

/**
 * The median count per window over the baseline before the current window: robust to a storm
 * that fills less than half of it, so a storm does not become its own normal at once.
 */
function usualCount(view: RuleView, target: string, nowMs: number, options: ErrorStormOptions): number {
  const buckets = Math.max(1, Math.floor(options.baselineMs / options.windowMs));
  // Half-open windows ending at the current window's start: an event at its start belongs to the current one.
  const counts = view.eventCounts(Object.keys(KINDS) as StormKind[], { target, untilMs: nowMs - options.windowMs, bucketMs: options.windowMs, buckets });
  return counts.sort((a, b) => a - b)[Math.floor(buckets / 2)]!;
}

/** Counts by key, most frequent first; events without a key are not counted. */
function countBy(events: readonly StormEvent[], keyOf: (e: StormEvent) => string | null): Map<string, number> {
  const counts = new Map<string, number>();
  for (const e of events) {
    const key = keyOf(e);
    if (key !== null) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Map([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

function describeTop(what: string, counts: Map<string, number>): string {
  if (counts.size === 0) return '';
  return `; ${what}: ${[...counts].slice(0, TOP).map(([key, n]) => `${key} ${formatCount(n)}`).join(', ')}${counts.size > TOP ? `, ${counts.size - TOP} more` : ''}`;
}

function relationOf(e: StormEvent): string | null {
  const named = statementRelationOf(e.details.statement);
  if (named !== null) return named;
  const lock = e.kind === 'lock_timeout' ? (e as RuleEvent<'lock_timeout'>).details.lock_object
    : e.kind === 'deadlock' ? (e as RuleEvent<'deadlock'>).details.processes[0]?.lock_object ?? null : null;
  return lock?.relation_oid != null ? `relation ${lock.relation_oid}` : null;
}
