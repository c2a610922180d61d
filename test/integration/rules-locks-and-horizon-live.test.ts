/**
 * Two incidents live on one PostgreSQL 18 primary, seen by the daemon's own machinery: a log
 * tailer on the server's log directory, a poll scheduler with every collector as a pg_monitor
 * role, one StoreWriter, and the rules engine writing alerts through AlertStore. The tests only
 * wait on the alerts table, with deadlines.
 *
 * - drop-blocks-lock-queue (seed 003, "What DROP TABLE really costs"): a transaction that read
 *   build_logs stays open, DROP TABLE build_logs queues for ACCESS EXCLUSIVE behind it, and two
 *   readers queue behind the DROP.
 * - xmin-horizon-held: a REPEATABLE READ transaction keeps its snapshot while other sessions burn
 *   XIDs past a lowered warn_age_xids (and min_held_ms 0: it is held seconds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { consumeXids, createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules, waitForLockWaiters, type LiveRules } from './live-rules-rig.js';

const WARN_AGE_XIDS = 1_000;
const FIRE_WAIT_MS = 15_000;
const RESOLVE_WAIT_MS = 15_000;

type Session = Awaited<ReturnType<typeof openSession>>;

describe('rules on a live PostgreSQL 18: lock queues behind a DROP, a held xmin horizon', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({
      version: 18, name: 'rules-locks',
      // The DROP's and the readers' `still waiting` lines (with STATEMENT and DETAIL), soon.
      settings: { log_lock_waits: true, deadlock_timeout: '100ms' },
    });
    // Summaries refresh every 500 ms, so the alert follows the queue as it grows.
    await createMonitorRole(server);
    rig = await startLiveRules(server, { 'xmin-horizon-held': { warnAgeXids: WARN_AGE_XIDS, minHeldMs: 0 } });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  const alert = (ruleId: string) => rig.alerts(ruleId);
  const transitions = (id: number) => rig.transitions(id);
  /** eventIds open with the DDL's own `still waiting` line and cite only logged waits. */
  const citedFromLog = (eventIds: number[], ddlPid: number) => {
    const waits = rig.db.prepare("SELECT id, pid FROM events WHERE kind = 'lock_wait' AND json_extract(details, '$.phase') = 'waiting'")
      .all() as Array<{ id: number; pid: number }>;
    return eventIds.length > 0 && waits.find((w) => w.id === eventIds[0])?.pid === ddlPid && eventIds.every((id) => waits.some((w) => w.id === id));
  };

  it('names the DROP waiting behind an open reader and the queries queued behind it; resolves once the DROP runs', async () => {
    await server.query('CREATE TABLE build_logs (id int PRIMARY KEY, line text NOT NULL)');
    await server.query('INSERT INTO build_logs SELECT g, md5(g::text) FROM generate_series(1, 1000) g');
    const [reader, dropper, queued1, queued2] = await Promise.all([1, 2, 3, 4].map(() => openSession(server))) as [Session, Session, Session, Session];
    const pending: Array<Promise<unknown>> = [];
    try {
      await reader.client.query('BEGIN');
      await reader.client.query('SELECT count(*) FROM build_logs');
      const drop = dropper.client.query('DROP TABLE build_logs');
      pending.push(drop);
      await waitForLockWaiters(server, [dropper.pid]);
      // Arrive after the DROP: they wait for it, not for the reader. Once it ran, the table is gone.
      const queued = [queued1, queued2].map((s) => s.client.query('SELECT count(*) FROM build_logs WHERE id = 1').then(
        () => 'ran', (error: Error) => error.message));
      pending.push(...queued);
      await waitForLockWaiters(server, [dropper.pid, queued1.pid, queued2.pid]);

      const blockedPids = [queued1.pid, queued2.pid].sort((a, b) => a - b);
      // The DROP's `still waiting` line is cited first; the readers' lines only when they add a pid
      // that the wait queue in its DETAIL did not list.
      const citesDropLine = () => {
        const evidence = alert('drop-blocks-lock-queue')[0]?.evidence;
        return evidence !== undefined && citedFromLog(JSON.parse(evidence).eventIds, dropper.pid);
      };
      await waitUntil(() => alert('drop-blocks-lock-queue')[0]?.summary.includes('blocks 2 queries') === true && citesDropLine(),
        FIRE_WAIT_MS, 'the drop-blocks-lock-queue alert naming both queued readers and citing the DROP\'s logged wait');
      const [fired] = alert('drop-blocks-lock-queue');
      expect(fired?.summary).toMatch(new RegExp(
        `^DROP TABLE build_logs has waited \\d+ s for AccessExclusiveLock behind pid ${reader.pid} and blocks 2 queries queued behind it$`,
      ));
      expect(fired?.severity).toBe('warning');
      expect(JSON.parse(fired!.labels)).toEqual({ database: 'postgres', pid: String(dropper.pid) });
      const facts = JSON.parse(fired!.evidence).facts;
      expect(facts).toMatchObject({
        waiting_pid: dropper.pid, statement: 'DROP TABLE build_logs', holder_pids: String(reader.pid), blocked_pids: blockedPids.join(', '),
      });
      expect(facts.lock).toMatch(/^relation \d+ of database \d+$/);

      // The reader ends: the DROP gets its lock and runs, the queued readers find no table.
      await reader.client.query('COMMIT');
      await drop;
      const gone = expect.stringMatching(/^relation "build_logs" does not exist$/);
      expect(await Promise.all(queued)).toEqual([gone, gone]);
      await waitUntil(() => alert('drop-blocks-lock-queue')[0]?.state === 'resolved', RESOLVE_WAIT_MS, 'the alert to resolve once the DROP ran');
      expect(transitions(fired!.id)).toEqual(['firing', 'resolved']);
      // Ended by the DROP's `acquired` line, not by the samples taken before it going stale: those
      // would refresh the alert without its log evidence, the wait still counting up.
      expect(citedFromLog(JSON.parse(alert('drop-blocks-lock-queue')[0]!.evidence).eventIds, dropper.pid)).toBe(true);
      expect(alert('drop-blocks-lock-queue')).toHaveLength(1);
    } finally {
      // The reader first: it releases the DROP and so everyone queued behind it.
      await reader.client.end().catch(() => undefined);
      await Promise.allSettled(pending);
      await Promise.all([dropper, queued1, queued2].map((s) => s.client.end().catch(() => undefined)));
    }
  });

  it('names the session whose snapshot holds the xmin horizon; resolves once it ends', async () => {
    const holder = await openSession(server);
    try {
      await holder.client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.client.query('SELECT current_user');
      await consumeXids(server, WARN_AGE_XIDS + 500);

      await waitUntil(() => alert('xmin-horizon-held').length > 0, FIRE_WAIT_MS, 'the xmin-horizon-held alert');
      const [fired] = alert('xmin-horizon-held');
      expect(fired?.summary).toMatch(new RegExp(
        `^xmin horizon is [\\d,]+ XIDs old, held by session pid ${holder.pid} \\(postgres@postgres, idle in transaction\\) ` +
        'with a transaction open for \\d+ s, last query: SELECT current_user; vacuum cannot remove rows deleted since, in database postgres$',
      ));
      expect(fired?.severity).toBe('warning');
      expect(JSON.parse(fired!.labels)).toEqual({ kind: 'backend', scope: 'database' });
      const facts = JSON.parse(fired!.evidence).facts;
      expect(facts).toMatchObject({ holder_kind: 'backend', holder_pid: String(holder.pid), holders_over_threshold: 1 });
      expect(facts.age_xids).toBeGreaterThanOrEqual(WARN_AGE_XIDS);

      // Another query in the same transaction: new labels (query, state) for the same holder.
      await holder.client.query('SELECT session_user');
      const summaries = new Set<string>();
      await waitUntil(() => {
        const summary = alert('xmin-horizon-held')[0]?.summary ?? '';
        summaries.add(summary);
        return summary.includes('last query: SELECT session_user;');
      }, FIRE_WAIT_MS, 'the alert to name the holder\'s newest query');
      for (const summary of summaries) expect(summary).not.toMatch(/more holders? past/);

      await holder.client.query('COMMIT');
      await waitUntil(() => alert('xmin-horizon-held')[0]?.state === 'resolved', RESOLVE_WAIT_MS, 'the alert to resolve once the snapshot is gone');
      expect(transitions(fired!.id)).toEqual(['firing', 'resolved']);
      expect(alert('xmin-horizon-held')).toHaveLength(1);
    } finally {
      await holder.client.end().catch(() => undefined);
    }
  });
});
