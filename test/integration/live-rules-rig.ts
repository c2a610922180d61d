/**
 * The daemon's own machinery around one live server (or a primary and its standby), for rule
 * scenario tests: a log tailer on each server's log directory, a poll scheduler per server with
 * every collector (each every 500 ms) as the pg_monitor role (created by the caller on the
 * primary: a standby gets it by replication), one StoreWriter into an in-memory store (or the
 * file `store`, for tests that review it after), and the rules engine writing alerts through
 * AlertStore (quick interval, 2 s hold-down, summaries refreshed every 500 ms so they
 * follow the incident). Tests wait on the alerts table, with deadlines.
 */
import { createCollectors } from '../../src/collectors/index.js';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { WebhookNotifier } from '../../src/notify/webhook.js';
import { RULES_DEFAULTS, buildRules, type RulesOptions } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { LogTailer } from '../../src/sources/log-tailer.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import type { RelationNames } from '../../src/sources/relation-names.js';
import { namingWriter, relationNamesOf } from '../../src/sources/target-sources.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import type { PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { monitorDsn } from './collectors-rig.js';

export const LIVE_TARGET = 'primary';

export interface StoredAlert {
  id: number;
  state: string;
  severity: string;
  summary: string;
  labels: string;
  evidence: string;
}

export interface LiveRules {
  db: Db;
  /** With `nameLocks`: the daemon's catalog name cache, which names the tailer's lock events. */
  names: RelationNames | null;
  alerts(ruleId: string): StoredAlert[];
  transitions(alertId: number): unknown[];
  stop(): Promise<void>;
}

/** A server the rig watches, as the daemon's target `target`. */
export interface WatchedServer {
  target: string;
  server: PgServer;
}

/**
 * `nameLocks`: the tailer's lock events get names as in the daemon (TargetSources), reloaded at
 * most every 500 ms. `store`: a store file instead of memory, closed by stop() and left on disk.
 * `logFilename`: the server's log_filename while the incident runs (a scenario's own file, which
 * the tailer reads from its first line once it appears).
 */
export async function startLiveRules(server: PgServer, thresholds: RulesOptions['thresholds'] = {}, target = LIVE_TARGET,
  o: LiveRulesOptions = {}): Promise<LiveRules> {
  return startLiveRulesOn([{ target, server }], thresholds, o);
}

export interface LiveRulesOptions {
  nameLocks?: boolean;
  store?: string;
  logFilename?: string;
  /** The rule view's staleAfterMs: the rig's quick 3 s by default, the daemon's 60 s for a day run at its defaults. */
  staleAfterMs?: number;
}

/**
 * The rig over several servers at once (a primary and its standby): a tailer and a poll scheduler
 * per server, one store and one rules engine over all targets. The targets have no `cluster` in
 * the config, as a user who lists a primary and its standby would write it: the rules group them
 * as the daemon does. `names` is the first server's.
 */
export async function startLiveRulesOn(watched: WatchedServer[], thresholds: RulesOptions['thresholds'] = {},
  o: LiveRulesOptions = {}): Promise<LiveRules> {
  const log = silentLogger();
  const db = openStore(o.store ?? ':memory:');
  const writer = new StoreWriter(db, systemClock, log, { flushIntervalMs: 100 });
  const components: Array<{ start(): Promise<void>; stop(): Promise<void> }> = [writer];
  let names: RelationNames | null = null;
  for (const { target, server } of watched) {
    const collectors = createCollectors();
    const scheduler = new PollScheduler({
      target, connection: monitorDsn(server), collectors, writer, clock: systemClock, logger: log,
      intervals: Object.fromEntries(collectors.map((c) => [c.name, 500])), probeIntervalMs: 1_000,
    });
    const targetNames = o.nameLocks
      ? relationNamesOf(scheduler, { clock: systemClock, logger: log, minReloadMs: 500 })
      : null;
    names ??= targetNames;
    components.push(scheduler, new LogTailer({
      target, source: server.logDir, logFilename: o.logFilename ?? 'postgresql-%Y-%m-%d_%H%M%S.log', format: 'stderr', prefix: '%m [%p] %q%u@%d ',
      timezone: 'UTC', startAt: 'end', savedOffset: null, writer: targetNames ? namingWriter(writer, targetNames) : writer, clock: systemClock, log,
      pollIntervalMs: 100, idleFlushMs: 200,
    }));
  }
  components.push(new RuleEngine({
    rules: buildRules({ disabled: [], thresholds }),
    views: new StoreRuleViewSource(db, { targets: watched.map(({ target }) => ({ name: target, cluster: null })), staleAfterMs: o.staleAfterMs ?? 3_000 }),
    alerts: new AlertStore(db, [new WebhookNotifier({ url: 'http://127.0.0.1:9/hook' })]),
    clock: systemClock, log, commits: writer, options: { ...RULES_DEFAULTS, intervalMs: 500, holdDownMs: 2_000, refireMinIntervalMs: 500 },
  }));
  for (const c of components) await c.start();
  return {
    db,
    names,
    alerts: (ruleId) => db.prepare('SELECT id, state, severity, summary, labels, evidence FROM alerts WHERE rule_id = ? ORDER BY id').all(ruleId) as StoredAlert[],
    transitions: (alertId) => db.prepare('SELECT to_state FROM alert_transitions WHERE alert_id = ? ORDER BY id').pluck().all(alertId),
    async stop() {
      for (const c of components.reverse()) await c.stop();
      db.close();
    },
  };
}

const LOCK_WAITERS_WAIT_MS = 15_000;

/** Waits until exactly these sessions wait for a heavyweight lock (so the queue order is known). */
export async function waitForLockWaiters(server: PgServer, pids: number[]): Promise<void> {
  const want = [...pids].sort((a, b) => a - b).join(',');
  await waitUntil(async () => {
    const rows = await server.query<{ pids: string | null }>("SELECT string_agg(pid::text, ',' ORDER BY pid) AS pids FROM pg_locks WHERE NOT granted");
    return rows[0]?.pids === want;
  }, LOCK_WAITERS_WAIT_MS, `sessions ${want} to wait for a lock`);
}
