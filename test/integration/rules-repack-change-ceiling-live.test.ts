/**
 * repack-change-ceiling live, on a real PostgreSQL 19: a REPACK (CONCURRENTLY) of a table that other
 * sessions keep updating piles up changes; the rule, reading what the real collectors sampled
 * (REPACK's slot, pg_stat_progress_repack's transaction start, the table's n_tup_upd counter), says
 * how much of the ceiling the run has used. The real ceiling (104,857,600 changes) takes hours to
 * reach here, so this test only lowers the rule's `ceilingChanges` threshold; the product keeps
 * PostgreSQL's figure.
 *
 * The REPACK is made slow by an expression index whose function sleeps every 500th row, only in
 * the session that sets pgvigil.slow_key_ms (test/helpers/scenarios/repack.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DEFAULTS, repackChangeCeiling } from '../../src/rules/repack-change-ceiling.js';
import type { Finding } from '../../src/rules/rule.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { SLOW_KEY_FUNCTION } from '../helpers/scenarios/repack.js';
import { describeWithTool } from '../helpers/tools.js';
import { createMonitorRole, openSession, startPollRig, type PollRig } from './collectors-rig.js';

const TARGET = 'pg19';
const TEST_CEILING = 20_000;
/** Rows per UPDATE statement: the run (about 15 s) sees tens of thousands of changes. */
const ROWS_PER_UPDATE = 500;

describeWithTool('pg19', 'repack-change-ceiling on a live PostgreSQL 19 (ceiling lowered in the test)', () => {
  let server: PgServer;
  let rig: PollRig;

  beforeAll(async () => {
    server = await startPrimary({ version: 19, name: 'rules-change-ceiling' });
    await createMonitorRole(server);
    await server.query(SLOW_KEY_FUNCTION);
    await server.query('CREATE TABLE orders (id int PRIMARY KEY, n int NOT NULL)');
    await server.query('INSERT INTO orders SELECT g, 0 FROM generate_series(1, 100000) g');
    await server.query('CREATE INDEX orders_slow_key ON orders (slow_key(id))');
    rig = await startPollRig(server, { target: TARGET, intervalMs: 500 });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('warns while the run has piled up half the ceiling, counting from the run\'s own start', async () => {
    // Only the fraction piled up: at this ceiling any rate is "within 30 min of it".
    const rule = repackChangeCeiling({ ...DEFAULTS, ceilingChanges: TEST_CEILING, runningWarnHoursLeft: 0 });
    const views = new StoreRuleViewSource(rig.store, { targets: [{ name: TARGET, cluster: null }], staleAfterMs: 3_000 });
    const repacker = await openSession(server);
    const writer = await openSession(server);
    try {
      await repacker.client.query("SET pgvigil.slow_key_ms = '75'");
      await repacker.client.query('SET max_parallel_maintenance_workers = 0');
      // Changes before the run must not count: sampled, and the rate back to 0, before it starts.
      await writer.client.query(`UPDATE orders SET n = n + 1 WHERE id <= ${TEST_CEILING}`);
      await rig.waitForSample('pg_stat_user_tables_n_tup_upd_total', { relname: 'orders' }, (v) => v !== null && v >= TEST_CEILING, 'the updates before the run sampled');
      await rig.waitForSample('pg_stat_user_tables_changes_per_second', { relname: 'orders' }, (v) => v === 0, 'the change rate back to 0');
      const repack = repacker.client.query('REPACK (CONCURRENTLY) orders').then(() => null, (error: Error) => error);
      await rig.waitForSample('pg_replication_slots_info', { owner: 'repack' }, () => true, "REPACK's slot sampled");
      await rig.waitForSample('pg_stat_progress_repack_xact_start_timestamp_seconds', { relname: 'orders' }, (v) => v !== null, "REPACK's transaction start sampled");
      let updates = 0;
      let findings: Finding[] = [];
      await waitUntil(async () => {
        await writer.client.query(`UPDATE orders SET n = n + 1 WHERE id <= ${ROWS_PER_UPDATE}`);
        updates += ROWS_PER_UPDATE;
        findings = rule.evaluate(views.at(Date.now()), Date.now());
        return findings.length > 0;
      }, 30_000, 'the repack-change-ceiling finding while REPACK runs');
      const [finding] = findings;
      expect(finding?.summary).toMatch(
        /^REPACK \(CONCURRENTLY\) of postgres\.public\.orders has piled up [\d,]+ of the 20,000 concurrent updates\+deletes it can hold \(\d+%\) in \d+ s; /,
      );
      const counted = finding!.evidence.facts.changes_since_start as number;
      expect(counted).toBeGreaterThanOrEqual(TEST_CEILING / 2);
      // Only this run's updates (sampled a little late, extrapolated at the sampled rate), never the 20,000 before it.
      expect(counted).toBeLessThan(updates + TEST_CEILING / 2);
      expect(await repack).toBeNull();
    } finally {
      await repacker.client.end();
      await writer.client.end();
    }
  }, 120_000);
});
