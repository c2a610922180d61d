/**
 * Records golden log fixtures from real PostgreSQL servers (15, 18 and 19, whichever this machine
 * has): one server per version, every scenario of test/helpers/scenarios in turn, each writing its
 * own log files in stderr, csvlog and jsonlog at once. Each file is copied byte for byte into
 * test/fixtures/logs/pg<major>-<format>-<scenario>/ beside a case.json saying where it came from.
 *
 *   npm run fixtures:record -- [--versions 15,18,19] [--scenarios deadlock,statement-timeout]
 *
 * Then regenerate the goldens and review them as a diff:
 *   UPDATE_GOLDEN=1 npx vitest run test/integration/golden-logs.test.ts && git diff test/fixtures/logs
 *
 * An existing expected.ndjson is left alone, so a re-recorded log fails the golden test until the
 * new events are reviewed and written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { availableVersions, destroyAllServers, startPrimary, startStandby, type PgVersion } from '../test/helpers/pg-harness.js';
import { caseName, FIXTURES_DIR, writeCase } from '../test/helpers/scenarios/fixture-case.js';
import { runScenarioInOwnLog, SCENARIOS, scenarioByName, scenarioServerSettings, type LogFormat, type Scenario, type ScenarioLog } from '../test/helpers/scenarios/index.js';

const MAX_FIXTURE_BYTES = 200 * 1024;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      versions: { type: 'string' },
      scenarios: { type: 'string' },
      out: { type: 'string', default: FIXTURES_DIR },
    },
  });
  const available = availableVersions();
  const versions = values.versions ? values.versions.split(',').map((text) => Number(text) as PgVersion) : available;
  for (const version of versions) {
    if (!available.includes(version)) throw new Error(`PostgreSQL ${version} is not available here (available: ${available.join(', ')})`);
  }
  const scenarios = values.scenarios ? values.scenarios.split(',').map(scenarioByName) : [...SCENARIOS];
  const outDir = values.out ?? FIXTURES_DIR;
  try {
    for (const version of versions) {
      const forVersion = scenarios.filter((scenario) => scenario.versions.includes(version));
      if (forVersion.length > 0) await recordVersion(version, forVersion, outDir);
    }
  } finally {
    await destroyAllServers();
  }
}

async function recordVersion(version: PgVersion, scenarios: Scenario[], outDir: string): Promise<void> {
  const primary = await startPrimary({ version, settings: scenarioServerSettings(version), name: 'fixtures' });
  const [identity] = await primary.query<{ server_version: string; version_string: string }>(
    "SELECT current_setting('server_version') AS server_version, version() AS version_string",
  );
  if (!identity) throw new Error(`PG ${version}: version() returned no row`);
  console.log(`PG ${version}: ${identity.version_string}`);
  for (const scenario of scenarios) {
    const started = Date.now();
    const standby = scenario.logOf === 'standby' || scenario.withStandby ? await startStandby(primary, { name: 'fixtures-standby' }) : null;
    try {
      const log = await runScenarioInOwnLog(scenario, { primary, standby });
      writeCases(version, identity, scenario, log, outDir);
    } finally {
      // A standby left running would add its walreceiver's lines to later scenarios (the crash).
      await standby?.destroy();
    }
    console.log(`  ${scenario.name}: ${Date.now() - started} ms`);
  }
  await primary.destroy();
}

function writeCases(
  version: PgVersion,
  identity: { server_version: string; version_string: string },
  scenario: Scenario,
  log: ScenarioLog,
  outDir: string,
): void {
  const recordedAt = new Date().toISOString().slice(0, 10);
  for (const [format, file] of Object.entries(log.files) as [LogFormat, string][]) {
    const caseDir = path.join(outDir, caseName(version, format, scenario.name));
    fs.mkdirSync(caseDir, { recursive: true });
    const logFile = path.basename(file);
    fs.copyFileSync(file, path.join(caseDir, logFile));
    const bytes = fs.statSync(file).size;
    if (bytes > MAX_FIXTURE_BYTES) console.warn(`  ${caseDir}: ${bytes} bytes, over the ${MAX_FIXTURE_BYTES}-byte budget: shorten the scenario`);
    writeCase(caseDir, {
      provenance: 'recorded',
      major: version,
      server_version: identity.server_version,
      version_string: identity.version_string,
      format,
      log_file: logFile,
      log_line_prefix: requiredSetting(log, 'log_line_prefix'),
      log_timezone: requiredSetting(log, 'log_timezone'),
      scenario: scenario.name,
      description: scenario.description,
      logged_by: scenario.logOf,
      settings: log.settings,
      session_settings: Object.fromEntries(Object.entries(scenario.sessionSettings).map(([name, value]) => [name, String(value)])),
      recorded_at: recordedAt,
      recorded_with: 'scripts/record-log-fixtures.ts',
    });
  }
}

function requiredSetting(log: ScenarioLog, name: string): string {
  const value = log.settings[name];
  if (value === undefined) throw new Error(`scenario ${log.scenario} on PG ${log.server.version}: ${name} is not set in the configuration`);
  return value;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
