/**
 * checkpoints-too-frequent, live on a PostgreSQL 18 primary with max_wal_size = 32MB, seen by the
 * daemon's own machinery (log tailer, poll scheduler with every collector as a pg_monitor role,
 * store writer, rules engine writing alerts): a steady write load fills max_wal_size every second
 * or two, so the checkpointer logs `checkpoints are occurring too frequently (N seconds apart)`
 * again and again; the alert says so, sized from the sampled WAL rate; once the load stops it
 * resolves. Window and sustain shortened to seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 60_000;

describe('checkpoints-too-frequent on a live PostgreSQL 18 with max_wal_size = 32MB', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-checkpoints', settings: { max_wal_size: '32MB', min_wal_size: '32MB' } });
    await createMonitorRole(server);
    rig = await startLiveRules(server, { 'checkpoints-too-frequent': { sustainMs: 5_000, windowMs: 20_000 } });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('says checkpoints come too often under a steady load and to raise max_wal_size; resolves once the load stops', async () => {
    const alerts = () => rig.alerts('checkpoints-too-frequent');
    const { client } = await openSession(server);
    try {
      await client.query('CREATE TABLE ledger (id bigserial PRIMARY KEY, note text NOT NULL)');
      // About 8 MB of WAL a statement: a checkpoint requested every other one.
      const deadline = Date.now() + WAIT_MS;
      while (alerts().length === 0 && Date.now() < deadline) {
        await client.query("INSERT INTO ledger (note) SELECT repeat('x', 200) FROM generate_series(1, 30000)");
      }
    } finally {
      await client.end();
    }
    const [fired] = alerts();
    expect(fired, 'the checkpoints-too-frequent alert').toBeDefined();
    expect(fired!.severity).toBe('warning');
    expect(fired!.summary).toMatch(new RegExp('^checkpoints on primary are occurring too frequently: \\d+ times since \\d\\d:\\d\\d:\\d\\d UTC, typically \\d+ s apart; ' +
      '\\d+ requested and \\d+ scheduled checkpoints in 20 s: WAL fills max_wal_size \\(32 MB\\) long before checkpoint_timeout; ' +
      'raise max_wal_size to about [\\d.]+ GB \\([\\d.]+ (kB|MB)/s of WAL over checkpoint_timeout 5 min, with room for checkpoint_completion_target\\)$'));

    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the load stopped');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });
});
