/**
 * Golden files of the envelope formats (test/fixtures/formats/<case>/): each log is a recorded
 * golden log (test/fixtures/logs) rewritten by test/helpers/format-fixtures.ts into the shape of
 * its format (see envelope-formats.test.ts for where each shape comes from). The test checks
 * that the committed log is still what the rewrite gives, that `--format auto` detects its
 * format, and that its events are expected.ndjson byte for byte (sources included).
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/integration/format-fixtures.test.ts   writes the logs and goldens;
 *   review them with `git diff test/fixtures/formats`.
 *
 * When pgBadger is installed, the logplex cases are also read by `pgbadger -f logplex` and the
 * two tools' counts compared.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { inputFormatName, type InputFormat } from '../../src/parsers/formats/input-format.js';
import { readLines } from '../../src/sources/offline-reader.js';
import { SourceParser } from '../../src/sources/source-parser.js';
import { csvlogToCnpg, csvlogToLogplex, joinStderr, stderrEntryGroups, stderrToCloudLogging } from '../helpers/format-fixtures.js';
import { expectGolden, updatingGoldens } from '../helpers/golden-file.js';
import { FIXTURES_DIR, readCase } from '../helpers/scenarios/fixture-case.js';
import { eventsToNdjson } from '../helpers/scenarios/parse-log.js';
import { ManualClock } from '../helpers/manual-clock.js';
import { testTempDir } from '../helpers/temp-dir.js';
import { itWithTool, toolPath } from '../helpers/tools.js';

const FORMATS_DIR = path.resolve(FIXTURES_DIR, '../formats');
const UPDATE = updatingGoldens();

interface FormatCase {
  name: string;
  /** The recorded golden case it is made from. */
  source: string;
  format: InputFormat;
  file: string;
  make: (text: string, prefix: string) => string;
}

/** A recorded stderr log whose autovacuum reports are printed on one line, sections separated by ", " (managed services). */
function oneLineReports(text: string, prefix: string): string {
  return stderrEntryGroups(text, prefix).map((lines) => (/ LOG: {2}automatic (aggressive )?vacuum/.test(lines[0]!)
    ? lines.map((line) => line.replace(/^\t/, '')).join(', ') : lines.join('\n'))).join('\n') + '\n';
}

const CASES: FormatCase[] = [
  { name: 'joined-tabs-pg18-autovacuum-4-indexes', source: 'pg18-stderr-autovacuum-4-indexes', format: 'joined', file: 'joined.log', make: (t, p) => joinStderr(t, p, 'tabs') },
  { name: 'joined-rsyslog-pg18-deadlock', source: 'pg18-stderr-deadlock', format: 'joined', file: 'syslog', make: (t, p) => joinStderr(t, p, 'rsyslog') },
  { name: 'joined-literal-newline-pg15-lock-waits-and-lock-timeout', source: 'pg15-stderr-lock-waits-and-lock-timeout', format: 'joined', file: 'relay.log', make: (t, p) => joinStderr(t, p, 'literal_newline') },
  { name: 'one-line-reports-pg18-autovacuum-4-indexes', source: 'pg18-stderr-autovacuum-4-indexes', format: 'stderr', file: 'postgresql.log', make: oneLineReports },
  { name: 'cnpg-pg18-autovacuum-4-indexes', source: 'pg18-csvlog-autovacuum-4-indexes', format: 'cnpg', file: 'kubectl-logs.json', make: (t) => csvlogToCnpg(t) },
  { name: 'cnpg-pg15-deadlock', source: 'pg15-csvlog-deadlock', format: 'cnpg', file: 'kubectl-logs.json', make: (t) => csvlogToCnpg(t) },
  { name: 'cloud-logging-pg18-lock-waits-and-lock-timeout', source: 'pg18-stderr-lock-waits-and-lock-timeout', format: 'cloud-logging', file: 'export.json', make: (t, p) => stderrToCloudLogging(t, p) },
  { name: 'logplex-pg18-autovacuum-4-indexes', source: 'pg18-csvlog-autovacuum-4-indexes', format: 'logplex', file: 'heroku.log', make: (t) => csvlogToLogplex(t) },
  { name: 'logplex-pg18-deadlock', source: 'pg18-csvlog-deadlock', format: 'logplex', file: 'heroku.log', make: (t) => csvlogToLogplex(t) },
];

/** `readAtMs`: when the file is read, for headers without a year (a BSD syslog header takes the latest year that is not in the future). */
async function analyzeFile(file: string, readAtMs?: number): Promise<{ events: AnyLogEvent[]; parser: SourceParser }> {
  const clock = readAtMs === undefined ? undefined : new ManualClock(readAtMs);
  const parser = new SourceParser({ target: 'golden', format: 'auto', timezone: 'UTC', ...(clock && { clock }) }, silentLogger());
  parser.openFile(file);
  const events: AnyLogEvent[] = [];
  await readLines(file, (line) => events.push(...parser.push(line)));
  events.push(...parser.flush());
  return { events, parser };
}

