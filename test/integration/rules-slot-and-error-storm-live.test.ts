/**
 * Two incidents live on one PostgreSQL 18 primary, seen by the daemon's own machinery (log tailer,
 * poll scheduler with every collector as a pg_monitor role, store writer, rules engine writing
 * alerts); the tests wait only on the alerts table, with deadlines.
 *
 * - replication-slot-danger: a logical slot nobody consumes while WAL is written and switched: it
 *   retains the WAL (threshold lowered to 16 MB); dropping the slot resolves the alert.
 * - error-storm: one session holds an ACCESS EXCLUSIVE lock, another runs 25 updates with
 *   lock_timeout = 20ms: 25 `canceling statement due to lock timeout` lines become one alert
 *   naming the table; it resolves when the (shortened) window has no storm left.
 * replay-delayed-on-purpose and standby-disconnected are live in rules-delayed-standby-live.test.ts.
 * The other new rules need hours (autovacuum history, wraparound ages) or a dead pg_repack client
 * (the extension is not installed here): table-driven only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole, openSession } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 20_000;
const STORM_WINDOW_MS = 8_000;
const SLOT = 'pgvigil_unread';

describe('rules on a live PostgreSQL 18: a slot retaining WAL, a lock-timeout storm', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-slot-storm', settings: { wal_level: 'logical' } });
    await createMonitorRole(server);
    rig = await startLiveRules(server, {
      'replication-slot-danger': { retainedWarnBytes: 16 * 1024 ** 2, minInactiveMs: 1_000 },
      'error-storm': { windowMs: STORM_WINDOW_MS },
    });
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  const alerts = (ruleId: string) => rig.alerts(ruleId);
  const transitions = (id: number) => rig.transitions(id);

  it('names an inactive logical slot retaining WAL and how much it grew; resolves once the slot is dropped', async () => {
    await server.query(`SELECT pg_create_logical_replication_slot('${SLOT}', 'pgoutput')`);
    await server.query('CREATE TABLE slot_fill (note text NOT NULL)');
    for (let segment = 0; segment < 2; segment++) {
      await server.query("INSERT INTO slot_fill SELECT repeat('x', 100) FROM generate_series(1, 10000)");
      await server.query('SELECT pg_switch_wal()');
    }
    await waitUntil(() => alerts('replication-slot-danger').length > 0, WAIT_MS, 'the replication-slot-danger alert');
    const [fired] = alerts('replication-slot-danger');
    // PG 17+: inactive_since says how long.
    expect(fired?.summary).toMatch(new RegExp(
      `^replication slot ${SLOT} \\(logical, owner logical_subscription\\): inactive for \\d+ s, retaining \\d+ MB of WAL( \\(\\+[\\d.]+ (bytes|kB|MB) in \\d+ s\\))?: ` +
      'pg_wal grows until its consumer returns or the slot is dropped$',
    ));
    expect(fired?.severity).toBe('warning');
    expect(JSON.parse(fired!.evidence).series.map((s: { name: string }) => s.name))
      .toEqual(['pg_replication_slots_retained_wal_bytes', 'pg_replication_slots_active']);

    await server.query(`SELECT pg_drop_replication_slot('${SLOT}')`);
    await waitUntil(() => alerts('replication-slot-danger')[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the slot is gone');
    expect(transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });

  it('turns 25 lock timeouts on one table into one alert naming it; resolves when the storm is over', async () => {
    await server.query('CREATE TABLE orders (id int PRIMARY KEY, n int NOT NULL)');
    await server.query('INSERT INTO orders VALUES (1, 0)');
    const [holder, victim] = await Promise.all([openSession(server), openSession(server)]);
    try {
      await holder.client.query('BEGIN');
      await holder.client.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE');
      await victim.client.query("SET lock_timeout = '20ms'");
      const outcomes: string[] = [];
      for (let i = 0; i < 25; i++) {
        outcomes.push(await victim.client.query('UPDATE orders SET n = n + 1 WHERE id = 1').then(() => 'ran', (error: Error) => error.message));
      }
      expect(new Set(outcomes)).toEqual(new Set(['canceling statement due to lock timeout']));
      await holder.client.query('COMMIT');

      await waitUntil(() => alerts('error-storm')[0]?.summary.startsWith('25 ') === true, WAIT_MS, 'the error-storm alert counting all 25');
      const [fired] = alerts('error-storm');
      expect(fired?.summary).toBe('25 statements cancelled on primary in the last 8 s (25 lock timeouts), usually 0 per 8 s over the previous 3 h; ' +
        'relations: orders 25; databases: postgres 25; causes in lock-timeouts');
      expect(JSON.parse(fired!.evidence).eventIds).toHaveLength(20);
      expect(alerts('error-storm')).toHaveLength(1);
      // Each cause on its own, as info: one alert for the table, however many timeouts.
      expect(alerts('lock-timeouts').map((a) => [a.severity, a.state])).toEqual([['info', 'firing']]);
      expect(alerts('lock-timeouts')[0]!.summary).toMatch(/^\d+ statements? cancelled by lock_timeout on postgres\.orders \(primary\) since \d\d:\d\d:\d\d UTC/);

      await waitUntil(() => alerts('error-storm')[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the window holds no storm');
      expect(transitions(fired!.id)).toEqual(['firing', 'resolved']);
    } finally {
      await Promise.all([holder, victim].map((s) => s.client.end().catch(() => undefined)));
    }
  });
});
