/**
 * Rules: pure functions from what the store knows (a RuleView) to what is true now (Findings).
 *
 * A rule owns one conclusion a DBA would write in the incident channel ("REPACK on shop.orders
 * held vacuum in 3 databases for 84 s") and the evidence for it. It never does I/O, never reads a
 * clock (the engine passes `nowMs`), never remembers anything between evaluations, and never
 * decides about firing or resolving: the engine (engine.ts) turns findings that appear into firing
 * alerts and findings that disappear into resolved ones, after a hold-down.
 *
 * Glossary
 * - finding: one condition true at `nowMs`, for one target and one subject (a slot, a table, a
 *   standby); identified by its dedup key, which stays the same for as long as the condition lasts.
 * - rule id: the rule's file name (`repack-holds-vacuum.ts` -> `repack-holds-vacuum`).
 */
import type { Evidence, EventKind, Severity } from '../domain/index.js';
import { redactSqlLiterals } from '../lib/redact.js';
import type { RuleView } from './rule-view.js';

export interface Finding {
  /** Stable for the life of the condition; build it with findingKey(). */
  dedupKey: string;
  target: string;
  labels: Record<string, string>;
  /** One line naming the cause. */
  summary: string;
  evidence: Evidence;
  /** Overrides the rule's default severity (e.g. escalation past a second threshold). */
  severity?: Severity;
}

export interface Rule {
  id: string;
  severity: Severity;
  description: string;
  evaluate(view: RuleView, nowMs: number): Finding[];
}

/**
 * What a rule reads, for `pgvigil rules` and the docs: the server settings its log lines need
 * (with the value wanted), the collectors its series come from, the event kinds it reads. Kept in
 * the catalog beside each rule (catalog.ts), checked against the collectors by a test.
 */
export interface RuleNeeds {
  settings: ReadonlyArray<{ name: string; value: string }>;
  collectors: readonly string[];
  events: readonly EventKind[];
}

/** `repack-holds-vacuum/primary/pg_repack_4242`: rule id, target, then the subject's parts. */
export function findingKey(ruleId: string, target: string, ...parts: Array<string | number>): string {
  return [ruleId, target, ...parts.map(String)].join('/');
}

/**
 * Evidence with defaults; event ids and samples cited twice are kept once, in order of first
 * mention. Statement text in facts (`statement`, `holder_query`, ...) and in a cited sample's
 * `query` label loses its literals: an alert is what leaves the machine (PagerDuty, webhooks,
 * Alertmanager), and the values in a WHERE clause are the personal data; the events it cites keep
 * the text the `redact` setting allows.
 */
export function evidenceOf(parts: Partial<Evidence>): Evidence {
  const series = new Map((parts.series ?? []).map((s) => {
    const cited = s.labels.query === undefined ? s : { ...s, labels: { ...s.labels, query: redactSqlLiterals(s.labels.query) } };
    return [JSON.stringify([cited.name, cited.labels, cited.tsMs]), cited];
  }));
  return { eventIds: [...new Set(parts.eventIds ?? [])], series: [...series.values()], facts: withoutLiterals(parts.facts ?? {}) };
}

const STATEMENT_FACT = /(^|_)(statement|query)$/;

function withoutLiterals(facts: Evidence['facts']): Evidence['facts'] {
  const out: Evidence['facts'] = {};
  for (const [key, value] of Object.entries(facts)) out[key] = typeof value === 'string' && STATEMENT_FACT.test(key) ? redactSqlLiterals(value) : value;
  return out;
}
