import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../store/open-store.js';
import type { AnalyzeReport } from '../report/analyze-text.js';
import { analyzeCaptured as analyze } from '../../test/helpers/analyze-io.js';
import { expectGolden } from '../../test/helpers/golden-file.js';
import type { AnalyzeOptions } from './analyze.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');
const text = readFileSync(FIXTURE, 'utf8');
const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-analyze-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The fixture cut in two at an entry boundary near the middle: [first half, second half]. */
function halves(): [string, string] {
  const lines = text.split('\n');
  let cut = Math.floor(lines.length / 2);
  while (lines[cut]?.startsWith('\t')) cut++;
  return [`${lines.slice(0, cut).join('\n')}\n`, lines.slice(cut).join('\n')];
}

async function analyzeJson(files: string[], options: AnalyzeOptions = {}): Promise<AnalyzeReport> {
  const { code, stdout } = await analyze(files, { ...options, json: true });
  expect(code).toBe(0);
  return JSON.parse(stdout) as AnalyzeReport;
}

/** Counts by scanning the text, independently of the parser. */
const count = (pattern: RegExp): number => text.split('\n').filter((l) => pattern.test(l)).length;
/** Entry starts: prefixed lines with a severity (DETAIL, STATEMENT... lines belong to the entry before). */
const ENTRY_START = /^\d{4}-\S+ \S+ UTC \[\d+\] (\S+@\S+ )?(LOG|ERROR|WARNING|FATAL|PANIC|INFO|NOTICE|DEBUG): {2}/;

describe('pgvigil analyze', () => {
  it('counts lines, entries and events of a real log, with format and prefix detected', async () => {
    const report = await analyzeJson([FIXTURE]);
    expect(report.files[0]).toMatchObject({ format: 'stderr', prefix: '%m [%p] %q%u@%d ', error: null });
    expect(report.lines).toBe(text.split('\n').length - 1);
    expect(report.entries).toBe(count(ENTRY_START));
    expect(report.unparsed_lines).toBe(0);
    expect(report.events_by_kind.autovacuum).toBe(count(/LOG: {2}automatic (aggressive )?vacuum (to prevent wraparound )?of table/));
    expect(report.events_by_kind.autoanalyze).toBe(count(/LOG: {2}automatic analyze of table/));
    expect(report.events_by_kind.deadlock).toBe(count(/ERROR: {2}deadlock detected/));
    expect(report.summary.autovacuum.runs).toBe(report.events_by_kind.autovacuum);
    expect(report.summary.autovacuum.tables.map((t) => t.table)).toContain('postgres.public.bench_churn');
  });

  it('reads .gz like plain text and orders files by their first timestamp, not by argument order', async () => {
    const [first, second] = halves();
    writeFileSync(path.join(dir, 'b-later.log.gz'), gzipSync(second));
    writeFileSync(path.join(dir, 'a-earlier.log'), first);
    const whole = await analyzeJson([FIXTURE]);
    const split = await analyzeJson([path.join(dir, 'b-later.log.gz'), path.join(dir, 'a-earlier.log')]);
    expect(split.files.map((f) => path.basename(f.path))).toEqual(['a-earlier.log', 'b-later.log.gz']);
    expect({ lines: split.lines, entries: split.entries, kinds: split.events_by_kind })
      .toEqual({ lines: whole.lines, entries: whole.entries, kinds: whole.events_by_kind });
  });

  it('prints every event as snake_case NDJSON with --events, the summary on stderr', async () => {
    const { code, stdout, stderr } = await analyze([FIXTURE], { events: true });
    expect(code).toBe(0);
    const events = stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events).toHaveLength(count(ENTRY_START));
    expect(Object.keys(events[0]!)).toEqual(['kind', 'target', 'ts', 'pid', 'database', 'user', 'level', 'sqlstate', 'message', 'details', 'source']);
    expect(events[0]!.ts).toBe('2026-11-30T07:13:45.144Z');
    const deadlock = events.find((e) => e.kind === 'deadlock')!;
    // The server is named after the file (postgresql.log), never a made-up name.
    expect(deadlock).toMatchObject({ target: 'postgresql', level: 'ERROR', database: 'postgres', user: 'postgres' });
    expect(stderr).toMatch(/^pgvigil analyze: 1 file, /);
  });

  it('stores the events with --db', async () => {
    const db = path.join(dir, 'store.db');
    await analyze([FIXTURE], { db, json: true });
    const store = openStore(db, { readonly: true });
    const kinds = store.prepare('SELECT kind, count(*) AS n FROM events GROUP BY kind').all() as Array<{ kind: string; n: number }>;
    store.close();
    expect(Object.fromEntries(kinds.map((k) => [k.kind, k.n])).autovacuum).toBe(count(/LOG: {2}automatic (aggressive )?vacuum (to prevent wraparound )?of table/));
    expect(kinds.reduce((sum, k) => sum + k.n, 0)).toBe(count(ENTRY_START));
  });

  it('reports an unreadable or truncated file, keeps what it read, goes on, and exits 1', async () => {
    const gz = gzipSync(text);
    const cut = path.join(dir, 'cut.log.gz');
    writeFileSync(cut, gz.subarray(0, Math.floor(gz.length / 2)));
    const { code, stdout, stderr } = await analyze([path.join(dir, 'missing.log'), cut, FIXTURE], { json: true });
    expect(code).toBe(1);
    const report = JSON.parse(stdout) as AnalyzeReport;
    expect(report.files.find((f) => f.path.endsWith('missing.log'))?.error).toMatch(/ENOENT/);
    expect(report.files.find((f) => f.path === cut)?.error).toMatch(/unexpected end of file/);
    expect(report.files.find((f) => f.path === FIXTURE)?.error).toBeNull();
    expect(report.lines).toBeGreaterThan(text.split('\n').length - 1);
    expect(stderr).toMatch(/missing\.log/);
  });

  it('prints a readable summary by default', async () => {
    const { stdout } = await analyze([FIXTURE]);
    expect(stdout).toMatch(/Events by kind/);
    expect(stdout).toMatch(/Autovacuum \(\d+ runs on \d+ tables\)/);
    expect(stdout).toMatch(/postgres\.public\.bench_churn/);
    expect(stdout).toMatch(/Busiest minutes/);
  });

  it('exits 1 when nothing was understood, saying per file what was tried, its first line and which flags fix it', async () => {
    const notALog = path.join(dir, 'services');
    writeFileSync(notALog, '\n# Network services, Internet style\ntcpmux\t\t1/tcp\n');
    const flagsHint = '  If these are PostgreSQL logs, give their format with --format stderr|csvlog|jsonlog|joined|cnpg|cloud-logging|logplex ' +
      "and, for stderr (and the stderr lines inside joined, cloud-logging and logplex), the server's log_line_prefix with --prefix (psql: SHOW log_line_prefix).\n";
    const detected = await analyze([notALog]);
    expect(detected.code).toBe(1);
    expect(detected.stderr).toBe('pgvigil analyze: no line was understood as a PostgreSQL log entry:\n' +
      `  ${notALog}: tried format stderr (detected), no log_line_prefix detected; first line: "# Network services, Internet style"\n${flagsHint}`);
    const given = await analyze([notALog], { format: 'stderr', prefix: '%m [%p] ' });
    expect(given.code).toBe(1);
    expect(given.stderr).toContain(`  ${notALog}: tried --format stderr, --prefix "%m [%p] "; first line: "# Network services, Internet style"\n`);
    const mixed = await analyze([notALog, FIXTURE]);
    expect(mixed.code).toBe(0);
    expect(mixed.stderr).toContain(`  ${notALog}: tried format stderr (detected), no log_line_prefix detected;`);
    expect(mixed.stderr).not.toContain(FIXTURE);
  });
});

