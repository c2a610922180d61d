/**
 * Every rule pgvigil has, its default thresholds, and building the enabled set from the `rules:`
 * config section. Rule ids are file names; threshold keys are the options' camelCase names inside
 * and snake_case in the config (`rules.thresholds.repack-holds-vacuum.min_reports`).
 *
 * Control plane: an unknown rule id or threshold key, or a value that is not a positive number,
 * stops startup with every problem listed (rulesFromConfig).
 */
import { autovacuumAbnormal, DEFAULTS as AUTOVACUUM_ABNORMAL } from './autovacuum-abnormal.js';
import { checkpointsTooFrequent, DEFAULTS as CHECKPOINTS_TOO_FREQUENT } from './checkpoints-too-frequent.js';
import { connectionsNearMax, DEFAULTS as CONNECTIONS_NEAR_MAX } from './connections-near-max.js';
import { dataPageCorrupted, DEFAULTS as DATA_PAGE_CORRUPTED } from './data-page-corrupted.js';
import { ENGINE_DEFAULTS, type EngineOptions } from './engine.js';
import { errorStorm, DEFAULTS as ERROR_STORM } from './error-storm.js';
import { idleInTransactionTooLong, DEFAULTS as IDLE_IN_TRANSACTION } from './idle-in-transaction-too-long.js';
import { invalidIndexLeft, DEFAULTS as INVALID_INDEX_LEFT } from './invalid-index-left.js';
import { deadlocks, DEFAULTS as DEADLOCKS } from './deadlocks.js';
import { dropBlocksLockQueue, DEFAULTS as DROP_BLOCKS } from './drop-blocks-lock-queue.js';
import { lockTimeouts, DEFAULTS as LOCK_TIMEOUTS } from './lock-timeouts.js';
import { parallelAutovacuumStarved, DEFAULTS as PARALLEL_STARVED } from './parallel-autovacuum-starved.js';
import { pgRepackLeftovers, DEFAULTS as PG_REPACK_LEFTOVERS } from './pg-repack-leftovers.js';
import { pollConnectionsSkipped, DEFAULTS as POLL_CONNECTIONS_SKIPPED } from './poll-connections-skipped.js';
import { repackChangeCeiling, DEFAULTS as CHANGE_CEILING } from './repack-change-ceiling.js';
import { repackHoldsVacuum, DEFAULTS as HOLDS_VACUUM } from './repack-holds-vacuum.js';
import { repackFailed, DEFAULTS as REPACK_FAILED } from './repack-failed.js';
import { recoveryConflictCancellations, DEFAULTS as CONFLICT_CANCELLATIONS } from './recovery-conflict-cancellations.js';
import { repackLostAtSwap, DEFAULTS as LOST_AT_SWAP } from './repack-lost-at-swap.js';
import { replayDelayedOnPurpose, DEFAULTS as DELAYED_ON_PURPOSE } from './replay-delayed-on-purpose.js';
import { replayStalled, DEFAULTS as STALLED } from './replay-stalled.js';
import { replayStalledOnUnlink, DEFAULTS as STALLED_ON_UNLINK } from './replay-stalled-on-unlink.js';
import { replicaLagOverLbLimit, DEFAULTS as LAG } from './replica-lag-over-lb-limit.js';
import { replicationSlotDanger, DEFAULTS as SLOT_DANGER } from './replication-slot-danger.js';
import { durationTextToMs } from '../config/duration.js';
import { DEFAULT_STALE_AFTER_MS } from './rule-view.js';
import type { Rule, RuleNeeds } from './rule.js';
import { serverCrashed, DEFAULTS as CRASHED } from './server-crashed.js';
import { standbyDisconnected, DEFAULTS as STANDBY_DISCONNECTED } from './standby-disconnected.js';
import { serverUnreachable, DEFAULTS as SERVER_UNREACHABLE } from './server-unreachable.js';
import { statementTimeouts, DEFAULTS as STATEMENT_TIMEOUTS } from './statement-timeouts.js';
import { tempFileSpills, DEFAULTS as TEMP_FILE_SPILLS } from './temp-file-spills.js';
import { transactionOpenTooLong, DEFAULTS as TRANSACTION_OPEN } from './transaction-open-too-long.js';
import { vacuumHeldBack, DEFAULTS as HELD_BACK } from './vacuum-held-back.js';
import { walArchivingFailing, DEFAULTS as ARCHIVING_FAILING } from './wal-archiving-failing.js';
import { wraparoundApproaching, DEFAULTS as WRAPAROUND } from './wraparound-approaching.js';
import { xminHorizonHeld, DEFAULTS as XMIN } from './xmin-horizon-held.js';

