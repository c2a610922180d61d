/**
 * Seed 003 on a live primary and hot standby (PostgreSQL 18): a standby transaction has read a
 * table, the primary drops it; replaying the DROP's ACCESS EXCLUSIVE lock waits for that reader
 * (a recovery conflict on lock), and nothing else is replayed meanwhile. The standby waits for ever
 * (max_standby_streaming_delay = -1): within a delay, replay-stalled is quiet by design (the server
 * cancels the reader by its own setting), so the wait here ends when the reader does.
 *
 * The daemon's own machinery for both servers (live-rules-rig.ts: a log tailer and a poll
 * scheduler with every collector per server, one StoreWriter, the rules engine over both
 * targets). The test waits on the alerts table only.
 */
import { afterAll, beforeAll, expect, it, describe } from 'vitest';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { waitForReplay } from '../helpers/scenarios/recovery-conflicts.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRulesOn, type LiveRules } from './live-rules-rig.js';

describe('rules on a live primary and standby: a DROP TABLE stalls replay behind a standby reader', () => {
  let primary: PgServer;
  let standby: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, name: 'rules-drop', settings: { log_statement: 'ddl', deadlock_timeout: '100ms' } });
    standby = await startStandby(primary, {
      name: 'rules_drop_standby',
      settings: { max_standby_streaming_delay: '-1', hot_standby_feedback: false, log_recovery_conflict_waits: true },
    });
    await createMonitorRole(primary);
    await primary.query('CREATE TABLE build_logs (id int PRIMARY KEY, line text NOT NULL)');
    await primary.query('INSERT INTO build_logs SELECT g, md5(g::text) FROM generate_series(1, 10000) g');
    await waitForReplay(primary, standby);

    // A 5 s load-balancer limit, so the replica-lag rule shows its cause within the conflict.
    rig = await startLiveRulesOn([{ target: 'primary', server: primary }, { target: 'standby1', server: standby }],
      { 'replica-lag-over-lb-limit': { limitSeconds: 5 } });
    await waitUntil(() => rig.db.prepare(`SELECT 1 FROM series WHERE target = 'standby1' AND name = 'pg_standby_replay_pending_bytes'`).get() !== undefined,
      20_000, 'the standby to be sampled');
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  const alert = (ruleId: string) => rig.alerts(ruleId)[0];

  it('names the standby query replay waits for and the DROP behind it, then resolves once replay moves', async () => {
    const reader = await openSession(standby);
    try {
      await reader.client.query('BEGIN');
      await reader.client.query('SELECT count(*) FROM build_logs');
      await primary.query('DROP TABLE build_logs');

      await waitUntil(() => alert('replay-stalled') !== undefined, 30_000, 'the replay-stalled alert');
      // The summary follows the evidence: the startup process's wait event may be sampled before
      // the tailer reads the standby's "recovery still waiting" line that names the query.
      const named = new RegExp(
        '^replay on standby1 has not advanced for \\d+ s \\([\\d.]+ \\S+ of received WAL waiting\\): replay waiting on a lock held by ' +
        `standby query pid ${reader.pid} \\(recovery conflict on lock, probably for DROP TABLE of build_logs on primary at \\d\\d:\\d\\d:\\d\\d UTC\\)$`,
      );
      await waitUntil(() => named.test(alert('replay-stalled')?.summary ?? ''), 15_000, 'the summary to name the standby query and the DROP');
      await waitUntil(() => alert('replica-lag-over-lb-limit') !== undefined, 20_000, 'the replica-lag alert');
      expect(alert('replica-lag-over-lb-limit')?.summary).toMatch(
        /^standby1 is \d+ s behind the primary, past the 5 s at which load balancers drop it: replay waiting on a lock held by standby query pid \d+/,
      );

      // The reader ends; replay moves on and both alerts resolve.
      await reader.client.query('ROLLBACK');
      await waitUntil(() => alert('replay-stalled')?.state === 'resolved', 30_000, 'replay-stalled to resolve');
      await waitUntil(() => alert('replica-lag-over-lb-limit')?.state === 'resolved', 20_000, 'replica-lag to resolve');
    } finally {
      await reader.client.end().catch(() => undefined);
    }
    expect(rig.transitions(alert('replay-stalled')!.id)).toEqual(['firing', 'resolved']);
  });
});
