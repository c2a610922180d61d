/**
 * Collectors against a real PostgreSQL 19 primary and streaming standby (collectors-scenarios.ts),
 * plus what only 19 has: REPACK (CONCURRENTLY) with its temporary slot and decoding worker, and
 * pg_stat_recovery.
 */
import { expect, it } from 'vitest';
import { waitUntil } from '../helpers/pg-server.js';
import { describeWithTool } from '../helpers/tools.js';
import { openSession, WAIT_MS } from './collectors-rig.js';
import { collectorScenarios } from './collectors-scenarios.js';

describeWithTool('pg19', 'collectors against PostgreSQL 19 (primary and standby)', () => collectorScenarios(19, (ctx) => {
  it('recognises a REPACK (CONCURRENTLY) by its slot, decoding worker, progress phase and final lock wait', async () => {
    const { primary, poller } = ctx();
    await primary.query('CREATE TABLE repack_me (id int PRIMARY KEY, amount int)', [], 'shop');
    await primary.query('INSERT INTO repack_me SELECT g, g FROM generate_series(1, 20000) g', [], 'shop');
    // A reader keeps ACCESS SHARE: REPACK copies the table, then waits in catch-up for its final
    // ACCESS EXCLUSIVE lock until the reader commits (pg-messages.md §13.6).
    const reader = await openSession(primary, 'shop');
    await reader.client.query('BEGIN');
    await reader.client.query('SELECT count(*) FROM repack_me');
    const repacker = await openSession(primary, 'shop');
    const repack = repacker.client.query('REPACK (CONCURRENTLY) repack_me');
    const session = String(repacker.pid);
    try {
      const slot = await poller.waitForSample('pg_replication_slots_info', { owner: 'repack' }, (v) => v === 1, 'the REPACK slot');
      expect(slot.labels).toMatchObject({
        slot_type: 'logical', plugin: 'pgrepack', temporary: 'true', database: 'shop',
        owner_pid: session, owner_backend_type: 'REPACK decoding worker',
      });
      // The slot is named after the decoding worker, whose leader is the REPACK session.
      const worker = /^pg_repack_(\d+)$/.exec(slot.labels.slot_name ?? '')?.[1];
      expect(worker).toBeDefined();
      await poller.waitForSample('pg_maintenance_sessions_info', { kind: 'repack_decoding_worker', pid: worker, leader_pid: session },
        (v) => v === 1, 'the decoding worker led by the REPACK session');
      await poller.waitForSample('pg_maintenance_sessions_info', { kind: 'repack_concurrently', pid: session, datname: 'shop' },
        (v) => v === 1, 'the REPACK session');
      await poller.waitForSample('pg_stat_progress_repack_info', { relname: 'repack_me', command: 'REPACK', phase: 'catch-up', pid: session },
        (v) => v === 1, 'REPACK in catch-up');
      await poller.waitForSample('pg_lock_waits_session_wait_seconds',
        { pid: session, relname: 'repack_me', mode: 'AccessExclusiveLock', blocking_pids: String(reader.pid) },
        (v) => v !== null && v >= 0, 'REPACK waiting for its final lock, blocked by the reader');
      // xmin NULL, yet it holds every table in every database: recognised by what it is.
      expect(poller.latest('pg_replication_slots_xmin_age_xids', { owner: 'repack' })[0]?.value).toBeNull();
      await poller.waitForSample('pg_replication_slots_horizon_age_xids', { owner: 'repack' }, (v) => v !== null, 'the REPACK slot horizon age');
      await poller.waitForSample('pg_xmin_horizon_holder_age_xids', { kind: 'slot_catalog_xmin', owner: 'repack', scope: 'cluster', pid: session },
        (v) => v !== null, 'the REPACK slot as a cluster-wide horizon holder');
      expect(poller.latest('pg_maintenance_sessions_running', { kind: 'repack_concurrently' })[0]?.value).toBe(1);
    } finally {
      await reader.client.query('COMMIT');
      await repack.catch(() => undefined);
      await reader.client.end();
      await repacker.client.end();
    }
    await waitUntil(() => poller.latest('pg_replication_slots_info', { owner: 'repack' }).length === 0, WAIT_MS, 'the REPACK slot gone');
    await poller.waitForSample('pg_maintenance_sessions_running', { kind: 'repack_concurrently' }, (v) => v === 0, 'no REPACK running');
  });

  it('reads pg_stat_recovery on the standby', async () => {
    const { standbyPoller } = ctx();
    await standbyPoller.waitForSample('pg_stat_recovery_replay_end_lsn_bytes', {}, (v) => v !== null && v > 0, 'replay_end_lsn');
    // Not inside a record between polls of an idle standby.
    await standbyPoller.waitForSample('pg_stat_recovery_in_record_bytes', {}, (v) => v === 0, 'replay between records');
    expect(standbyPoller.latest('pg_stat_recovery_promote_triggered')[0]?.value).toBe(0);
  });
}));
