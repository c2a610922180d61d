/**
 * Hostile input for the three framers, as properties over random lines (fast-check): random
 * bytes decoded as the line reader decodes them (invalid UTF-8 becomes U+FFFD), NUL bytes, lone
 * surrogates, prefixes that almost match, unbalanced csv quotes, deeply nested and huge JSON,
 * numbers that overflow. Whatever comes, a framer never throws and accounts for every line: each
 * unparsed line is counted under exactly one reason, and valid entries between garbage still
 * come out, each once.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CsvlogFramer } from './frame-csvlog.js';
import { JsonlogFramer } from './frame-jsonlog.js';
import { StderrFramer } from './frame-stderr.js';
import type { Framer, UnparsedReason } from './framer.js';
import { EXAMPLE_MAX_CHARS, EXAMPLES_PER_REASON } from './framing-stats.js';
import type { LogEntry } from '../domain/log-entry.js';

const RUNS = 150;

const PREFIXES = ['%m [%p] %q%u@%d ', '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ', '%m %c %b %e %x %v %Q %r %i %L %n %s %P '];
const STDERR_START = '2026-10-14 03:12:45.123 UTC [41235] app@shop LOG:  ';
const CSV_START = '2026-10-14 03:12:45.123 UTC,"app","shop",41235,"[local]",6529a1b2.a113,1,"idle",2026-10-14 03:12:23 UTC,4/77,0,LOG,00000,';
const CSV_END = ',,,,,,,,,"psql","client backend",,0';

/** A line as the line reader hands it over: bytes decoded as UTF-8, the '\n' removed. */
const decodedBytes = fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('utf8').replaceAll('\n', ''));

/** Lines a framer must survive: random bytes and strings, and near misses of each format. */
const hostileLine = fc.oneof(
  decodedBytes,
  fc.string({ unit: 'binary', maxLength: 200 }).map((s) => s.replaceAll('\n', '')),
  fc.string({ unit: 'grapheme', maxLength: 100 }),
  fc.constantFrom('', '\t', '\0', '\uD800', '\uDFFF', '"', '""', '{', '[]', 'null', '\r', '\t\0'),
  fc.tuple(fc.integer({ min: 0, max: STDERR_START.length }), fc.string({ maxLength: 40 })).map(([cut, tail]) => STDERR_START.slice(0, cut) + tail),
  fc.tuple(fc.integer({ min: 0, max: CSV_START.length }), fc.string({ maxLength: 40 })).map(([cut, tail]) => CSV_START.slice(0, cut) + tail),
  fc.tuple(fc.string({ maxLength: 30 }), fc.constantFrom('"', '"x', 'x""', '",')).map(([text, quote]) => CSV_START + quote + text),
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value) ?? ''),
  // A jsonlog line cut anywhere (the server died mid-write).
  fc.tuple(fc.string({ maxLength: 30 }), fc.nat()).map(([message, cut]) => {
    const line = JSON.stringify({ timestamp: '2026-10-14 03:12:45.123 UTC', error_severity: 'LOG', message, pid: 1 });
    return line.slice(0, cut % (line.length + 1));
  }),
  fc.record({ timestamp: fc.string(), error_severity: fc.constantFrom('LOG', 'ERROR', 'BOGUS'), message: fc.string(), pid: fc.oneof(fc.double(), fc.bigInt().map(String)) })
    .map((o) => JSON.stringify(o)),
  fc.constantFrom(
    '2026-02-30 03:12:45.123 UTC [1] LOG:  x', '2026-10-14 25:12:45.123 UTC [1] LOG:  x', '2026-10-14 03:12:45.123 XYZ [1] LOG:  x',
    '2026-10-14 03:12:45.123 UTC [99999999999] LOG:  x', '2026-10-14 03:12:45.123 UTC [1] DETAIL:  orphan', '2026-10-14 03:12:45.123 UTC [1] NOTASEVERITY:  x',
  ),
);

