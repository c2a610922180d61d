/**
 * A log read in pieces cut anywhere, mid-character included, parses to the events of the whole
 * file: a writer can leave the first byte of `ä` or of `待` at the end of the file for a moment,
 * and a read or a restart can fall there. The logs are real PostgreSQL 15 output in German and
 * Japanese (test/fixtures/logs-lang), read through their catalogs as the daemon reads a server
 * whose lc_messages it knows.
 *
 * Two properties, each over every byte boundary and over random sets of cuts (fast-check):
 * - reading: the bytes pushed in chunks ending at the cuts give the same events as one chunk;
 * - restart: a run stopped after the bytes up to a cut saves the position the tailer saves (the
 *   first line of the entry still open, else the first byte after the last newline); a new run
 *   from there reads the rest. Together they give each event once, whole. The saved position is
 *   always at a line start, so never inside a character.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../domain/index.js';
import { silentLogger } from '../lib/logger.js';
import { readShippedCatalogs } from '../parsers/lang/catalog.js';
import { Translator } from '../parsers/lang/translator.js';
import { LineSplitter } from './line-reader.js';
import { SourceParser } from './source-parser.js';

const LANG_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/logs-lang');
const PREFIX = '%m [%p] %q%u@%d ';
const NEWLINE = 0x0a;

const LOGS = [
  { lang: 'de', file: path.join(LANG_DIR, 'pg15-de-deadlock/deadlock.log') },
  { lang: 'ja', file: path.join(LANG_DIR, 'pg15-ja-lock-waits-and-lock-timeout/lock-waits-and-lock-timeout.log') },
];

const translators = new Map<string, Translator>();

/** A tailer's parsing half, from `offset` in the file on (a restart resumes there, line number unknown). */
function reader(lang: string, file: string, offset = 0): { splitter: LineSplitter; parser: SourceParser } {
  const translator = translators.get(lang) ?? new Translator(readShippedCatalogs(lang).filter((c) => c.major === 15));
  translators.set(lang, translator);
  const parser = new SourceParser({ target: 'db1', format: 'stderr', prefix: PREFIX, timezone: 'UTC', language: { translator } }, silentLogger());
  parser.openFile(file);
  return { splitter: new LineSplitter({ startOffset: offset, startLine: offset === 0 ? 1 : null }), parser };
}

/** Events of bytes[from, to) pushed in chunks that end at `cuts`. */
function take(r: ReturnType<typeof reader>, bytes: Buffer, from: number, to: number, cuts: readonly number[] = []): AnyLogEvent[] {
  const events: AnyLogEvent[] = [];
  let start = from;
  for (const cut of [...cuts.filter((c) => c > from && c < to).sort((a, b) => a - b), to]) {
    events.push(...r.parser.take(r.splitter, bytes.subarray(start, cut)));
    start = cut;
  }
  return events;
}

/** Events without their line number, which a run resumed mid-file does not know. */
function comparable(events: readonly AnyLogEvent[]): unknown[] {
  return events.map((e) => ({ ...e, source: { file: e.source.file, offset: e.source.offset } }));
}

describe.each(LOGS)('a $lang log cut anywhere', ({ lang, file }) => {
  const bytes = readFileSync(file);
  const whole = (() => {
    const r = reader(lang, file);
    return [...take(r, bytes, 0, bytes.length), ...r.parser.flush()];
  })();

  it('is real text with characters of several bytes, read whole without a replacement character', () => {
    expect(bytes.toString('utf8').length).toBeLessThan(bytes.length - 10);
    expect(whole.length).toBeGreaterThan(5);
    expect(whole.every((e) => e.language === lang)).toBe(true);
    expect(JSON.stringify(whole)).not.toContain('\uFFFD');
  });

  it('read in two chunks cut at every byte boundary: the events of the whole file', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const r = reader(lang, file);
      const events = [...take(r, bytes, 0, bytes.length, [cut]), ...r.parser.flush()];
      if (JSON.stringify(events) !== JSON.stringify(whole)) expect(events, `cut at byte ${cut}`).toEqual(whole);
    }
  });

  it('restarted at every byte boundary: each event once, whole, and the saved position at a line start', () => {
    for (let cut = 1; cut < bytes.length; cut++) {
      const events = stopAndResume(lang, file, bytes, cut, []);
      if (JSON.stringify(events) !== JSON.stringify(comparable(whole))) expect(events, `restart at byte ${cut}`).toEqual(comparable(whole));
    }
  });

  it('read in chunks cut at random places, with a restart at a random place (fast-check)', () => {
    const boundary = fc.integer({ min: 1, max: bytes.length - 1 });
    fc.assert(fc.property(fc.array(boundary, { maxLength: 40 }), boundary, (cuts, stopAt) => {
      expect(stopAndResume(lang, file, bytes, stopAt, cuts)).toEqual(comparable(whole));
    }), { numRuns: 300 });
  });
});

/**
 * The first run reads up to `stopAt` and stops without flushing (as the tailer stops); the
 * position it saves is where the second run starts.
 */
function stopAndResume(lang: string, file: string, bytes: Buffer, stopAt: number, cuts: readonly number[]): unknown[] {
  const first = reader(lang, file);
  const before = take(first, bytes, 0, stopAt, cuts);
  // What LogTailer.commit saves with the events.
  const saved = first.parser.safeOffset() ?? first.splitter.consumedOffset;
  expect(saved === 0 || bytes[saved - 1] === NEWLINE, `saved position ${saved} (stopped at ${stopAt}) is a line start`).toBe(true);
  const second = reader(lang, file, saved);
  const after = [...take(second, bytes, saved, bytes.length, cuts), ...second.parser.flush()];
  return comparable([...before, ...after]);
}