// What the rules read (RuleNeeds): the settings their log lines depend on, shared by several.
const AUTOVACUUM_LOGGED = { name: 'log_autovacuum_min_duration', value: '>= 0, low enough that the reports are written' };
const DDL_LOGGED = { name: 'log_statement', value: 'ddl (or all)' };
const LOCK_WAITS_LOGGED = { name: 'log_lock_waits', value: 'on (the default from 19)' };
const CONFLICT_WAITS_LOGGED = { name: 'log_recovery_conflict_waits', value: 'on, on standbys' };
const REPACK_RUNS = ['pg_replication_slots', 'pg_stat_progress_repack'];
const REPLAY = ['pg_standby'];
/** Replay judged beyond recovery_min_apply_delay (apply-delay.ts), read from pg_settings. */
const REPLAY_DELAYED = [...REPLAY, 'pg_settings'];

/**
 * Not a collector: the poll scheduler's own probe (pg_up and why not), which runs whenever a
 * target has a dsn. Named among a rule's collectors so that the rule is not taken for one that
 * reads the log alone.
 */
export const SCHEDULER_PROBE = 'probe';

function needs(n: Partial<RuleNeeds>): RuleNeeds {
  return { settings: n.settings ?? [], collectors: n.collectors ?? [], events: n.events ?? [] };
}