type MakeFramer = () => Framer;
const FRAMERS: Record<string, MakeFramer> = {
  ...Object.fromEntries(PREFIXES.map((prefix) => [`stderr "${prefix}"`, () => new StderrFramer({ file: 'f', prefix, timezone: 'Europe/Berlin' })])),
  'stderr behind syslog headers': () => new StderrFramer({ file: 'f', prefix: '[%l-1] ', syslog: true, nowMs: () => Date.UTC(2026, 9, 14) }),
  csvlog: () => new CsvlogFramer({ file: 'f', batchRecords: 4 }),
  jsonlog: () => new JsonlogFramer({ file: 'f' }),
};

function feed(framer: Framer, lines: readonly string[]): LogEntry[] {
  const out: LogEntry[] = [];
  let offset = 0;
  lines.forEach((text, index) => {
    out.push(...framer.push({ text, offset, line: index + 1 }));
    offset += Buffer.byteLength(text) + 1;
  });
  out.push(...framer.flush());
  return out;
}

/** What must hold after any input: every line and entry counted, examples bounded. */
function expectAccounted(framer: Framer, lines: readonly string[], entries: readonly LogEntry[]): void {
  const stats = framer.stats;
  expect(stats.lines).toBe(lines.length);
  expect(stats.entries).toBe(entries.length);
  expect(stats.unparsed_lines).toBeLessThanOrEqual(lines.length);
  const byReason = Object.values(stats.unparsed_by_reason).reduce((sum, count) => sum + count, 0);
  expect(byReason).toBe(stats.unparsed_lines);
  for (const reason of Object.keys(stats.unparsed_by_reason) as UnparsedReason[]) {
    expect(stats.examples.filter((e) => e.reason === reason).length).toBeLessThanOrEqual(EXAMPLES_PER_REASON);
  }
  for (const example of stats.examples) expect(example.text.length).toBeLessThanOrEqual(EXAMPLE_MAX_CHARS);
  for (const entry of entries) {
    expect(entry.pid === null || (Number.isSafeInteger(entry.pid) && entry.pid >= 0), `pid ${entry.pid}`).toBe(true);
    expect(entry.tsMs === null || Number.isFinite(entry.tsMs), `tsMs ${entry.tsMs}`).toBe(true);
  }
  expect(framer.safeOffset()).toBeNull();
}

describe('framers never throw and count every line, whatever the input', () => {
  for (const [name, make] of Object.entries(FRAMERS)) {
    it(name, () => {
      fc.assert(fc.property(fc.array(hostileLine, { maxLength: 40 }), (lines) => {
        const framer = make();
        expectAccounted(framer, lines, feed(framer, lines));
      }), { numRuns: RUNS });
    });
  }
});

/** Garbage that no format can take for (part of) an entry: no tab, quote, brace or digit first. */
const garbage = fc.string({ maxLength: 60 }).map((s) => `x${s.replace(/["\n\r,]/g, '')}`);

describe('valid entries between garbage come out once each, and the garbage is counted by reason', () => {
  const cases: Array<[string, MakeFramer, (i: number) => string, UnparsedReason]> = [
    ['stderr', () => new StderrFramer({ file: 'f', prefix: PREFIXES[0] as string }), (i) => `${STDERR_START}message ${i}`, 'prefix_mismatch'],
    ['csvlog', () => new CsvlogFramer({ file: 'f', batchRecords: 3 }), (i) => `${CSV_START}"message ${i}"${CSV_END}`, 'csv_column_count'],
    ['jsonlog', () => new JsonlogFramer({ file: 'f' }),
      (i) => JSON.stringify({ timestamp: '2026-10-14 03:12:45.123 UTC', error_severity: 'LOG', message: `message ${i}`, pid: 41235 }), 'json_malformed'],
  ];
  for (const [name, make, valid, reason] of cases) {
    it(name, () => {
      fc.assert(fc.property(fc.array(fc.option(garbage, { nil: null, freq: 2 }), { maxLength: 60 }), (slots) => {
        let next = 0;
        const lines = slots.map((g) => g ?? valid(next++));
        const framer = make();
        const entries = feed(framer, lines);
        expect(entries.map((e) => e.message)).toEqual(Array.from({ length: next }, (_, i) => `message ${i}`));
        expect(framer.stats.unparsed_lines).toBe(lines.length - next);
        expect(framer.stats.unparsed_by_reason[reason] ?? 0).toBe(lines.length - next);
      }), { numRuns: RUNS });
    });
  }
});

