/**
 * Live: one real server per available version (15, 18, 19) provokes a handful of incidents, and
 * the log each one wrote (stderr, csvlog and jsonlog at once) goes through the real pipeline. The
 * assertions are structural (kinds and key fields; values differ from run to run) and shared with
 * the golden test (test/helpers/scenarios/expectations.ts).
 *
 * Kept short for the two-core budget: one server per version, scenarios that synchronise on log
 * lines, a few seconds each; the standby, REPACK and slot scenarios are covered by the recorded
 * fixtures only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrimary, type PgServer, type PgVersion } from '../helpers/pg-harness.js';
import { expectScenarioEvents } from '../helpers/scenarios/expectations.js';
import { runScenarioInOwnLog, scenarioByName, scenarioServerSettings, type LogFormat, type ScenarioLog } from '../helpers/scenarios/index.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';
import { describeWithTool } from '../helpers/tools.js';

const LIVE_SCENARIOS = [
  'autovacuum-4-indexes',
  'lock-waits-and-lock-timeout',
  'deadlock',
  'temp-files-sort',
  'checkpoint-requested',
  'parallel-autovacuum',
  // Last: it restarts the server.
  'backend-killed-crash-restart',
].map(scenarioByName);

const FORMATS: readonly LogFormat[] = ['stderr', 'csvlog', 'jsonlog'];

async function expectParsedInEveryFormat(log: ScenarioLog, version: PgVersion): Promise<void> {
  expect(Object.keys(log.files).sort()).toEqual([...FORMATS].sort());
  for (const format of FORMATS) {
    const file = log.files[format];
    if (!file) throw new Error(`${log.scenario}: no ${format} file`);
    const parsed = await parseLogFile(file, {
      format,
      prefix: log.settings.log_line_prefix ?? '',
      timezone: log.settings.log_timezone ?? 'UTC',
      target: `live-pg${version}`,
    });
    expect(parsed.stats.examples, `${format}: lines the framing could not read`).toEqual([]);
    try {
      expectScenarioEvents(log.scenario, parsed.events, version);
    } catch (error) {
      throw new Error(`${log.scenario} (PG ${version}, ${format}, ${file}): ${(error as Error).message}`, { cause: error });
    }
  }
}

function liveSuite(version: PgVersion): void {
  let primary: PgServer;

  beforeAll(async () => {
    primary = await startPrimary({ version, settings: scenarioServerSettings(version), name: 'live-log' });
  });

  afterAll(async () => {
    await primary?.destroy();
  });

  for (const scenario of LIVE_SCENARIOS.filter((candidate) => candidate.versions.includes(version))) {
    it(scenario.name, async () => {
      const log = await runScenarioInOwnLog(scenario, { primary, standby: null });
      await expectParsedInEveryFormat(log, version);
    });
  }
}

describeWithTool('pg15', 'PG 15: live scenario logs through the pipeline', () => liveSuite(15));
describe('PG 18: live scenario logs through the pipeline', () => liveSuite(18));
describeWithTool('pg19', 'PG 19: live scenario logs through the pipeline', () => liveSuite(19));