/** Rule factories by id; each takes its full options object. */
export const RULES = {
  'repack-holds-vacuum': {
    create: repackHoldsVacuum, defaults: HOLDS_VACUUM,
    needs: needs({ settings: [AUTOVACUUM_LOGGED, DDL_LOGGED], collectors: REPACK_RUNS, events: ['autovacuum', 'ddl', 'lock_wait'] }),
  },
  'repack-change-ceiling': {
    create: repackChangeCeiling, defaults: CHANGE_CEILING,
    needs: needs({ settings: [DDL_LOGGED], collectors: ['pg_stat_user_tables', ...REPACK_RUNS, 'pg_settings'], events: ['ddl', 'lock_wait', 'autovacuum'] }),
  },
  'repack-lost-at-swap': {
    create: repackLostAtSwap, defaults: LOST_AT_SWAP,
    needs: needs({ settings: [DDL_LOGGED, LOCK_WAITS_LOGGED], collectors: ['pg_stat_progress_repack'], events: ['ddl', 'lock_wait', 'lock_timeout', 'deadlock'] }),
  },
  'repack-failed': {
    create: repackFailed, defaults: REPACK_FAILED,
    needs: needs({
      settings: [DDL_LOGGED, LOCK_WAITS_LOGGED], collectors: REPACK_RUNS,
      events: ['ddl', 'lock_wait', 'statement_timeout', 'server_crash', 'server_restart', 'generic'],
    }),
  },
  'replay-stalled-on-unlink': {
    create: replayStalledOnUnlink, defaults: STALLED_ON_UNLINK,
    needs: needs({ settings: [DDL_LOGGED, CONFLICT_WAITS_LOGGED], collectors: REPLAY_DELAYED, events: ['ddl', 'recovery_conflict_wait'] }),
  },
  'replay-stalled': {
    create: replayStalled, defaults: STALLED,
    needs: needs({ settings: [DDL_LOGGED, CONFLICT_WAITS_LOGGED], collectors: REPLAY_DELAYED, events: ['ddl', 'recovery_conflict_wait'] }),
  },
  'replica-lag-over-lb-limit': {
    create: replicaLagOverLbLimit, defaults: LAG,
    needs: needs({ settings: [DDL_LOGGED, CONFLICT_WAITS_LOGGED], collectors: [...REPLAY_DELAYED, 'pg_stat_replication'], events: ['ddl', 'recovery_conflict_wait'] }),
  },
  'drop-blocks-lock-queue': {
    create: dropBlocksLockQueue, defaults: DROP_BLOCKS,
    needs: needs({ settings: [LOCK_WAITS_LOGGED], collectors: ['pg_lock_waits'], events: ['lock_wait', 'server_restart'] }),
  },
  'xmin-horizon-held': { create: xminHorizonHeld, defaults: XMIN, needs: needs({ collectors: ['pg_xmin_horizon'] }) },
  'vacuum-held-back': {
    create: vacuumHeldBack, defaults: HELD_BACK,
    needs: needs({ settings: [AUTOVACUUM_LOGGED], collectors: ['pg_xmin_horizon'], events: ['autovacuum'] }),
  },
  'parallel-autovacuum-starved': {
    create: parallelAutovacuumStarved, defaults: PARALLEL_STARVED,
    needs: needs({ settings: [AUTOVACUUM_LOGGED], collectors: ['pg_settings'], events: ['autovacuum'] }),
  },
  'server-crashed': {
    create: serverCrashed, defaults: CRASHED,
    // REPACK's statement and slot only name the run a crash ended; the crash itself is the postmaster's lines.
    needs: needs({ collectors: REPACK_RUNS, events: ['server_crash', 'server_restart', 'ddl'] }),
  },
  'wraparound-approaching': {
    create: wraparoundApproaching, defaults: WRAPAROUND,
    needs: needs({ collectors: ['pg_database', 'pg_xmin_horizon', 'pg_settings'], events: ['wraparound_warning'] }),
  },
  'wal-archiving-failing': {
    // The archiver's `archive command failed` lines are unclassified (generic): they only name the cause.
    create: walArchivingFailing, defaults: ARCHIVING_FAILING, needs: needs({ collectors: ['pg_stat_archiver'], events: ['generic'] }),
  },
  // pg_connections_available is the poll scheduler's own probe (every 10 s); the settings and the holders are collectors'.
  'connections-near-max': {
    create: connectionsNearMax, defaults: CONNECTIONS_NEAR_MAX, needs: needs({ collectors: ['pg_settings', 'pg_stat_activity'] }),
  },
  'idle-in-transaction-too-long': {
    create: idleInTransactionTooLong, defaults: IDLE_IN_TRANSACTION, needs: needs({ collectors: ['pg_stat_activity', 'pg_settings'] }),
  },
  // pg_standby only tells a standby, whose sessions are not judged.
  'transaction-open-too-long': {
    create: transactionOpenTooLong, defaults: TRANSACTION_OPEN, needs: needs({ collectors: ['pg_long_transactions', 'pg_standby'] }),
  },
  // From the log alone (judged on a backlog's own time too); pg_stat_checkpointer, pg_stat_wal and pg_settings only add evidence and sizing.
  'checkpoints-too-frequent': {
    create: checkpointsTooFrequent, defaults: CHECKPOINTS_TOO_FREQUENT,
    needs: needs({ settings: [{ name: 'checkpoint_warning', value: '> 0 (30s, the default)' }], events: ['checkpoint'] }),
  },
  // The log's lines name the pages; pg_stat_database's counter speaks when the log is not read.
  'data-page-corrupted': {
    create: dataPageCorrupted, defaults: DATA_PAGE_CORRUPTED, needs: needs({ collectors: ['pg_stat_database'], events: ['data_corruption'] }),
  },
  'replication-slot-danger': {
    create: replicationSlotDanger, defaults: SLOT_DANGER, needs: needs({ collectors: ['pg_replication_slots'], events: ['slot_invalidated'] }),
  },
  'pg-repack-leftovers': {
    create: pgRepackLeftovers, defaults: PG_REPACK_LEFTOVERS,
    needs: needs({ collectors: ['pg_repack_leftovers', 'pg_stat_user_tables', 'pg_total_relation_size'] }),
  },
  'invalid-index-left': { create: invalidIndexLeft, defaults: INVALID_INDEX_LEFT, needs: needs({ collectors: ['pg_invalid_indexes'] }) },
  'standby-disconnected': {
    create: standbyDisconnected, defaults: STANDBY_DISCONNECTED, needs: needs({ collectors: [...REPLAY, 'pg_stat_replication'] }),
  },
  'replay-delayed-on-purpose': { create: replayDelayedOnPurpose, defaults: DELAYED_ON_PURPOSE, needs: needs({ collectors: REPLAY_DELAYED }) },
  // The poll scheduler's own series (pg_up and why not, with every probe).
  'server-unreachable': { create: serverUnreachable, defaults: SERVER_UNREACHABLE, needs: needs({ collectors: [SCHEDULER_PROBE] }) },
  // The poll scheduler's own series (with every probe), about the visits of per-database collectors.
  'poll-connections-skipped': { create: pollConnectionsSkipped, defaults: POLL_CONNECTIONS_SKIPPED, needs: needs({ collectors: ['pg_stat_user_tables'] }) },
  'error-storm': {
    create: errorStorm, defaults: ERROR_STORM,
    needs: needs({ events: ['lock_timeout', 'statement_timeout', 'deadlock', 'recovery_conflict'] }),
  },
  'recovery-conflict-cancellations': {
    create: recoveryConflictCancellations, defaults: CONFLICT_CANCELLATIONS,
    needs: needs({ settings: [DDL_LOGGED, CONFLICT_WAITS_LOGGED], events: ['recovery_conflict', 'recovery_conflict_wait', 'ddl'] }),
  },
  'lock-timeouts': {
    create: lockTimeouts, defaults: LOCK_TIMEOUTS,
    needs: needs({ settings: [LOCK_WAITS_LOGGED, DDL_LOGGED], events: ['lock_timeout', 'lock_wait', 'ddl'] }),
  },
  deadlocks: { create: deadlocks, defaults: DEADLOCKS, needs: needs({ events: ['deadlock'] }) },
  'statement-timeouts': { create: statementTimeouts, defaults: STATEMENT_TIMEOUTS, needs: needs({ events: ['statement_timeout'] }) },
  'temp-file-spills': {
    create: tempFileSpills, defaults: TEMP_FILE_SPILLS,
    needs: needs({ settings: [{ name: 'log_temp_files', value: '>= 0 (kB; 0 logs every file, -1 the default logs none)' }], events: ['temp_file'] }),
  },
  'autovacuum-abnormal': {
    create: autovacuumAbnormal, defaults: AUTOVACUUM_ABNORMAL,
    needs: needs({ settings: [AUTOVACUUM_LOGGED], collectors: ['pg_stat_user_tables', 'pg_stat_progress_vacuum', 'pg_settings'], events: ['autovacuum'] }),
  },
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

/** The enabled rules that read the log alone: the ones a log backlog can be judged by on its own time. */
export function logOnlyRuleIds(options: Pick<RulesOptions, 'disabled'>): Set<string> {
  return new Set(RULE_IDS.filter((id) => RULES[id].needs.collectors.length === 0 && !options.disabled.includes(id)));
}

export interface RuleDescription {
  id: RuleId;
  /** The default severity; some rules escalate (see each finding). */
  severity: Rule['severity'];
  description: string;
  enabled: boolean;
  needs: RuleNeeds;
  /** snake_case key -> the value in force and the default. */
  thresholds: Array<{ name: string; value: number; default: number }>;
}

/** Every rule as `pgvigil rules` lists it, with the thresholds in force under `options`. */
export function describeRules(options: Pick<RulesOptions, 'disabled' | 'thresholds'> = { disabled: [], thresholds: {} }): RuleDescription[] {
  return RULE_IDS.map((id) => {
    const rule = create(id, options.thresholds[id]);
    const given: Record<string, unknown> = options.thresholds[id] ?? {};
    return {
      id,
      severity: rule.severity,
      description: rule.description,
      enabled: !options.disabled.includes(id),
      needs: RULES[id].needs,
      thresholds: Object.entries(RULES[id].defaults).map(([key, value]: [string, number]) => ({
        name: toSnake(key), value: typeof given[key] === 'number' ? given[key] : value, default: value,
      })),
    };
  });
}

/**
 * The `rules.thresholds` section as an operator writes it (snake_case keys per rule id) -> the
 * camelCase overrides buildRules takes. Unknown keys are kept under their camelCase spelling so
 * buildRules reports them with the allowed ones.
 */
export function thresholdsFromConfig(raw: Record<string, Record<string, unknown>>): RulesOptions['thresholds'] {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, values] of Object.entries(raw)) {
    // A duration threshold (`*_ms`) may be written "30s", "15m", "6h" as every duration key may.
    out[id] = Object.fromEntries(Object.entries(values).map(([key, value]) => [toCamel(key), key.endsWith('_ms') ? durationTextToMs(value) : value]));
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
