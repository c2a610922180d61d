/**
 * Scenario: a short, real incident provoked on a running server so that its log shows one
 * situation (autovacuum of a table with four indexes, a deadlock, a recovery conflict...).
 *
 * Scenarios are shared by scripts/record-log-fixtures.ts (which records golden log fixtures from
 * them) and test/integration/live-log-scenarios.test.ts (which reads the same log through the
 * pipeline live). They synchronise on log lines and catalog state with deadlines, never on sleeps.
 *
 * Glossary
 * - case: one fixture folder, `pg<major>-<format>-<scenario name>`.
 * - scenario log: the log files the server writes while one scenario runs; the runner switches
 *   log_filename so each scenario gets files of its own, written whole by the server.
 */
import type { PgServer, PgVersion } from '../pg-harness.js';
import type { Settings } from '../pg-server.js';
import type { LogWatcher } from './log-watcher.js';

export interface ScenarioContext {
  version: PgVersion;
  primary: PgServer;
  /** The primary's hot standby; only for scenarios with `logOf: 'standby'`. */
  standby: PgServer | null;
  /** The stderr file of this scenario's own log, on the server named by logOf. */
  log: LogWatcher;
}

export interface Scenario {
  /** The situation the log shows, kebab-case; the fixture folder names end with it. */
  name: string;
  /** What the scenario does, for case.json. */
  description: string;
  versions: readonly PgVersion[];
  /** Whose log holds the scenario (recovery conflicts are logged by the standby). */
  logOf: 'primary' | 'standby';
  /** A scenario logged by the primary that needs a hot standby too (logOf 'standby' always has one). */
  withStandby?: boolean;
  /** Applied with ALTER SYSTEM + reload on the logging server for the scenario only. */
  settings(version: PgVersion): Settings;
  /** SET commands its sessions issue (documented in case.json; the scenario issues them). */
  sessionSettings: Settings;
  run(context: ScenarioContext): Promise<void>;
}

export const ALL_VERSIONS: readonly PgVersion[] = [13, 14, 15, 16, 17, 18, 19];

/** The versions a scenario runs on: only 19 has parallel autovacuum and REPACK. */
export const PG19_ONLY: readonly PgVersion[] = [19];
