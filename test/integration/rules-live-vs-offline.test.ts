/**
 * Live and offline reach the same conclusion (issue #9): each recorded scenario of
 * test/helpers/scenarios runs on a real server while the daemon's own machinery watches it
 * (live-rules-rig.ts: the tailer reads the scenario's own log file from its first line, every
 * collector polls, the rules engine writes alerts), then `pgvigil analyze --rules --json` reads
 * the very file the server wrote. Both must name the same rule, databases, tables, pids and
 * cutoff XID; the live alert rests on log+samples where a collector adds to it, the offline one
 * on the log.
 *
 * The documented differences (docs/rules.md, "From the log alone") are asserted, not hidden:
 * - repack-holds-vacuum: offline the REPACK is "probably" the holder (seen in the log only);
 *   live its slot is sampled.
 * - server-crashed: exact from the log, no sample adds to it, so both rest on the log.
 * - repack-lost-at-swap: exact from the log; live cites the sampled run too (log+samples).
 *
 * Covered elsewhere, not repeated here: vacuum-held-back (the recorded holds last seconds, which
 * its defaults rightly let be, live and offline alike; vacuum-held-back-real-logs.test.ts reads
 * their scope with thresholds of seconds); parallel-autovacuum-starved (two starved runs, live and
 * offline: rules-parallel-autovacuum-starved-live.test.ts); a lock queue behind a DROP and a
 * standby conflict cancelling queries have no scenario driver whose log alone makes a rule fire
 * (the recorded recovery-conflict waits end within the 10 s replay-stalled needs; the DROP queue
 * is driven inline in rules-locks-and-horizon-live.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basisOf, type Evidence } from '../../src/domain/index.js';
import type { OfflineAlert } from '../../src/report/alerts-text.js';
import type { AnalyzeReport } from '../../src/report/analyze-text.js';
import { analyzeCaptured } from '../helpers/analyze-io.js';
import { startPrimary, startStandby, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { runScenarioInOwnLog, scenarioByName, scenarioServerSettings } from '../helpers/scenarios/index.js';
import { describeWithTool } from '../helpers/tools.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type StoredAlert } from './live-rules-rig.js';

const LIVE_ALERT_WAIT_MS = 20_000;

interface LiveOfflineCase {
  scenario: string;
  rule: string;
  /** Facts both alerts must state alike: the databases, tables, pids, cutoff XID. */
  sameFacts: readonly string[];
  liveBasis: 'log' | 'log+samples';
  /** What only one side can say, per docs/rules.md. */
  documentedDifference(live: { summary: string; facts: Record<string, unknown> }, offline: OfflineAlert): void;
}

const CASES: Record<string, LiveOfflineCase> = {
  'backend-killed-crash-restart': {
    scenario: 'backend-killed-crash-restart', rule: 'server-crashed', sameFacts: ['pid', 'signal', 'process_type', 'statement'], liveBasis: 'log',
    documentedDifference: (live, offline) => {
      // Known gap, intermittent (seen on 15 and 18, live and offline alike): the summary may end
      // with "and is reinitializing" although the log goes on to "ready to accept connections"
      // (the summary of the evaluation that fired is kept when the ready line comes a slot later).
      // What was killed must read the same.
      const killed = (summary: string) => summary.slice(0, summary.indexOf('; the server'));
      expect(killed(live.summary)).toBe(killed(offline.summary));
    },
  },
  'repack-concurrently-holds-back-vacuum': {
    scenario: 'repack-concurrently-holds-back-vacuum', rule: 'repack-holds-vacuum',
    sameFacts: ['repack_pid', 'removable_cutoff_xid', 'held_databases', 'held_tables'], liveBasis: 'log+samples',
    documentedDifference: (live, offline) => {
      // The scenario's own log ends before the REPACK does; live sees it end (its slot goes).
      expect(offline.summary).toContain('REPACK still running at the end of the log');
      expect(offline.evidence.facts.seen_in).toBe('log');
      expect(live.facts.seen_in).toBe('samples');
    },
  },
  'repack-lock-timeout-at-swap': {
    scenario: 'repack-lock-timeout-at-swap', rule: 'repack-lost-at-swap', sameFacts: ['repack_pid', 'cause', 'blocking_pids', 'statement'], liveBasis: 'log+samples',
    // Exact from the log: the same words both ways.
    documentedDifference: (live, offline) => expect(live.summary).toBe(offline.summary),
  },
};

