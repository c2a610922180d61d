/**
 * `pgvigil analyze -j N` returns exactly what `-j 1` does. Ranges are made tiny (a few hundred
 * bytes) so that split points fall inside every kind of multi-line entry: on every golden log
 * fixture (events, counts and examples per file, against one pipeline over the file) and on
 * generated logs in the three formats (the whole output of --json, which summarizes from columns,
 * and of --events, which prints every event in order, against `-j 1`; text, --rules and --db,
 * which read the same events as --json and --events, once); and on the translated fixtures,
 * which the workers read with the language the main thread detected.
 *
 * Every range, however small, costs a worker a pipeline and an overrun past its boundary (a csvlog
 * range reads on until the records it batched are parsed): a few hundred entries per log put a
 * split point inside every kind of multi-line entry many times over; more only made it slower.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseFilesInParallel, type ParsedFile } from '../../src/analyze/parallel-parse.js';
import { runAnalyze, type AnalyzeOptions } from '../../src/cli/analyze.js';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { GENERATED_STDERR_PREFIX, generatedCsvLog, generatedJsonLog, generatedStderrLog } from '../helpers/generated-logs.js';
import { FIXTURES_DIR, listCases, readCase } from '../helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../helpers/scenarios/parse-log.js';

const TINY_RANGE_BYTES = 300;
const LANG_FIXTURES_DIR = path.join(FIXTURES_DIR, '..', 'logs-lang');

describe('golden fixtures parsed in tiny ranges on 2 workers', () => {
  const cases = listCases().map((name) => {
    const dir = path.join(FIXTURES_DIR, name);
    const fixture = readCase(dir);
    return { name, file: path.join(dir, fixture.log_file), settings: { target: 'golden', format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone } };
  });
  const parallel = new Map<string, { file: ParsedFile; events: AnyLogEvent[] }>();

  beforeAll(async () => {
    // One pool per format and settings: a worker's start-up (tsx under tests) is paid a few times, not per case.
    const groups = new Map<string, typeof cases>();
    for (const c of cases) {
      const key = JSON.stringify(c.settings);
      groups.set(key, [...(groups.get(key) ?? []), c]);
    }
    for (const group of groups.values()) {
      const events = new Map<string, AnyLogEvent[]>(group.map((c) => [c.file, []]));
      const files = await parseFilesInParallel(group.map((c) => c.file), new Map(), group[0]!.settings, { jobs: 2, rangeBytes: TINY_RANGE_BYTES }, {
        onEvent: (event) => events.get(event.source.file)!.push(event),
        afterBatch: () => undefined,
      }, silentLogger());
      for (const file of files) parallel.set(file.path, { file, events: events.get(file.path)! });
    }
  }, 600_000);

  for (const c of cases) {
    it(c.name, async () => {
      const expected = await parseLogFile(c.file, c.settings);
      const got = parallel.get(c.file)!;
      expect(got.file.error).toBeNull();
      expect(got.events).toEqual(expected.events);
      expect(got.file.stats).toEqual(expected.stats);
      expect(got.file.lines).toBe(expected.stats.lines);
    });
  }
});

async function run(files: string[], options: AnalyzeOptions): Promise<{ code: number; stdout: string; stderr: string }> {
  const [stdout, stderr] = [new PassThrough(), new PassThrough()];
  const text = { stdout: '', stderr: '' };
  stdout.on('data', (d: Buffer) => { text.stdout += d.toString(); });
  stderr.on('data', (d: Buffer) => { text.stderr += d.toString(); });
  const code = await runAnalyze(files, options, { stdout, stderr });
  return { code, ...text };
}

function storedEvents(file: string): unknown[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT * FROM events ORDER BY id').all();
  } finally {
    db.close();
  }
}

describe('translated logs parsed in tiny ranges on 2 workers print what -j 1 prints', () => {
  const dirs = fs.readdirSync(LANG_FIXTURES_DIR).map((name) => path.join(LANG_FIXTURES_DIR, name));
  // Every scenario of every language at once, per format: ordering, detection and language per file.
  for (const extension of ['log', 'csv', 'json']) {
    const files = dirs.flatMap((dir) => fs.readdirSync(dir).filter((f) => f.endsWith(`.${extension}`)).map((f) => path.join(dir, f)));
    // --events prints every event and the summary; --json, read from columns, once.
    for (const output of (extension === 'log' ? [{ json: true }, { events: true }] : [{ events: true }]) as AnalyzeOptions[]) {
      it(`${extension} ${JSON.stringify(output)}`, async () => {
        const one = await run(files, { ...output, jobs: 1 });
        const two = await run(files, { ...output, jobs: 2, rangeBytes: TINY_RANGE_BYTES });
        expect(files.length).toBeGreaterThan(20);
        for (const language of ['de', 'es', 'ja', 'ru']) expect(one.stderr).toContain(`read in language ${language} `);
        expect(two).toEqual(one);
      }, 120_000);
    }
  }
});

describe('analyze -j 2 on generated logs prints what -j 1 prints', () => {
  let dir: string;
  const logs: Record<string, { files: string[]; options: AnalyzeOptions }> = {};

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-parallel-'));
    const write = (name: string, text: string | Buffer): string => {
      const file = path.join(dir, name);
      fs.writeFileSync(file, text);
      return file;
    };
    logs.stderr = { files: [write('a.log', generatedStderrLog(600, 1)), write('b.log', generatedStderrLog(300, 7))], options: { format: 'stderr', prefix: GENERATED_STDERR_PREFIX } };
    logs.detected = { files: [write('c.log', generatedStderrLog(500, 5)), write('d.log.gz', gzipSync(generatedStderrLog(300, 9)))], options: {} };
    logs.csvlog = { files: [write('e.csv', generatedCsvLog(400))], options: { format: 'csvlog' } };
    logs.jsonlog = { files: [write('f.json', generatedJsonLog(500))], options: { format: 'jsonlog' } };
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const name of ['stderr', 'detected', 'csvlog', 'jsonlog']) {
    // Text and --rules read what --json and --events read: once, on the log with the most kinds of entry.
    const once = name === 'stderr' ? [{}, { rules: true, json: true }] : [];
    for (const output of [{ json: true }, { events: true }, ...once] as AnalyzeOptions[]) {
      it(`${name} ${JSON.stringify(output)}`, async () => {
        const { files, options } = logs[name]!;
        const one = await run(files, { ...options, ...output, jobs: 1 });
        const two = await run(files, { ...options, ...output, jobs: 2, rangeBytes: 997 });
        expect(one.stdout.length).toBeGreaterThan(1000);
        expect(two).toEqual(one);
      }, 120_000);
    }
  }

  it('stores the same events with --db', async () => {
    const { files, options } = logs.stderr!;
    const [a, b] = [path.join(dir, 'one.db'), path.join(dir, 'two.db')];
    expect((await run(files, { ...options, db: a, jobs: 1 })).code).toBe(0);
    expect((await run(files, { ...options, db: b, jobs: 2, rangeBytes: 997 })).code).toBe(0);
    const stored = storedEvents(a);
    expect(stored.length).toBeGreaterThan(700);
    expect(storedEvents(b)).toEqual(stored);
  }, 120_000);

  it('reports a missing file as -j 1 does', async () => {
    const files = [...logs.jsonlog!.files, path.join(dir, 'missing.log')];
    const two = await run(files, { format: 'jsonlog', json: true, jobs: 2 });
    expect(two.code).toBe(1);
    expect(two).toEqual(await run(files, { format: 'jsonlog', json: true, jobs: 1 }));
  }, 120_000);
});
