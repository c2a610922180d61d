import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../lib/logger.js';
import { readShippedCatalogs } from '../parsers/lang/catalog.js';
import { Translator } from '../parsers/lang/translator.js';
import type { PhysicalLine } from '../parsers/framer.js';
import { feedAll } from '../parsers/physical-lines.js';
import { LineSplitter } from './line-reader.js';
import { addStats, SourceParser } from './source-parser.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/pg18-stderr-analyze-mixed/postgresql.log');
const bytes = readFileSync(FIXTURE);

function lines(): PhysicalLine[] {
  const out: PhysicalLine[] = [];
  const splitter = new LineSplitter();
  splitter.push(bytes, (l) => out.push(l));
  return out;
}

describe('SourceParser', () => {
  it('holds lines back until the format is detected, then parses them all, in order', () => {
    const auto = new SourceParser({ target: 't', format: 'auto' }, silentLogger());
    const known = new SourceParser({ target: 't', format: 'stderr', prefix: '%m [%p] %q%u@%d ' }, silentLogger());
    auto.openFile('f.log');
    known.openFile('f.log');
    const all = lines();
    const first = all.slice(0, 5).flatMap((l) => auto.push(l));
    expect(first).toEqual([]);
    expect(auto.format).toBeNull();
    expect(auto.safeOffset()).toBe(0);
    const rest = all.slice(5).flatMap((l) => auto.push(l));
    expect(auto.format).toEqual({ format: 'stderr', prefix: '%m [%p] %q%u@%d ' });
    const viaAuto = [...first, ...rest, ...auto.flush()];
    const viaKnown = [...all.flatMap((l) => known.push(l)), ...known.flush()];
    expect(viaAuto).toEqual(viaKnown);
  });

  it('with --prefix and --format auto, reads a prefix no common setting has, and still detects an envelope around it', () => {
    const prefix = '<%m|%p|%u|%d> ';
    const text = ['<2026-11-30 07:20:21.476 UTC|41235|app|shop> LOG:  checkpoint starting: time',
      '<2026-11-30 07:20:21.480 UTC|41236|app|shop> ERROR:  relation "nope" does not exist at character 15',
      '<2026-11-30 07:20:21.480 UTC|41236|app|shop> STATEMENT:  SELECT * FROM nope'];
    for (const [body, envelope] of [[text.join('\n'), undefined], [`${text[0]}\n${text[1]}\t${text[2]}`, 'joined']] as const) {
      const parser = new SourceParser({ target: 't', format: 'auto', prefix }, silentLogger());
      parser.openFile('f.log');
      const events = feedAll(parser, `${body}\n`);
      expect(parser.format).toMatchObject({ format: 'stderr', prefix });
      expect(parser.format?.envelope).toBe(envelope);
      expect(events.map((e) => [e.pid, e.user, e.database, e.level])).toEqual([[41235, 'app', 'shop', 'LOG'], [41236, 'app', 'shop', 'ERROR']]);
    }
  });

  it('takes a decision at flush even on few lines', () => {
    const parser = new SourceParser({ target: 't', format: 'auto' }, silentLogger());
    parser.openFile('f.log');
    for (const line of lines().slice(0, 3)) parser.push(line);
    expect(parser.flush()).toHaveLength(3);
    expect(parser.format?.format).toBe('stderr');
    expect(parser.safeOffset()).toBeNull();
  });

  it('adds up statistics across files', () => {
    const parser = new SourceParser({ target: 't', format: 'stderr', prefix: '%m [%p] %q%u@%d ' }, silentLogger());
    const all = lines();
    for (const file of ['a.log', 'b.log']) {
      parser.openFile(file);
      for (const line of all) parser.push(line);
      parser.flush();
    }
    expect(parser.stats()?.lines).toBe(2 * all.length);
  });
});

describe('addStats', () => {
  it('adds numbers and maps of numbers, concatenates lists', () => {
    expect(addStats({ a: 1, m: { x: 1 }, l: [1] }, { a: 2, m: { x: 2, y: 3 }, l: [2] })).toEqual({ a: 3, m: { x: 3, y: 3 }, l: [1, 2] });
  });
});

describe('SourceParser.setLanguage (the server told its lc_messages after reading began)', () => {
  const german = readFileSync(path.resolve(path.dirname(FIXTURE), '../logs-lang/pg15-de-deadlock/deadlock.log'));

  it('finishes what was read before as it was read, and reads the next lines in the language', () => {
    const parser = new SourceParser({ target: 't', format: 'stderr', prefix: '%m [%p] %q%u@%d ' }, silentLogger());
    parser.openFile('deadlock.log');
    const splitter = new LineSplitter();
    const cut = german.indexOf('\n', german.indexOf('ZUSAMMENHANG')) + 1;
    const before = parser.take(splitter, german.subarray(0, cut));
    parser.setLanguage({ translator: new Translator(readShippedCatalogs('de').filter((c) => c.major === 15)) });
    const after = [...parser.take(splitter, german.subarray(cut)), ...parser.flush()];
    // The first entry was pending at the switch: flushed unread (English), so generic.
    expect([...before, ...after][0]).toMatchObject({ kind: 'generic', message: expect.stringMatching(/^Prozess \d+ wartet immer noch/) });
    expect([...before, ...after][0]?.language).toBeUndefined();
    expect(after.filter((e) => e.kind !== 'generic').map((e) => [e.kind, e.language])).toEqual([['lock_wait', 'de'], ['deadlock', 'de'], ['lock_wait', 'de']]);
  });
});
