/**
 * The daemon's own machinery on a live server, as live tests run it: one StoreWriter, a poll
 * scheduler with every collector (as the pg_monitor role, every 500 ms), a log tailer on the
 * server's log directory and the rules engine with quick intervals, all on the real clock.
 */
import { createCollectors } from '../../src/collectors/index.js';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { Notifier } from '../../src/notify/notifier.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { LogTailer } from '../../src/sources/log-tailer.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import { AlertStore } from '../../src/store/alert-store.js';
import type { Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import type { PgServer } from '../helpers/pg-harness.js';
import { monitorDsn } from './collectors-rig.js';

export interface LiveDaemonOptions {
  target: string;
  /** Rule thresholds lowered so an incident fires within seconds. */
  thresholds: Parameters<typeof buildRules>[0]['thresholds'];
  notifiers?: Notifier[];
}

/** In start order; stop them in reverse. */
export function liveDaemonComponents(server: PgServer, db: Db, options: LiveDaemonOptions): Array<{ start(): Promise<void>; stop(): Promise<void> }> {
  const log = silentLogger();
  const writer = new StoreWriter(db, systemClock, log, { flushIntervalMs: 100 });
  const collectors = createCollectors();
  return [writer, new PollScheduler({
    target: options.target, connection: monitorDsn(server), collectors, writer, clock: systemClock, logger: log,
    intervals: Object.fromEntries(collectors.map((c) => [c.name, 500])), probeIntervalMs: 1_000,
  }), new LogTailer({
    target: options.target, source: server.logDir, logFilename: 'postgresql-%Y-%m-%d_%H%M%S.log', format: 'stderr', prefix: '%m [%p] %q%u@%d ',
    timezone: 'UTC', startAt: 'end', savedOffset: null, writer, clock: systemClock, log, pollIntervalMs: 100, idleFlushMs: 200,
  }), new RuleEngine({
    rules: buildRules({ disabled: [], thresholds: options.thresholds }),
    views: new StoreRuleViewSource(db, { targets: [{ name: options.target, cluster: null }], staleAfterMs: 3_000 }),
    alerts: new AlertStore(db, options.notifiers ?? []),
    // A quick refresh of the stored summary, so it follows an incident as it grows.
    clock: systemClock, log, commits: writer, options: { ...RULES_DEFAULTS, intervalMs: 500, holdDownMs: 2_000, refireMinIntervalMs: 500 },
  })];
}
