/**
 * server-unreachable live: the daemon's poll scheduler watching a real PostgreSQL 18, which is
 * stopped (as a killed standby or a host reset looks from its own sidecar). Every reconnect
 * attempt is refused; after the (shortened) sustain time the rule says so, critical, naming the
 * refusal; the server starts again, the next probe succeeds, and the alert resolves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 30_000;

describe('rules on a live PostgreSQL 18 that stops: server-unreachable', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({ version: 18, name: 'rules-unreachable' });
    await createMonitorRole(server);
    rig = await startLiveRules(server, { 'server-unreachable': { sustainMs: 3_000 } }, 'db1');
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('says pgvigil cannot reach it, refused, while it is down; resolves once it is back', async () => {
    await waitUntil(() => rig.db.prepare("SELECT count(*) FROM samples JOIN series ON series.id = series_id WHERE name = 'pg_up' AND value = 1")
      .pluck().get() as number > 0, WAIT_MS, 'a successful probe');
    await server.stop('fast');
    try {
      await waitUntil(() => rig.alerts('server-unreachable').length > 0, WAIT_MS, 'the server-unreachable alert');
      const [fired] = rig.alerts('server-unreachable');
      expect(fired?.severity).toBe('critical');
      expect(fired?.summary).toMatch(
        /^pgvigil cannot reach db1 for \d+ s \(since \d\d:\d\d:\d\d UTC, last reached at \d\d:\d\d:\d\d UTC\): connection refused: the server is down or not listening$/,
      );
    } finally {
      await server.start();
    }
    const [fired] = rig.alerts('server-unreachable');
    await waitUntil(() => rig.alerts('server-unreachable')[0]?.state === 'resolved', 60_000, 'the alert to resolve once the server is back');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
    expect(rig.alerts('server-unreachable')).toHaveLength(1);
  });
});
