/**
 * Sessions that hurt, live on a PostgreSQL 18 primary with max_connections = 20 (17 slots for
 * ordinary roles), seen by the daemon's own machinery (log tailer, poll scheduler with every
 * collector as a pg_monitor role, store writer, rules engine writing alerts):
 *
 * - idle-in-transaction-too-long: a `batch` session updates a row and goes idle in its
 *   transaction; the alert names its database, user and application, never its pid; COMMIT
 *   resolves it.
 * - connections-near-max: `batch` opens connections until one ordinary slot is left; the alert
 *   names `batch` as the largest holder; closing them resolves it.
 *
 * Thresholds shortened to seconds; the rest at their defaults.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 30_000;
const APP = 'batch';

describe('session rules on a live PostgreSQL 18 with max_connections = 20', () => {
  let server: PgServer;
  let rig: LiveRules;
  const sessions: pg.Client[] = [];

  const connect = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: server.dsn('postgres'), application_name: APP });
    client.on('error', () => undefined);
    await client.connect();
    sessions.push(client);
    return client;
  };

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-sessions', settings: { max_connections: 20 } });
    await createMonitorRole(server);
    await server.query('CREATE TABLE accounts (id int PRIMARY KEY, balance int NOT NULL)');
    await server.query('INSERT INTO accounts VALUES (1, 100)');
    rig = await startLiveRules(server, {
      'idle-in-transaction-too-long': { minIdleMs: 2_000 },
      // 85%: one of pgvigil's own connections closing meanwhile (15 of 17) still counts as near.
      'connections-near-max': { sustainMs: 2_000, warnFraction: 0.85 },
    });
  });

  afterAll(async () => {
    await Promise.all(sessions.map((c) => c.end().catch(() => undefined)));
    await rig?.stop();
    await destroyAllServers();
  });

  it('names who is idle in a transaction by database, user and application; resolves at COMMIT', async () => {
    const client = await connect();
    const [{ user }] = (await client.query<{ user: string }>('SELECT current_user AS user')).rows as [{ user: string }];
    await client.query('BEGIN');
    await client.query('UPDATE accounts SET balance = balance - 1 WHERE id = 1');
    const alerts = () => rig.alerts('idle-in-transaction-too-long');
    await waitUntil(() => alerts().length > 0, WAIT_MS, 'the idle-in-transaction-too-long alert');
    const [fired] = alerts();
    expect(fired?.severity).toBe('warning');
    expect(fired?.summary).toMatch(new RegExp(`^1 session of user ${user} \\(application ${APP}\\) in database postgres on primary is idle in a transaction, ` +
      'for \\d+ s: it keeps every lock taken, so DDL on those tables waits and queues everyone behind it; idle_in_transaction_session_timeout is off$'));
    expect(JSON.parse(fired!.labels)).toEqual({ datname: 'postgres', usename: user, application_name: APP });

    await client.query('COMMIT');
    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the transaction ended');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });

  it('names the application holding the slots when one ordinary slot is left; resolves once they close', async () => {
    // Asked from a session of its own: the harness's queries come and go on connections of their own.
    const first = await connect();
    const available = async () => (await first.query<{ n: number }>(`SELECT current_setting('max_connections')::int
      - current_setting('superuser_reserved_connections')::int - current_setting('reserved_connections')::int
      - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int AS n`)).rows[0]!.n;
    while (await available() > 1) await connect();
    const alerts = () => rig.alerts('connections-near-max');
    await waitUntil(() => alerts().length > 0, WAIT_MS, 'the connections-near-max alert');
    const [fired] = alerts();
    expect(fired?.severity).toBe('warning');
    expect(fired?.summary).toMatch(new RegExp('^1[5-7] of 17 connection slots for ordinary roles on primary in use \\(\\d+%\\) for \\d+ s ' +
      `\\(max_connections 20, 3 reserved\\); most by user \\(application\\): \\d+ \\S+ \\(${APP}\\)`));

    await Promise.all(sessions.splice(0).map((c) => c.end()));
    await waitUntil(() => alerts()[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once the connections closed');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });
});
