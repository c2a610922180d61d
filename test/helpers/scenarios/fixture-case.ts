/**
 * A golden log fixture: one folder per case under test/fixtures/logs, named
 * `pg<major>-<format>-<situation>`, holding the raw log file as the server wrote it, `case.json`
 * (its provenance: server version, the settings it ran with, the scenario, when) and
 * `expected.ndjson` (the events the pipeline must produce from it).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LogFormat } from './scenario-log.js';

export const FIXTURES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/logs');
export const CASE_FILE = 'case.json';
export const EXPECTED_FILE = 'expected.ndjson';

export interface FixtureCase {
  /** "recorded": written by a real server; "synthetic": assembled from documented format strings. */
  provenance: 'recorded' | 'synthetic';
  /** For synthetic cases: where the text comes from. */
  synthetic_source?: string;
  major: number;
  /** server_version, e.g. "18.4" or "19rc1"; null for synthetic cases. */
  server_version: string | null;
  /** SELECT version(); null for synthetic cases. */
  version_string: string | null;
  format: LogFormat;
  /** The log file in the folder. */
  log_file: string;
  /** log_line_prefix the server used (what a stderr parser must be told). */
  log_line_prefix: string;
  log_timezone: string;
  scenario: string;
  description: string;
  /** Which server of the scenario wrote the log. */
  logged_by: 'primary' | 'standby';
  /** Every setting that came from the configuration while the scenario ran (pg_settings, source = configuration file). */
  settings: Record<string, string>;
  /** SET commands the scenario's sessions issued. */
  session_settings: Record<string, string>;
  /** UTC date of the recording (YYYY-MM-DD). */
  recorded_at: string;
  recorded_with: string;
}

export function caseName(major: number, format: LogFormat, scenario: string): string {
  return `pg${major}-${format}-${scenario}`;
}

/** Folders under FIXTURES_DIR that hold a case.json, sorted by name. */
export function listCases(root = FIXTURES_DIR): string[] {
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, entry.name, CASE_FILE)))
    .map((entry) => entry.name)
    .sort();
}

export function readCase(caseDir: string): FixtureCase {
  const file = path.join(caseDir, CASE_FILE);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as FixtureCase;
  for (const key of ['major', 'format', 'log_file', 'log_line_prefix', 'log_timezone', 'scenario'] as const) {
    if (parsed[key] === undefined) throw new Error(`${file}: missing "${key}"`);
  }
  return parsed;
}

export function writeCase(caseDir: string, fixtureCase: FixtureCase): void {
  fs.mkdirSync(caseDir, { recursive: true });
  fs.writeFileSync(path.join(caseDir, CASE_FILE), `${JSON.stringify(fixtureCase, null, 2)}\n`);
}
