/**
 * Logs of servers whose lc_messages is not English (issue #16), from real PostgreSQL 15 servers
 * (Debian's, which ship the catalogs) in German, Japanese, Russian and Spanish: the scenarios of
 * the English golden fixtures run with the server writing its own language, and the events read
 * back through the shipped catalogs must
 * - show what the scenario provoked (the same expectations as the English fixtures),
 * - have, kind by kind, the same fields as the English run's events of the scenario
 *   (test/fixtures/logs/pg15-stderr-<scenario>/expected.ndjson), numbers and run-specific texts
 *   aside (xids, pids, timings, LSNs, a statement's text);
 * - carry `language` and keep the server's own text in `message`;
 * - be the same from stderr and csvlog.
 * Each run's logs are copied to test/fixtures/logs-lang/ (RECORD_LANG_FIXTURES=1) for review.
 *
 * The locales must exist (.ci/run generates them); without one a language is skipped with the
 * reason, and under CI (test/helpers/ci.ts) it fails.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { readShippedCatalogs } from '../../src/parsers/lang/catalog.js';
import { Translator } from '../../src/parsers/lang/translator.js';
import { isCi } from '../helpers/ci.js';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { expectScenarioEvents } from '../helpers/scenarios/expectations.js';
import { FIXTURES_DIR, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile, type ParsedLog } from '../helpers/scenarios/parse-log.js';
import { runScenarioInOwnLog, scenarioByName, scenarioServerSettings } from '../helpers/scenarios/index.js';
import { describeWithTool } from '../helpers/tools.js';

const LOCALES: Record<string, string> = { de: 'de_DE.UTF-8', ja: 'ja_JP.UTF-8', ru: 'ru_RU.UTF-8', es: 'es_ES.UTF-8' };
const SCENARIO_NAMES = [
  'autovacuum-held-back-by-snapshot', 'lock-waits-and-lock-timeout', 'deadlock', 'checkpoint-requested',
  'standby-recovery-conflicts', 'backend-killed-crash-restart',
];
const RECORD = process.env.RECORD_LANG_FIXTURES === '1';

const LANG_FIXTURES_DIR = path.resolve(FIXTURES_DIR, '../logs-lang');

function installedLocales(): Set<string> {
  try {
    return new Set(execFileSync('locale', ['-a'], { encoding: 'utf8' }).split('\n').map((l) => l.trim().toLowerCase().replace('utf-8', 'utf8')));
  } catch {
    return new Set();
  }
}

/**
 * The fields of an event that do not depend on the run: numbers become their type, and texts
 * that name run-specific things (statements' values, LSNs, times, paths) are dropped.
 */
function shapeOf(event: AnyLogEvent): string {
  // Which tables autovacuum visits, and how, depends on the server's history: of a report, only
  // which fields it has (and their types) is the same from run to run.
  const report = event.kind === 'autovacuum' || event.kind === 'autoanalyze';
  const details = JSON.parse(JSON.stringify(event.details), (key, value: unknown) => {
    if (typeof value === 'number') return '#';
    if (report && (typeof value === 'string' || typeof value === 'boolean')) return typeof value;
    if (['statement', 'query', 'context', 'detail', 'last_known_up', 'lsn', 'redo_lsn', 'description', 'virtual_transaction', 'redo_description'].includes(key)) return value === null ? null : 'text';
    return value;
  }) as Record<string, unknown>;
  return JSON.stringify({ kind: event.kind, level: event.level, sqlstate: event.sqlstate, details });
}

/**
 * PG 15 may end a session whose statement a recovery conflict cancelled with a FATAL for the same
 * conflict (a second, queued signal: recovery-conflicts.ts endCancelledTransaction). The English
 * recording did not catch that race; a run that does has this one event more, the cancel's twin.
 */
