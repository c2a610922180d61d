/**
 * The envelope formats (src/parsers/formats/) on every log a real server wrote: each recorded
 * golden case (test/fixtures/logs) is rewritten into the shape a relay, CloudNativePG, Cloud
 * Logging or a logplex drain gives it (test/helpers/format-fixtures.ts), read with --format auto,
 * and its events must equal the recorded case's field by field (all but `source`, which points
 * into the rewritten file).
 *
 * Where each shape comes from:
 * - joined lines: rsyslog's control-character escapes (#011 TAB, #012 newline), and shippers that
 *   write the newline as a TAB or as a literal backslash-n;
 * - CloudNativePG: `record` keys are the json tags of LoggingRecord in
 *   cloudnative-pg/cloudnative-pg pkg/management/postgres/logpipe/loggingCollector.go (all
 *   `omitempty`), written by LogRecordWriter (logpipe/writer.go) as
 *   `{"level","ts","logger":"postgres","msg":"record","logging_pod","record":{...}}`;
 * - logplex: pgBadger 12's logplex parser (/usr/bin/pgbadger, `$fmt eq 'logplex'`:
 *   `^(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(?:\.\d+)?[+\-]\d{2}:\d{2}\s+(?:[^\s]+)?\s*app\[postgres\.(\d+)\][:]?\s+\[([^\]]+)\]\s+\[\d+\-\d+\]\s+(.*?)\s*(LOG|...):`),
 *   with Heroku's log_line_prefix ` sql_error_code = %e ` and write_syslog()'s one piece per line;
 * - Cloud Logging: the LogEntry fields of an export (textPayload or jsonPayload.message, timestamp,
 *   logName, resource.labels.database_id).
 */
