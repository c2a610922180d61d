/**
 * Issue 23: a normal day pages nobody. A compressed day of healthy operations (normal-day.ts) on
 * a PG 15 and a PG 18 primary with a streaming standby each, both days at once (the CI budget),
 * watched by pgvigil's machinery with every rule at its default thresholds: no warning, error or
 * critical alert may fire; info is allowed. A rule that pages here pages real users every day.
 * Each day is watched twice (watchDay): one pgvigil over both servers, and the primary's sidecar.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { destroyAllServers, type PgVersion } from '../helpers/pg-harness.js';
import { requireTool } from '../helpers/tools.js';
import { COMPRESSED_DAY, endDay, pagingAlerts, runDay, setUpDay, watchDay, type DayLog, type DayServers, type DayWatchers } from './normal-day.js';

const VERSIONS: PgVersion[] = [15, 18];
const DAY_TIMEOUT_MS = 300_000;
// Stopping four servers and their watchers after a 1 GB load: minutes on a loaded 2-core CI machine.
const END_TIMEOUT_MS = 240_000;

interface Watched {
  servers: DayServers;
  rigs: DayWatchers;
  log: DayLog;
}

describe('a normal day on PG 15 and PG 18 (primary + standby) pages nobody at the default thresholds', () => {
  const days = new Map<PgVersion, Watched>();

  beforeAll(async () => {
    requireTool('pg15');
    await Promise.all(VERSIONS.map(async (version) => {
      const servers = await setUpDay(version);
      const rigs = await watchDay(servers);
      const log = await runDay(servers, COMPRESSED_DAY);
      days.set(version, { servers, rigs, log });
    }));
  }, DAY_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all([...days.values()].map(async ({ servers, rigs }) => {
      for (const rig of Object.values(rigs)) await rig.stop();
      await endDay(servers);
      // The day is over: no shutdown checkpoint of what the bulk load wrote (slow on a busy machine).
      await Promise.all([servers.standby.stop('immediate'), servers.primary.stop('immediate')]);
    }));
    await destroyAllServers();
  }, END_TIMEOUT_MS);

  for (const version of VERSIONS) {
    it(`PG ${version}: the day happened as planned`, () => {
      const day = days.get(version)!;
      expect(day.log.pgbenchTransactions).toBeGreaterThan(COMPRESSED_DAY.busyMs / 1000 * 10);
      expect(day.log.statementTimeouts).toBeGreaterThanOrEqual(2);
      expect(day.log.etlRuns).toBeGreaterThanOrEqual(5);
      expect(day.log.reports).toBeGreaterThanOrEqual(3);
      const view = new StoreRuleViewSource(day.rigs.cluster.db, { targets: [{ name: 'primary', cluster: null }, { name: 'standby', cluster: null }] })
        .at(Date.now());
      const kinds = Object.fromEntries(view.series('pg_stat_replication_info', { sinceMs: 0, target: 'primary' })
        .map((s) => [s.labels.application_name, s.labels.kind]));
      expect(kinds).toEqual({ pg_basebackup: 'physical', pg_receivewal: 'physical', facts_sub: 'logical', walreceiver: 'physical' });
      const replayed = (name: string) => view.series('pg_stat_replication_replay_lsn_bytes', { sinceMs: 0, target: 'primary', labels: { application_name: name } })
        .some((s) => s.points.some((p) => p.value !== null));
      expect([replayed('walreceiver'), replayed('pg_receivewal')]).toEqual([true, false]);
      // Several info series when a describing label changed over the day; synced on each.
      const synced = view.series('pg_replication_slots_info', { sinceMs: 0, target: 'standby', labels: { slot_name: 'facts_sub' } }).map((s) => s.labels.synced);
      expect([...new Set(synced)]).toEqual(version >= 17 ? ['true'] : []);
    });

    for (const deployment of ['cluster', 'primarySidecar'] as const) {
      it(`PG ${version}, ${deployment === 'cluster' ? 'one pgvigil over both servers' : 'the primary\'s sidecar'}: no warning, error or critical alert`, () => {
        expect(pagingAlerts(days.get(version)!.rigs[deployment].db)).toEqual([]);
      });
    }
  }
});
