/**
 * Seed 003 on a live primary and hot standby (PostgreSQL 18): a standby transaction has read a
 * table, the primary drops it; replaying the DROP's ACCESS EXCLUSIVE lock waits for that reader
 * (a recovery conflict on lock) until max_standby_streaming_delay cancels it, and nothing else is
 * replayed meanwhile.
 *
 * The daemon's own machinery for both servers: a log tailer per server, a poll scheduler per
 * server with every collector, one StoreWriter, and the rules engine over the store with the two
 * targets in one cluster. The test waits on the alerts table only.
 */
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { createCollectors } from '../../src/collectors/index.js';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { WebhookNotifier } from '../../src/notify/webhook.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { LogTailer } from '../../src/sources/log-tailer.js';
import { PollScheduler } from '../../src/sources/poll-scheduler.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { waitForReplay } from '../helpers/scenarios/recovery-conflicts.js';
import { createMonitorRole, monitorDsn, openSession } from './collectors-rig.js';

const log = silentLogger();
const CONFLICT_DELAY_S = 15;

describe('rules on a live primary and standby: a DROP TABLE stalls replay behind a standby reader', () => {
  let primary: PgServer;
  let standby: PgServer;
  let db: Db;
  let writer: StoreWriter;
  const components: Array<{ start(): Promise<void>; stop(): Promise<void> }> = [];

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, name: 'rules-drop', settings: { log_statement: 'ddl', deadlock_timeout: '100ms' } });
    standby = await startStandby(primary, {
      name: 'rules_drop_standby',
      settings: { max_standby_streaming_delay: `${CONFLICT_DELAY_S}s`, hot_standby_feedback: false, log_recovery_conflict_waits: true },
    });
    await createMonitorRole(primary);
    await primary.query('CREATE TABLE build_logs (id int PRIMARY KEY, line text NOT NULL)');
    await primary.query('INSERT INTO build_logs SELECT g, md5(g::text) FROM generate_series(1, 10000) g');
    await waitForReplay(primary, standby);

    db = openStore(':memory:');
    writer = new StoreWriter(db, systemClock, log, { flushIntervalMs: 100 });
    components.push(writer);
    for (const [target, server] of [['primary', primary], ['standby1', standby]] as const) {
      const collectors = createCollectors();
      components.push(new PollScheduler({
        target, connection: monitorDsn(server), collectors, writer, clock: systemClock, logger: log,
        intervals: Object.fromEntries(collectors.map((c) => [c.name, 500])), probeIntervalMs: 1_000,
      }));
      components.push(new LogTailer({
        target, source: server.logDir, logFilename: 'postgresql-%Y-%m-%d_%H%M%S.log', format: 'stderr', prefix: '%m [%p] %q%u@%d ',
        timezone: 'UTC', startAt: 'end', savedOffset: null, writer, clock: systemClock, log, pollIntervalMs: 100, idleFlushMs: 200,
      }));
    }
    components.push(new RuleEngine({
      // A 5 s load-balancer limit, so the replica-lag rule shows its cause within the conflict.
      rules: buildRules({ disabled: [], thresholds: { 'replica-lag-over-lb-limit': { limitSeconds: 5 } } }),
      views: new StoreRuleViewSource(db, { targets: [{ name: 'primary', cluster: 'ci' }, { name: 'standby1', cluster: 'ci' }], staleAfterMs: 3_000 }),
      alerts: new AlertStore(db, [new WebhookNotifier({ url: 'http://127.0.0.1:9/hook' })]),
      clock: systemClock, log, commits: writer, options: { ...RULES_DEFAULTS, intervalMs: 500, holdDownMs: 2_000 },
    }));
    for (const c of components) await c.start();
    await waitUntil(() => db.prepare(`SELECT 1 FROM series WHERE target = 'standby1' AND name = 'pg_standby_replay_pending_bytes'`).get() !== undefined,
      20_000, 'the standby to be sampled');
  });

  afterAll(async () => {
    for (const c of components.reverse()) await c.stop();
    db?.close();
    await destroyAllServers();
  });

  const alert = (ruleId: string) => db.prepare('SELECT id, state, summary FROM alerts WHERE rule_id = ? ORDER BY id')
    .get(ruleId) as { id: number; state: string; summary: string } | undefined;

  it('names the standby query replay waits for and the DROP behind it, then resolves once replay moves', async () => {
    const reader = await openSession(standby);
    try {
      await reader.client.query('BEGIN');
      await reader.client.query('SELECT count(*) FROM build_logs');
      await primary.query('DROP TABLE build_logs');

      await waitUntil(() => alert('replay-stalled') !== undefined, 30_000, 'the replay-stalled alert');
      expect(alert('replay-stalled')?.summary).toMatch(new RegExp(
        '^replay on standby1 has not advanced for \\d+ s \\([\\d.]+ \\S+ of received WAL waiting\\): replay waiting on a lock held by ' +
        `standby query pid ${reader.pid} \\(recovery conflict on lock; DROP TABLE on primary at \\d\\d:\\d\\d:\\d\\d UTC is next to replay\\)$`,
      ));
      await waitUntil(() => alert('replica-lag-over-lb-limit') !== undefined, 20_000, 'the replica-lag alert');
      expect(alert('replica-lag-over-lb-limit')?.summary).toMatch(
        /^standby1 is \d+ s behind the primary, past the 5 s at which load balancers drop it: replay waiting on a lock held by standby query pid \d+/,
      );

      // max_standby_streaming_delay cancels the reader; replay moves on and both alerts resolve.
      await waitUntil(() => alert('replay-stalled')?.state === 'resolved', (CONFLICT_DELAY_S + 20) * 1000, 'replay-stalled to resolve');
      await waitUntil(() => alert('replica-lag-over-lb-limit')?.state === 'resolved', 20_000, 'replica-lag to resolve');
    } finally {
      await reader.client.end().catch(() => undefined);
    }
    const transitions = db.prepare('SELECT to_state FROM alert_transitions WHERE alert_id = ? ORDER BY id').pluck().all(alert('replay-stalled')!.id);
    expect(transitions).toEqual(['firing', 'resolved']);
  });
});