import { parse } from 'csv-parse/sync';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { feedAll } from '../../src/parsers/physical-lines.js';
import { SourceParser } from '../../src/sources/source-parser.js';
import { silentLogger } from '../../src/lib/logger.js';
import type { InputFormat } from '../../src/parsers/formats/input-format.js';
import { csvlogToCnpg, csvlogToLogplex, JOIN_STYLES, joinStderr, stderrToCloudLogging } from '../helpers/format-fixtures.js';
import { suiteTempDir } from '../helpers/temp-dir.js';
import { EXPECTED_FILE, FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

const recorded = listCases().map((name) => ({ name, dir: path.join(FIXTURES_DIR, name), fixture: readCase(path.join(FIXTURES_DIR, name)) }))
  .filter((c) => c.fixture.provenance === 'recorded');
const stderrCases = recorded.filter((c) => c.fixture.format === 'stderr');
const csvlogCases = recorded.filter((c) => c.fixture.format === 'csvlog');

/** Reads `text` as analyze does (detection, then the pipeline) and says what was detected. */
function analyzeText(text: string, format: InputFormat = 'auto'): { events: AnyLogEvent[]; detected: string | undefined; stats: ReturnType<SourceParser['stats']> } {
  const parser = new SourceParser({ target: 'golden', format, timezone: 'UTC' }, silentLogger());
  parser.openFile('rewritten.log');
  const events = feedAll(parser, text);
  return { events, detected: parser.format?.envelope, stats: parser.stats() };
}

/** Everything but where in which file. */
function withoutSource(events: readonly AnyLogEvent[]): unknown[] {
  return events.map(({ source: _source, ...rest }) => rest);
}

function expectedEvents(dir: string): AnyLogEvent[] {
  return fs.readFileSync(path.join(dir, EXPECTED_FILE), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AnyLogEvent);
}

function logText(c: (typeof recorded)[number]): string {
  return fs.readFileSync(path.join(c.dir, c.fixture.log_file), 'utf8');
}

describe('reports joined into one line', () => {
  it('the recorded logs hold multi-line entries to join', () => {
    const joinable = stderrCases.filter((c) => logText(c).includes('\n\t'));
    expect(joinable.length).toBeGreaterThan(30);
  });

  for (const style of JOIN_STYLES) {
    it(`${style}: every recorded stderr log gives the recorded events`, () => {
      for (const c of stderrCases) {
        const text = logText(c);
        const joined = joinStderr(text, c.fixture.log_line_prefix, style);
        const { events, detected, stats } = analyzeText(joined);
        expect(withoutSource(events), c.name).toEqual(withoutSource(expectedEvents(c.dir)));
        expect(stats?.unparsed_lines, c.name).toBe(0);
        if (joined.split('\n').length < text.split('\n').length) expect(detected, c.name).toBe('joined');
      }
    });
  }

  it('a log as the server wrote it is not taken for a joined one', () => {
    for (const c of recorded) expect(analyzeText(logText(c)).detected, c.name).toBeUndefined();
  });

  it('a joined log named with --format joined reads the same as detected', () => {
    const c = stderrCases.find((x) => x.name === 'pg18-stderr-autovacuum-4-indexes')!;
    const joined = joinStderr(logText(c), c.fixture.log_line_prefix, 'tabs');
    expect(withoutSource(analyzeText(joined, 'joined').events)).toEqual(withoutSource(expectedEvents(c.dir)));
  });
});

describe('CloudNativePG', () => {
  it('every recorded csvlog, as the instance manager prints it, gives the recorded events; its own lines are counted', () => {
    for (const c of csvlogCases) {
      const cnpg = csvlogToCnpg(logText(c));
      const { events, detected, stats } = analyzeText(cnpg);
      expect(detected, c.name).toBe('cnpg');
      expect(withoutSource(events), c.name).toEqual(withoutSource(expectedEvents(c.dir)));
      const managerLines = cnpg.split('\n').filter((l) => l !== '' && !l.includes('"logger":"postgres"')).length;
      expect(stats?.unparsed_by_reason, c.name).toEqual(managerLines === 0 ? {} : { not_postgres: managerLines });
    }
  });
});

describe('Cloud Logging exports', () => {
  for (const json of [false, true]) {
    it(`every recorded stderr log as ${json ? 'jsonPayload.message' : 'textPayload'} entries gives the recorded events`, () => {
      for (const c of stderrCases) {
        const { events, detected, stats } = analyzeText(stderrToCloudLogging(logText(c), c.fixture.log_line_prefix, json));
        expect(detected, c.name).toBe('cloud_logging');
        expect(withoutSource(events), c.name).toEqual(withoutSource(expectedEvents(c.dir)));
        expect(Object.keys(stats?.unparsed_by_reason ?? {}).filter((r) => r !== 'not_postgres'), c.name).toEqual([]);
      }
    });
  }
});

describe('logplex drains', () => {
  const dir = suiteTempDir('logplex-reference');
  it('every recorded csvlog as Heroku drains it gives the events of the csvlog without what Heroku does not log', async () => {
    for (const c of csvlogCases) {
      const csv = logText(c);
      const { events, detected } = analyzeText(csvlogToLogplex(csv));
      expect(detected, c.name).toBe('logplex');
      // Heroku's prefix has no user, database, application; syslog carries no backend type.
      const reference = path.join(dir, `${c.name}.csv`);
      fs.writeFileSync(reference, blankCsvColumns(csv, [1, 2, 22, 23]));
      const expected = await parseLogFile(reference, { format: 'csvlog', prefix: '', timezone: 'UTC', target: 'golden' });
      expect(withoutSource(events), c.name).toEqual(withoutSource(expected.events));
    }
  });
});

/** The csv with the given columns emptied (a column's quotes kept balanced). */
function blankCsvColumns(csv: string, columns: readonly number[]): string {
  const rows = parse(csv, { relax_column_count: true, record_delimiter: '\n' }) as string[][];
  return rows.map((row) => row.map((v, i) => (columns.includes(i) ? '' : /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v)).join(',')).join('\n') + '\n';
}
