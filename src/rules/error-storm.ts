/**
 * error-storm: statements cancelled in bulk (lock timeouts, statement timeouts, deadlocks,
 * cancellations by recovery conflicts on a standby) above a rate: one alert per storm per target,
 * not one per error, naming the counts per kind and the relations and databases most hit. A storm
 * is usually one cause (a DDL in the lock queue, a long transaction, replay conflicting with
 * queries) seen by many sessions; the relations point at it.
 *
 * From the log alone: lock_timeout, statement_timeout, deadlock and recovery_conflict events. The
 * relation is the one the statement names (PG 19's lock timeouts and every deadlock also name the
 * locked relation by OID, used when the statement names none).
 */
import type { EventKind } from '../domain/index.js';
import type { RuleEvent } from './rule-view.js';
import { evidenceOf, findingKey, type Finding, type Rule } from './rule.js';
import { tableCommandOf } from './statements.js';
import { formatCount, formatDuration, plural } from './summary-format.js';

export const ID = 'error-storm';

export interface ErrorStormOptions {
  windowMs: number;
  /** Cancellations within the window that make a storm (20 in 5 min: 4 a minute). */
  minEvents: number;
  errorEvents: number;
}

export const DEFAULTS: ErrorStormOptions = { windowMs: 300_000, minEvents: 20, errorEvents: 200 };

const KINDS = {
  lock_timeout: ['lock timeout', 'lock timeouts'],
  statement_timeout: ['statement timeout', 'statement timeouts'],
  deadlock: ['deadlock', 'deadlocks'],
  recovery_conflict: ['recovery conflict cancellation', 'recovery conflict cancellations'],
} as const satisfies Partial<Record<EventKind, readonly [string, string]>>;

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
          summary: `${formatCount(events.length)} statements cancelled on ${target} in the last ${formatDuration(options.windowMs)} (${perKind})` +
            `${describeTop('relations', relations)}${describeTop('databases', databases)}`,
          evidence: evidenceOf({
            eventIds: events.slice(-EVIDENCE_EVENTS).map((e) => e.id),
            facts: {
              cancelled: events.length,
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

// DML names its table after these words; DDL goes through tableCommandOf.
const DML = /^\s*(?:with\b[\s\S]*?\)\s*)?(?:update\s+(?:only\s+)?|insert\s+into\s+|delete\s+from\s+(?:only\s+)?|merge\s+into\s+|copy\s+|select\b[\s\S]*?\bfrom\s+(?:only\s+)?)((?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)(?:\s*\.\s*(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*))*)/i;

function relationOf(e: StormEvent): string | null {
  const statement = e.details.statement;
  const named = tableCommandOf(statement)?.relation ?? (statement ? DML.exec(statement)?.[1] : undefined);
  if (named) return named.split(/\s*\.\s*/).map((p) => (p.startsWith('"') ? p.slice(1, -1).replace(/""/g, '"') : p.toLowerCase())).join('.');
  const lock = e.kind === 'lock_timeout' ? (e as RuleEvent<'lock_timeout'>).details.lock_object
    : e.kind === 'deadlock' ? (e as RuleEvent<'deadlock'>).details.processes[0]?.lock_object ?? null : null;
  return lock?.relation_oid != null ? `relation ${lock.relation_oid}` : null;
}
