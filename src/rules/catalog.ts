/**
 * Every rule pgvigil has, its default thresholds, and building the enabled set from the `rules:`
 * config section. Rule ids are file names; threshold keys are the options' camelCase names inside
 * and snake_case in the config (`rules.thresholds.repack-holds-vacuum.min_reports`).
 *
 * Control plane: an unknown rule id or threshold key, or a value that is not a positive number,
 * stops startup with every problem listed (rulesFromConfig).
 */
import { ENGINE_DEFAULTS, type EngineOptions } from './engine.js';
import { dropBlocksLockQueue, DEFAULTS as DROP_BLOCKS } from './drop-blocks-lock-queue.js';
import { parallelAutovacuumStarved, DEFAULTS as PARALLEL_STARVED } from './parallel-autovacuum-starved.js';
import { repackChangeCeiling, DEFAULTS as CHANGE_CEILING } from './repack-change-ceiling.js';
import { repackHoldsVacuum, DEFAULTS as HOLDS_VACUUM } from './repack-holds-vacuum.js';
import { repackLostAtSwap, DEFAULTS as LOST_AT_SWAP } from './repack-lost-at-swap.js';
import { replayStalled, DEFAULTS as STALLED } from './replay-stalled.js';
import { replayStalledOnUnlink, DEFAULTS as STALLED_ON_UNLINK } from './replay-stalled-on-unlink.js';
import { replicaLagOverLbLimit, DEFAULTS as LAG } from './replica-lag-over-lb-limit.js';
import { DEFAULT_STALE_AFTER_MS } from './rule-view.js';
import type { Rule } from './rule.js';
import { serverCrashed, DEFAULTS as CRASHED } from './server-crashed.js';
import { vacuumHeldBack, DEFAULTS as HELD_BACK } from './vacuum-held-back.js';
import { xminHorizonHeld, DEFAULTS as XMIN } from './xmin-horizon-held.js';

/** Rule factories by id; each takes its full options object. */
export const RULES = {
  'repack-holds-vacuum': { create: repackHoldsVacuum, defaults: HOLDS_VACUUM },
  'repack-change-ceiling': { create: repackChangeCeiling, defaults: CHANGE_CEILING },
  'repack-lost-at-swap': { create: repackLostAtSwap, defaults: LOST_AT_SWAP },
  'replay-stalled-on-unlink': { create: replayStalledOnUnlink, defaults: STALLED_ON_UNLINK },
  'replay-stalled': { create: replayStalled, defaults: STALLED },
  'replica-lag-over-lb-limit': { create: replicaLagOverLbLimit, defaults: LAG },
  'drop-blocks-lock-queue': { create: dropBlocksLockQueue, defaults: DROP_BLOCKS },
  'xmin-horizon-held': { create: xminHorizonHeld, defaults: XMIN },
  'parallel-autovacuum-starved': { create: parallelAutovacuumStarved, defaults: PARALLEL_STARVED },
  'server-crashed': { create: serverCrashed, defaults: CRASHED },
  'vacuum-held-back': { create: vacuumHeldBack, defaults: HELD_BACK },
} as const;

export type RuleId = keyof typeof RULES;
export const RULE_IDS = Object.keys(RULES) as RuleId[];

export type RuleThresholds = { [K in RuleId]: (typeof RULES)[K]['defaults'] };

export interface RulesOptions extends EngineOptions {
  /** Rule ids not to evaluate. */
  disabled: string[];
  /** Samples older than this are not "latest" (a slot, a session that was not sampled again is gone). */
  staleAfterMs: number;
  /** Per rule, the thresholds that differ from the defaults. */
  thresholds: { [K in RuleId]?: Partial<RuleThresholds[K]> };
}

export const RULES_DEFAULTS: RulesOptions = { ...ENGINE_DEFAULTS, disabled: [], staleAfterMs: DEFAULT_STALE_AFTER_MS, thresholds: {} };

export class RulesConfigError extends Error {
  readonly code = 'RULES_CONFIG';

  constructor(readonly problems: string[]) {
    super(`invalid rules configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'RulesConfigError';
  }
}

/** The enabled rules with their thresholds; throws RulesConfigError listing every problem. */
export function buildRules(options: Pick<RulesOptions, 'disabled' | 'thresholds'>): Rule[] {
  const problems: string[] = [];
  for (const id of options.disabled) {
    if (!isRuleId(id)) problems.push(`rules.disabled: unknown rule id "${id}" (known: ${RULE_IDS.join(', ')})`);
  }
  for (const [id, given] of Object.entries(options.thresholds)) {
    if (!isRuleId(id)) {
      problems.push(`rules.thresholds.${id}: unknown rule id (known: ${RULE_IDS.join(', ')})`);
      continue;
    }
    const allowed = Object.keys(RULES[id].defaults);
    for (const [key, value] of Object.entries(given ?? {})) {
      const where = `rules.thresholds.${id}.${toSnake(key)}`;
      if (!allowed.includes(key)) problems.push(`${where}: unknown threshold (allowed: ${allowed.map(toSnake).join(', ')})`);
      else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) problems.push(`${where}: expected a number >= 0, got ${JSON.stringify(value)}`);
    }
  }
  if (problems.length > 0) throw new RulesConfigError(problems);
  return RULE_IDS.filter((id) => !options.disabled.includes(id)).map((id) => create(id, options.thresholds[id]));
}

function create<K extends RuleId>(id: K, overrides: Partial<RuleThresholds[K]> | undefined): Rule {
  // Each entry pairs a factory with its own options type; the union does not narrow by key.
  const { create: factory, defaults } = RULES[id] as unknown as { create: (o: RuleThresholds[K]) => Rule; defaults: RuleThresholds[K] };
  return factory({ ...defaults, ...overrides });
}

/**
 * The `rules.thresholds` section as an operator writes it (snake_case keys per rule id) -> the
 * camelCase overrides buildRules takes. Unknown keys are kept under their camelCase spelling so
 * buildRules reports them with the allowed ones.
 */
export function thresholdsFromConfig(raw: Record<string, Record<string, unknown>>): RulesOptions['thresholds'] {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, values] of Object.entries(raw)) {
    out[id] = Object.fromEntries(Object.entries(values).map(([key, value]) => [toCamel(key), value]));
  }
  return out as RulesOptions['thresholds'];
}

function isRuleId(id: string): id is RuleId {
  return Object.hasOwn(RULES, id);
}

export function toSnake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function toCamel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
