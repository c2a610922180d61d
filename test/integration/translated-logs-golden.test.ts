/**
 * The recorded logs of PostgreSQL 15 servers writing German, Japanese, Russian and Spanish
 * (test/fixtures/logs-lang/pg15-<lang>-<scenario>/, recorded by translated-logs-pg15.test.ts with
 * RECORD_LANG_FIXTURES=1), replayed without a server through what `pgvigil analyze` runs by
 * default: format and language detected from the first lines, the shipped catalogs. Each file's
 * events are compared byte for byte with its golden, expected-<format>.ndjson beside it:
 *
 *   UPDATE_GOLDEN=1 npx vitest run test/integration/translated-logs-golden.test.ts   rewrites them;
 *   review them with `git diff test/fixtures/logs-lang`.
 *
 * Besides the bytes: the language must be detected as the one the server wrote, every line framed,
 * the scenario's expectations met (the same as the English fixtures'), and stderr, csvlog and
 * jsonlog of one run must give the same classified events.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { silentLogger } from '../../src/lib/logger.js';
import { offlineLanguage } from '../../src/parsers/lang/index.js';
import { readLines } from '../../src/sources/offline-reader.js';
import { SourceParser, type PipelineStats } from '../../src/sources/source-parser.js';
import { expectGolden } from '../helpers/golden-file.js';
import { expectScenarioEvents } from '../helpers/scenarios/expectations.js';
import { FIXTURES_DIR } from '../helpers/scenarios/fixture-case.js';
import { eventsToNdjson } from '../helpers/scenarios/parse-log.js';
import { expectRawValues } from '../helpers/scenarios/raw-values.js';
import type { LogFormat } from '../helpers/scenarios/scenario-log.js';

const LANG_DIR = path.resolve(FIXTURES_DIR, '../logs-lang');
const FORMATS: Readonly<Record<string, string>> = { '.log': 'stderr', '.csv': 'csvlog', '.json': 'jsonlog' };

/** One language setting for the whole run, as analyze builds it once per invocation. */
const language = offlineLanguage(undefined);

interface Replayed {
  events: AnyLogEvent[];
  stats: PipelineStats;
  language: string | null;
  format: string | null;
}

async function replay(file: string, setting = language.setting): Promise<Replayed> {
  const parser = new SourceParser({ target: 'golden', format: 'auto', language: setting }, silentLogger());
  parser.openFile(file);
  const events: AnyLogEvent[] = [];
  await readLines(file, (line) => events.push(...parser.push(line)));
  events.push(...parser.flush());
  return { events, stats: parser.stats() as PipelineStats, language: parser.language, format: parser.format?.format ?? null };
}

const runs = fs.readdirSync(LANG_DIR).filter((name) => /^pg15-[a-z_A-Z]+-/.test(name)).sort();

describe('recorded logs of servers writing another language, replayed offline', () => {
  it('are there: German, Japanese, Russian and Spanish', () => {
    expect(language.problem).toBeNull();
    expect(new Set(runs.map((run) => run.split('-')[1]))).toEqual(new Set(['de', 'ja', 'ru', 'es']));
  });

  for (const run of runs) {
    const [, lang, ...rest] = run.split('-');
    const scenario = rest.join('-');
    const dir = path.join(LANG_DIR, run);
    const logs = fs.readdirSync(dir).filter((file) => path.extname(file) in FORMATS && !file.startsWith('expected-')).sort();

    describe(run, () => {
      const replayed = new Map<string, Replayed>();
      for (const log of logs) {
        const format = FORMATS[path.extname(log)] as string;
        it(format, async () => {
          const got = await replay(path.join(dir, log));
          replayed.set(format, got);
          expect(got.format).toBe(format);
          expect(got.language, 'detected language').toBe(lang);
          expect(got.stats.examples, 'lines the framing could not read').toEqual([]);
          expect(got.events.every((event) => event.language === lang)).toBe(true);
          expectScenarioEvents(scenario, got.events, 15);
          const actual = eventsToNdjson(got.events, dir);
          expectGolden(path.join(dir, `expected-${format}.ndjson`), actual);
          // The messages are translated: only the envelope (pid, timestamp) is read back here.
          expectRawValues(fs.readFileSync(path.join(dir, log)), got.events, format as LogFormat, run, { english: false });
        });
      }
      it(`--lang ${lang} reads the stderr log as detection does (the major still told by the file)`, async () => {
        const given = offlineLanguage(lang);
        expect(given.problem).toBeNull();
        const got = await replay(path.join(dir, `${scenario}.log`), given.setting);
        expect(eventsToNdjson(got.events, dir)).toBe(fs.readFileSync(path.join(dir, 'expected-stderr.ndjson'), 'utf8'));
      });
      it('stderr, csvlog and jsonlog give the same classified events', () => {
        const classified = (format: string): unknown[] =>
          (replayed.get(format)?.events ?? []).filter((e) => e.kind !== 'generic').map((e) => ({ kind: e.kind, level: e.level, details: e.details }));
        expect(replayed.size, 'the formats were replayed first').toBe(logs.length);
        for (const format of replayed.keys()) expect(classified(format), format).toEqual(classified('stderr'));
      });
    });
  }
});