function terminatedAfterCancel(event: AnyLogEvent, events: AnyLogEvent[]): boolean {
  if (event.kind !== 'recovery_conflict' || event.level !== 'FATAL') return false;
  const reason = (event.details as { reason?: unknown }).reason;
  return events.some((e) => e.kind === 'recovery_conflict' && e.level === 'ERROR' && e.pid === event.pid && e.tsMs <= event.tsMs &&
    (e.details as { reason?: unknown }).reason === reason);
}

function englishShapes(scenario: string): Set<string> {
  const dir = path.join(FIXTURES_DIR, `pg15-stderr-${scenario}`);
  const lines = fs.readFileSync(path.join(dir, 'expected.ndjson'), 'utf8').split('\n').filter((l) => l !== '');
  return new Set(lines.map((line) => shapeOf(JSON.parse(line) as AnyLogEvent)));
}

describeWithTool('pg15', 'logs of PostgreSQL 15 servers writing another language', () => {
  const locales = installedLocales();
  afterAll(() => destroyAllServers(), 60_000);

  for (const [language, locale] of Object.entries(LOCALES)) {
    const present = locales.has(locale.toLowerCase().replace('utf-8', 'utf8'));
    const why = `locale ${locale} is not generated: add it to /etc/locale.gen and run locale-gen (.ci/run does)`;
    if (!present && isCi()) {
      it(`${language} (requires ${locale})`, () => expect.fail(why));
      continue;
    }
    (present ? describe : describe.skip)(`${language} (${locale})${present ? '' : ` [skipped: ${why}]`}`, () => {
      const translator = new Translator(readShippedCatalogs(language).filter((c) => c.major === 15));
      let primary: PgServer | null = null;

      for (const name of SCENARIO_NAMES) {
        it(name, async () => {
          const scenario = scenarioByName(name);
          primary ??= await startPrimary({ version: 15, name: `lang-${language}`, settings: { ...scenarioServerSettings(15), lc_messages: locale } });
          const standby = scenario.logOf === 'standby' || scenario.withStandby ? await startStandby(primary, { name: `lang-${language}-standby` }) : null;
          let stderr: ParsedLog;
          let csv: ParsedLog;
          try {
            const log = await runScenarioInOwnLog(scenario, { primary, standby }, translator);
            const settings = { prefix: log.settings.log_line_prefix ?? '%m [%p] %q%u@%d ', timezone: log.settings.log_timezone ?? 'UTC', translator };
            stderr = await parseLogFile(log.files.stderr as string, { format: 'stderr', ...settings });
            csv = await parseLogFile(log.files.csvlog as string, { format: 'csvlog', ...settings });
            if (RECORD) {
              for (const file of Object.values(log.files)) {
                const dir = path.join(LANG_FIXTURES_DIR, `pg15-${language}-${name}`);
                fs.mkdirSync(dir, { recursive: true });
                fs.copyFileSync(file, path.join(dir, path.basename(file)));
              }
            }
          } finally {
            await standby?.destroy();
          }
          const events = stderr.events;
          expect(stderr.stats.unparsed_lines, `unparsed lines: ${JSON.stringify(stderr.stats.examples)}`).toBe(0);
          expectScenarioEvents(name, events, 15);
          expect(events.every((e) => e.language === language)).toBe(true);
          // The server's own words stay in `message`.
          expect(events.filter((e) => e.kind !== 'generic' && translator.translateMessage(e.message) !== e.message)).not.toEqual([]);
          // Each classified event has a twin in the English run of the scenario.
          const english = englishShapes(readCase(path.join(FIXTURES_DIR, `pg15-stderr-${name}`)).scenario);
          const unmatched = events.filter((e) => e.kind !== 'generic' && !english.has(shapeOf(e)) && !terminatedAfterCancel(e, events)).map(shapeOf);
          expect(unmatched, 'events whose fields the English run of the scenario never shows').toEqual([]);
          // stderr and csvlog read the same.
          const strip = (list: AnyLogEvent[]) => list.filter((e) => e.kind !== 'generic').map((e) => ({ kind: e.kind, details: e.details }));
          expect(strip(csv.events)).toEqual(strip(events));
        }, 180_000);
      }
    });
  }
});