/** Per version, in the order one server runs them (the crash restarts it: last). */
const PLAN: Record<15 | 18 | 19, readonly string[]> = {
  15: ['backend-killed-crash-restart'],
  18: ['backend-killed-crash-restart'],
  19: ['repack-concurrently-holds-back-vacuum', 'repack-lock-timeout-at-swap'],
};

const factsOf = (alert: StoredAlert) => (JSON.parse(alert.evidence) as Evidence).facts as Record<string, unknown>;

async function offlineAlerts(file: string): Promise<OfflineAlert[]> {
  const { code, stdout, stderr } = await analyzeCaptured([file], { rules: true, json: true });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return (JSON.parse(stdout) as AnalyzeReport).alerts!;
}

function liveVsOfflineSuite(version: 15 | 18 | 19): void {
  let primary: PgServer;

  beforeAll(async () => {
    primary = await startPrimary({ version: version as PgVersion, settings: scenarioServerSettings(version as PgVersion), name: `live-vs-offline-${version}` });
    await createMonitorRole(primary);
  }, 60_000);

  afterAll(async () => {
    await primary?.destroy();
  });

  for (const name of PLAN[version]) {
    const c = CASES[name]!;
    it(`${c.scenario}: ${c.rule} live (basis ${c.liveBasis}) and offline (basis log) name the same facts`, async () => {
      const scenario = scenarioByName(c.scenario);
      const standby = scenario.logOf === 'standby' || scenario.withStandby ? await startStandby(primary, { name: `live-vs-offline-${version}-standby` }) : null;
      const rig = await startLiveRules(primary, {}, 'primary', { logFilename: `${scenario.name}.log` });
      try {
        const log = await runScenarioInOwnLog(scenario, { primary, standby });
        const offline = await offlineAlerts(log.files.stderr!);
        expect(offline.map((a) => a.rule)).toEqual([c.rule]);
        const [fromLog] = offline as [OfflineAlert];
        expect(fromLog.basis).toBe('log');

        // Live: the alert, and (when the log shows its end) its resolution, within the hold-down.
        const settled = () => {
          const alerts = rig.alerts(c.rule);
          return alerts.length > 0 && (fromLog.ended_at === null || alerts.every((a) => a.state === 'resolved'));
        };
        await waitUntil(async () => settled(), LIVE_ALERT_WAIT_MS, `the live ${c.rule} alert${fromLog.ended_at === null ? '' : ', resolved'}`);
        const live = rig.alerts(c.rule);
        expect(live).toHaveLength(1);
        const [fired] = live as [StoredAlert];
        const facts = factsOf(fired);
        const both = JSON.stringify({ live: { state: fired.state, summary: fired.summary, facts }, offline: { ...fromLog, evidence: { facts: fromLog.evidence.facts } } }, null, 1);
        expect(basisOf(JSON.parse(fired.evidence) as Evidence), both).toBe(c.liveBasis);
        expect(fired.severity).toBe(fromLog.severity);
        const pick = (from: Record<string, unknown>) => Object.fromEntries(c.sameFacts.map((k) => [k, from[k]]));
        expect(pick(fromLog.evidence.facts), both).toEqual(Object.fromEntries(c.sameFacts.map((k) => [k, expect.anything()])));
        expect(pick(facts), both).toEqual(pick(fromLog.evidence.facts));
        try {
          c.documentedDifference({ summary: fired.summary, facts }, fromLog);
        } catch (error) {
          throw new Error(`${(error as Error).message}\n${both}`, { cause: error });
        }
      } finally {
        await rig.stop();
        await standby?.destroy();
      }
    }, 90_000);
  }
}

describeWithTool('pg15', 'PG 15: rules live and offline over the same scenario log', () => liveVsOfflineSuite(15));
describe('PG 18: rules live and offline over the same scenario log', () => liveVsOfflineSuite(18));
describeWithTool('pg19', 'PG 19: rules live and offline over the same scenario log', () => liveVsOfflineSuite(19));
