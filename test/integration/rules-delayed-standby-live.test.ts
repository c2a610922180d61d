/**
 * Two standby rules live on a PostgreSQL 18 standby, watched alone as target standby1:
 * - replay-delayed-on-purpose: with recovery_min_apply_delay = 1h, WAL written on the primary
 *   arrives and waits, and the rule says so at info level; setting the delay to 0 (reload) lets
 *   replay catch up, and the alert resolves.
 * - standby-disconnected: the primary stops, the walreceiver goes away; the primary starts again,
 *   the walreceiver reconnects (wal_retrieve_retry_interval), and the alert resolves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const WAIT_MS = 20_000;
// The primary restarts under a loaded CI machine, then the walreceiver retries every 5 s.
const RECONNECT_WAIT_MS = 60_000;

describe('rules on a live PostgreSQL 18 standby: replay delayed on purpose, its primary gone', () => {
  let primary: PgServer;
  let standby: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, name: 'rules-delayed' });
    // Before the standby is built: with replay an hour late, it would not see the role otherwise.
    await createMonitorRole(primary);
    standby = await startStandby(primary, { name: 'rules_delayed_standby', settings: { recovery_min_apply_delay: '1h' } });
    rig = await startLiveRules(standby, { 'standby-disconnected': { sustainMs: 1_000 } }, 'standby1');
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('says replay is late on purpose (info) while WAL waits; resolves once the delay is lifted', async () => {
    // The summary names the setting once pg_settings has been sampled; before that, the wait event
    // alone proves the delay (a different summary, covered by the rule's own test).
    await waitUntil(() => rig.db.prepare(`SELECT count(*) FROM samples JOIN series ON series.id = series_id
      WHERE series.name = 'pg_settings_recovery_min_apply_delay_seconds'`).pluck().get() as number > 0,
    WAIT_MS, 'a sample of recovery_min_apply_delay');
    await primary.query('CREATE TABLE delayed_notes (id int PRIMARY KEY)');
    await primary.query('INSERT INTO delayed_notes SELECT generate_series(1, 1000)');

    await waitUntil(() => rig.alerts('replay-delayed-on-purpose').length > 0, WAIT_MS, 'the replay-delayed-on-purpose alert');
    const [fired] = rig.alerts('replay-delayed-on-purpose');
    expect(fired?.severity).toBe('info');
    expect(fired?.summary).toMatch(
      /^standby standby1 replays WAL late on purpose \(recovery_min_apply_delay = 60 min\): (replay \d+ (s|min) behind, )?[\d.]+ (bytes|kB|MB) received and waiting; expected, not a stall$/,
    );
    const cited = JSON.parse(fired!.evidence).series.map((s: { name: string; labels: Record<string, string> }) => s.name);
    expect(cited).toEqual(expect.arrayContaining(['pg_settings_recovery_min_apply_delay_seconds', 'pg_standby_replay_pending_bytes']));

    await standby.query('ALTER SYSTEM SET recovery_min_apply_delay = 0');
    await standby.query('SELECT pg_reload_conf()');
    await waitUntil(() => rig.alerts('replay-delayed-on-purpose')[0]?.state === 'resolved', WAIT_MS, 'the alert to resolve once replay caught up');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });

  it('says the standby lost its walreceiver when the primary stops; resolves once it streams again', async () => {
    await primary.stop('fast');
    try {
      await waitUntil(() => rig.alerts('standby-disconnected').length > 0, WAIT_MS, 'the standby-disconnected alert');
      const [fired] = rig.alerts('standby-disconnected');
      expect(fired?.severity).toBe('error');
      expect(fired?.summary).toMatch(
        /^standby standby1 has no walreceiver for \d+ s \(it streamed from \S+:\d+ until \d\d:\d\d:\d\d UTC\); no WAL has arrived since: it replays only what it already has$/,
      );
    } finally {
      await primary.start();
    }
    const [fired] = rig.alerts('standby-disconnected');
    await waitUntil(() => rig.alerts('standby-disconnected')[0]?.state === 'resolved', RECONNECT_WAIT_MS, 'the alert to resolve once the walreceiver streams again');
    expect(rig.transitions(fired!.id)).toEqual(['firing', 'resolved']);
  });
});