describe('envelope format fixtures', () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const source = path.join(FIXTURES_DIR, c.source);
      const recorded = readCase(source);
      const dir = path.join(FORMATS_DIR, c.name);
      const log = path.join(dir, c.file);
      const made = c.make(fs.readFileSync(path.join(source, recorded.log_file), 'utf8'), recorded.log_line_prefix);
      if (UPDATE) {
        fs.mkdirSync(dir, { recursive: true });
        fs.writeFileSync(log, made);
        fs.writeFileSync(path.join(dir, 'case.json'), `${JSON.stringify({
          provenance: 'derived', derived_from: `test/fixtures/logs/${c.source}`, derived_by: 'test/helpers/format-fixtures.ts',
          format: c.format, log_file: c.file, server_version: recorded.server_version,
        }, null, 2)}\n`);
      }
      expect(fs.readFileSync(log, 'utf8'), 'the rewrite of the recorded log').toBe(made);

      const { events, parser } = await analyzeFile(log);
      const detected = parser.format;
      expect(detected === null ? null : inputFormatName(detected.format, detected.envelope)).toBe(c.format);
      const actual = eventsToNdjson(events, dir);
      expectGolden(path.join(dir, 'expected.ndjson'), actual);
      expect(events.length).toBeGreaterThan(0);
      expect(Object.keys(parser.stats()?.unparsed_by_reason ?? {}).filter((r) => r !== 'not_postgres')).toEqual([]);
    });
  }
});

describe('logplex fixtures read by pgBadger -f logplex', () => {
  for (const c of CASES.filter((x) => x.format === 'logplex')) {
    itWithTool('pgbadger', `${c.name}: pgBadger and pgvigil count the same entries`, async () => {
      const log = path.join(FORMATS_DIR, c.name, c.file);
      const dir = testTempDir('pgbadger-logplex');
      const out = path.join(dir, 'out.json');
      // Its own pid directory: pgBadger exits 3 while another pgBadger (a bench, a cron job) has its pid file in /tmp.
      execFileSync(toolPath('pgbadger'), ['-f', 'logplex', '-x', 'json', '--pid-dir', dir, '-o', out, '-q', log], { stdio: 'pipe' });
      const report = JSON.parse(fs.readFileSync(out, 'utf8')) as Record<string, unknown>;
      const { events } = await analyzeFile(log);
      const theirs = pgbadgerCounts(report);
      const ours: Record<string, number> = { autovacuum_runs: events.filter((e) => e.kind === 'autovacuum').length };
      for (const e of events) ours[e.level] = (ours[e.level] ?? 0) + 1;
      // Side by side in the test log, whatever the outcome.
      console.log(`${c.name}: pgBadger ${JSON.stringify(theirs)}, pgvigil ${JSON.stringify(ours)}`);
      expect(ours, 'pgvigil vs pgBadger').toEqual(theirs);
    }, 60_000);
  }
});

/**
 * What pgBadger's JSON report counts that pgvigil counts too: entries by severity (logs_type;
 * its DETAIL, STATEMENT... counts are lines of an entry, not entries) and autovacuum runs.
 * Fields are not compared: pgBadger 12's continuation pattern for logplex ($other_syslog_line)
 * takes no fractional seconds, so it does not fold the lines after a report's first when the
 * drain's times have them, as Heroku's do.
 */
function pgbadgerCounts(report: Record<string, unknown>): Record<string, number> {
  const byLevel = ((report.logs_type as Record<string, Record<string, number>> | undefined)?.postgres) ?? {};
  const tables = ((report.autovacuum_info as { postgres?: { tables?: Record<string, { vacuums: number }> } } | undefined)?.postgres?.tables) ?? {};
  const counts: Record<string, number> = { autovacuum_runs: Object.values(tables).reduce((sum, t) => sum + t.vacuums, 0) };
  for (const [level, n] of Object.entries(byLevel)) if (n > 0 && ['LOG', 'WARNING', 'ERROR', 'FATAL', 'PANIC'].includes(level)) counts[level] = n;
  return counts;
}

interface CapturedCase {
  provenance: 'captured';
  source: string;
  format: InputFormat;
  log_file: string;
  /** For a sample whose timestamps have no year: the day it was captured. */
  read_at?: string;
  first_event: { pid: number; ts: string; database: string | null; user: string | null; level: string; kind: string; message: string };
  /** More entries read by hand from the sample: the first event of each kind holds at least these fields. */
  also?: Array<{ kind: string; pid: number; message: string; details?: Record<string, unknown> }>;
}

const captured = fs.readdirSync(FORMATS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map(({ name }) => ({ name, dir: path.join(FORMATS_DIR, name) }))
  .map((c) => ({ ...c, fixture: JSON.parse(fs.readFileSync(path.join(c.dir, 'case.json'), 'utf8')) as CapturedCase | { provenance: string } }))
  .filter((c): c is { name: string; dir: string; fixture: CapturedCase } => c.fixture.provenance === 'captured');

// Samples the platforms wrote (test/fixtures/formats/README.md says where each comes from).
describe('envelope samples captured from the real platforms', () => {
  it('include CloudNativePG, Cloud Logging, a syslog file rsyslog wrote, and entries rsyslog joined with #012', () => {
    expect(new Set(captured.map((c) => c.fixture.format))).toEqual(new Set(['cnpg', 'cloud-logging', 'stderr', 'joined']));
  });

  for (const { name, dir, fixture } of captured) {
    it(`${name} (${fixture.format})`, async () => {
      const { events, parser } = await analyzeFile(path.join(dir, fixture.log_file), fixture.read_at === undefined ? undefined : Date.parse(fixture.read_at));
      const detected = parser.format;
      expect(detected === null ? null : inputFormatName(detected.format, detected.envelope)).toBe(fixture.format);
      const [first] = events;
      expect(first && { pid: first.pid, ts: new Date(first.tsMs).toISOString(), database: first.database, user: first.user, level: first.level, kind: first.kind, message: first.message })
        .toEqual(fixture.first_event);
      for (const expected of fixture.also ?? []) expect(events.find((e) => e.kind === expected.kind), expected.kind).toMatchObject(expected);
      expectGolden(path.join(dir, 'expected.ndjson'), eventsToNdjson(events, dir));
    });
  }
});