// The text a person reads, from recorded logs, reviewed as a diff: UPDATE_GOLDEN=1 rewrites them.
describe('pgvigil analyze text', () => {
  const LOGS = path.resolve(path.dirname(FIXTURE), '../logs');
  const GOLDEN_DIR = path.resolve(path.dirname(FIXTURE), '../analyze-text');
  const cases: Array<[string, string]> = [
    ['pg18-stderr-analyze-mixed', FIXTURE],
    ['pg18-stderr-autovacuum-held-back-by-snapshot', path.join(LOGS, 'pg18-stderr-autovacuum-held-back-by-snapshot/autovacuum-held-back-by-snapshot.log')],
    ['pg18-csvlog-lock-waits-and-lock-timeout', path.join(LOGS, 'pg18-csvlog-lock-waits-and-lock-timeout/lock-waits-and-lock-timeout.csv')],
  ];

  const most = (raw: string, pattern: RegExp): number => Math.max(...[...raw.matchAll(pattern)].map((m) => Number(m[1])));
  /** Per case, what its text must say, computed from the raw log. */
  const RAW_FIGURES: Record<string, (raw: string) => string[]> = {
    'pg18-stderr-analyze-mixed': (raw) => [`Autovacuum (${raw.match(/LOG: {2}automatic (aggressive )?vacuum (to prevent wraparound )?of table/g)?.length} runs`],
    'pg18-stderr-autovacuum-held-back-by-snapshot': (raw) => [` ${most(raw, /(\d+) are dead but not yet removable/g).toLocaleString('en-US')} `],
    'pg18-csvlog-lock-waits-and-lock-timeout': (raw) => [`longest ${most(raw, /after ([\d.]+) ms/g).toFixed(2)} ms`],
  };

  it.each(cases)('%s reads as its golden file', async (name, log) => {
    const { code, stdout } = await analyze([log]);
    expect(code).toBe(0);
    const text = stdout.replaceAll(log, '<log>');
    expectGolden(path.join(GOLDEN_DIR, `${name}.txt`), text);
    // Figures read back from the raw log by the test, so a regenerated golden cannot carry a wrong one.
    const raw = readFileSync(log, 'utf8');
    const stamps = [...raw.matchAll(/^"?(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) UTC/gm)].map((m) => `${m[1]}T${m[2]}Z`).sort();
    expect(text).toContain(`1 file, ${(raw.split('\n').length - 1).toLocaleString('en-US')} lines`);
    expect(text).toContain(`from ${stamps[0]} to ${stamps.at(-1)}`);
    for (const figure of RAW_FIGURES[name]?.(raw) ?? []) expect(text).toContain(figure);
  });
});