describe('huge and deep input', () => {
  const TEN_MB = 10 * 1024 * 1024;

  it('stderr: 10 MB lines are cut to the field limit and counted', () => {
    const framer = new StderrFramer({ file: 'f', prefix: PREFIXES[0] as string });
    const entries = feed(framer, [STDERR_START + 'x'.repeat(TEN_MB), `\t${'y'.repeat(TEN_MB)}`]);
    expect(entries).toHaveLength(1);
    // Both lines cut to 1 MiB, then the continuation cut where the message reaches 1 MiB.
    expect(entries[0]?.message).toBe(`${'x'.repeat(1024 * 1024 - STDERR_START.length)}\n${'y'.repeat(STDERR_START.length - 1)}`);
    expect(framer.stats.truncated_fields).toBe(3);
  });

  it('csvlog: a quote that never closes is given up on past 16 field limits, not held forever', () => {
    const framer = new CsvlogFramer({ file: 'f', maxFieldChars: 1000 });
    const lines = [`${CSV_START}"never closed`, ...Array.from({ length: 40 }, () => 'z'.repeat(500)), `${CSV_START}"ok"${CSV_END}`];
    const entries = feed(framer, lines);
    expect(entries.map((e) => e.message)).toEqual(['ok']);
    expect(framer.stats.unparsed_by_reason.csv_malformed).toBe(33); // the first 33 lines pass 16 x 1000 characters
    expect(framer.stats.unparsed_lines).toBe(lines.length - 1);
  });

  it('csvlog: a 10 MB field is cut to the field limit', () => {
    const framer = new CsvlogFramer({ file: 'f' });
    const entries = feed(framer, [`${CSV_START}"${'x'.repeat(TEN_MB)}"${CSV_END}`]);
    expect(entries[0]?.message.length).toBe(1024 * 1024);
    expect(framer.stats.truncated_fields).toBe(1);
  });

  it('jsonlog: a 10 MB message is cut, and JSON nested 100,000 deep is counted, not thrown', () => {
    const framer = new JsonlogFramer({ file: 'f' });
    const base = { timestamp: '2026-10-14 03:12:45.123 UTC', error_severity: 'LOG' };
    const deep = `{"timestamp":"2026-10-14 03:12:45.123 UTC","error_severity":"LOG","message":"deep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    const entries = feed(framer, [JSON.stringify({ ...base, message: 'x'.repeat(TEN_MB) }), deep, `${'{"a":'.repeat(100_000)}`]);
    expect(entries[0]?.message.length).toBe(1024 * 1024);
    expect(framer.stats.truncated_fields).toBe(1);
    expect(entries.length + (framer.stats.unparsed_by_reason.json_malformed ?? 0)).toBe(3);
    expect(framer.stats.unparsed_by_reason.json_malformed).toBeGreaterThanOrEqual(1);
  });

  it('numbers that overflow give no pid rather than a wrong one', () => {
    const json = new JsonlogFramer({ file: 'f' });
    const jsonEntries = feed(json, ['1e400', '-1', '1e20', '12.5'].map((pid) =>
      `{"timestamp":"2026-10-14 03:12:45.123 UTC","error_severity":"LOG","message":"m","pid":${pid}}`));
    expect(jsonEntries.map((e) => e.pid)).toEqual([null, null, null, null]);
    const csv = new CsvlogFramer({ file: 'f' });
    const csvEntries = feed(csv, ['99999999999999999999', '-1', '1e3', '0x10', ' 7'].map((pid) => CSV_START.replace(',41235,', `,${pid},`) + `"m"${CSV_END}`));
    expect(csvEntries.map((e) => e.pid)).toEqual([null, null, null, null, null]);
  });
});
