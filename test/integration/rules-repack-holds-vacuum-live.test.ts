/**
 * The incident of seed 000 live, on a real PostgreSQL 19: a REPACK (CONCURRENTLY) of shop.orders
 * runs while every row of other.hot_counters is updated; autovacuum of hot_counters reports dead
 * rows it may not remove, at one cutoff, because REPACK's temporary slot holds every database.
 *
 * Everything is the daemon's own machinery: the log tailer follows the scenario's log, the poll
 * scheduler runs every collector as a pg_monitor role, one StoreWriter commits both, and the rules
 * engine (started as a component, evaluating on its interval and after each commit) writes the
 * alert through AlertStore. The test only waits on the alerts table, with deadlines.
 */
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { WebhookNotifier } from '../../src/notify/webhook.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { LogTailer } from '../../src/sources/log-tailer.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { repackConcurrentlyHoldsBackVacuum as scenario } from '../helpers/scenarios/repack.js';
import { FORMAT_SUFFIX, runScenarioInOwnLog, scenarioServerSettings } from '../helpers/scenarios/scenario-log.js';
import { describeWithTool } from '../helpers/tools.js';
import { createMonitorRole, startPollRig, type PollRig } from './collectors-rig.js';

const TARGET = 'pg19';
const log = silentLogger();

describeWithTool('pg19', 'rules on a live PostgreSQL 19: REPACK (CONCURRENTLY) holds vacuum in another database', () => {
  let server: PgServer;
  let rig: PollRig;
  let writer: StoreWriter;
  let tailer: LogTailer;
  let engine: RuleEngine;

  beforeAll(async () => {
    server = await startPrimary({ version: 19, name: 'rules-repack', settings: { ...scenarioServerSettings(19), log_statement: 'ddl' } });
    await createMonitorRole(server);
    rig = await startPollRig(server, { target: TARGET, intervalMs: 500 });
    writer = new StoreWriter(rig.store, systemClock, log, { flushIntervalMs: 100 });
    await writer.start();
    tailer = new LogTailer({
      target: TARGET, source: path.join(server.logDir, `${scenario.name}${FORMAT_SUFFIX.stderr}`), format: 'stderr',
      prefix: '%m [%p] %q%u@%d ', timezone: 'UTC', startAt: 'beginning', savedOffset: null, writer, clock: systemClock, log,
      pollIntervalMs: 100, idleFlushMs: 200,
    });
    await tailer.start();
    const alerts = new AlertStore(rig.store, [new WebhookNotifier({ url: 'http://127.0.0.1:9/hook' })]);
    engine = new RuleEngine({
      rules: buildRules(RULES_DEFAULTS),
      views: new StoreRuleViewSource(rig.store, { targets: [{ name: TARGET, cluster: null }], staleAfterMs: 3_000 }),
      alerts, clock: systemClock, log, commits: writer, options: { intervalMs: 500, holdDownMs: 2_000 },
    });
    await engine.start();
  });

  afterAll(async () => {
    await engine?.stop();
    await tailer?.stop();
    await writer?.stop();
    await rig?.stop();
    await destroyAllServers();
  });

  const alertRows = () => rig.store.prepare('SELECT id, rule_id, state, summary FROM alerts ORDER BY id')
    .all() as Array<{ id: number; rule_id: string; state: string; summary: string }>;

  it('fires while REPACK runs, naming the table, the other database and the stuck cutoff; resolves after it ends', async () => {
    // Resolves once REPACK finished; the scenario itself waits for the held autovacuum report.
    await runScenarioInOwnLog(scenario, { primary: server, standby: null });
    const fired = () => alertRows().find((a) => a.rule_id === 'repack-holds-vacuum');
    await waitUntil(() => fired() !== undefined, 20_000, 'the repack-holds-vacuum alert');
    // Autovacuum may also report a catalog table held in some database: at least hot_counters.
    expect(fired()?.summary).toMatch(
      /^REPACK \(CONCURRENTLY\) of shop\.public\.orders has held vacuum back in \d+ databases? \(\d+ tables?\) for \d+ s: removable cutoff stuck at XID \d+, [\d,]+ dead rows not removable$/,
    );
    const evidence = JSON.parse(rig.store.prepare('SELECT evidence FROM alerts WHERE id = ?').pluck().get(fired()!.id) as string);
    expect(evidence.facts.held_tables).toContain('other.public.hot_counters');
    expect(evidence.facts.slot).toMatch(/^pg_repack_\d+$/);
    await waitUntil(() => fired()?.state === 'resolved', 30_000, 'the alert to resolve once the slot is gone');
    const transitions = rig.store.prepare('SELECT to_state FROM alert_transitions WHERE alert_id = ? ORDER BY id').pluck().all(fired()!.id);
    expect(transitions).toEqual(['firing', 'resolved']);
    const outbox = rig.store.prepare('SELECT action FROM outbox WHERE alert_id = ? ORDER BY id').pluck().all(fired()!.id);
    expect(outbox).toEqual(['trigger', 'resolve']);
    expect(alertRows().map((a) => a.rule_id)).toEqual(['repack-holds-vacuum']);
    expect(engine.stats.ruleFailures).toEqual({});
  });
});
