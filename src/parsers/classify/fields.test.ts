import { describe, expect, it } from 'vitest';
import { MAX_SHAPES, partTable, readParts, toFloat, toInt, type PartSpec } from './fields.js';

type Read = Record<string, number | null>;

const SPECS: readonly PartSpec<Read>[] = [
  ['{int} hits', (v, r) => (r.hits = v[0] ?? null)],
  ['{int} misses', (v, r) => (r.reads = v[0] ?? null)],
  ['{int} scanned ({dec}% of total)', (v, r) => {
    r.scanned = v[0] ?? null;
    r.scanned_pct = v[1] ?? null;
  }],
  ['avg read rate: {dec} MB/s', (v, r) => (r.rate = v[0] ?? null)],
  // Overlaps the next one on "1 x": the first in table order must win.
  ['{int} x', (v, r) => (r.int_x = v[0] ?? null)],
  ['{dec} x', (v, r) => (r.dec_x = v[0] ?? null)],
  ['no figure', (_v, r) => (r.none = 1)],
];

/** What split(", ") and the first anchored regex per part read: the behaviour readParts keeps. */
function reference(body: string): { all: boolean; read: Read } {
  const read: Read = {};
  let all = true;
  const patterns = SPECS.map(([template]) => new RegExp(`^${template
    .replace(/[\\^$.*+?()[\]|/]/g, '\\$&')
    .replaceAll('{int}', '(\\d+)')
    .replaceAll('{dec}', '([\\d.]+)')}$`));
  for (const piece of body.split(', ')) {
    const index = patterns.findIndex((p) => p.test(piece));
    if (index < 0) {
      all = false;
      continue;
    }
    const groups = patterns[index]!.exec(piece)!;
    const decs = [...SPECS[index]![0].matchAll(/\{(int|dec)\}/g)].map((m) => m[1] === 'dec');
    SPECS[index]![1](decs.map((dec, i) => (dec ? toFloat(groups[i + 1]) : toInt(groups[i + 1]))), read);
  }
  return { all, read };
}

function read(table: ReturnType<typeof partTable<Read>>, text: string, start = 0): { all: boolean; read: Read } {
  const into: Read = {};
  const all = readParts(text, start, table, into);
  return { all, read: into };
}

describe('toInt and toFloat', () => {
  it('read every string as Number() does', () => {
    const fixed = ['0', '7', '007', '42', '1.', '.5', '.', '..', '1.2.3', '0.000', '3.853', '19.361', '123456789012345', '1234567890123456',
      '12345678901234.5', '1234567890123.45', '99999999999999999999', '9007199254740993', '-5', '+5', ' 5', '5 ', '1e3', '0x10', 'Infinity', 'NaN', 'abc'];
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const random = Array.from({ length: 5000 }, () => Array.from({ length: 1 + next(18) }, () => '0123456789.'[next(next(4) === 0 ? 11 : 10)]).join(''));
    for (const text of [...fixed, ...random]) {
      const number = Number(text);
      expect(toInt(text), text).toBe(Number.isInteger(number) ? number : null);
      expect(toFloat(text), text).toBe(Number.isFinite(number) ? number : null);
    }
    expect([toInt(''), toInt(undefined), toFloat(''), toFloat(undefined)]).toEqual([null, null, null, null]);
  });
});

describe('readParts', () => {
  it('reads every part with its values', () => {
    const table = partTable(SPECS);
    expect(read(table, 'buffer usage: 12 hits, 7 misses', 'buffer usage: '.length)).toEqual({ all: true, read: { hits: 12, reads: 7 } });
    expect(read(table, '1 scanned (1.82% of total), avg read rate: 19.361 MB/s')).toEqual({ all: true, read: { scanned: 1, scanned_pct: 1.82, rate: 19.361 } });
  });

  it('gives the part to the first template that matches it, on a learnt line too', () => {
    const table = partTable(SPECS);
    for (let i = 0; i < 2; i++) {
      expect(read(table, '1 x, 1.5 x')).toEqual({ all: true, read: { int_x: 1, dec_x: 1.5 } });
      expect(read(table, '2.5 x, 3 x')).toEqual({ all: true, read: { dec_x: 2.5, int_x: 3 } });
    }
  });

  it('keeps the known parts of a line with an unknown, empty or malformed part', () => {
    const table = partTable(SPECS);
    read(table, '1 hits, 2 misses, 3 x'); // learns three parts
    expect(read(table, '1 hits, 2 evictions, 3 x')).toEqual({ all: false, read: { hits: 1, int_x: 3 } });
    expect(read(table, '1 hits, , 3 x')).toEqual({ all: false, read: { hits: 1, int_x: 3 } });
    expect(read(table, '1 hits, 2 misses, ')).toEqual({ all: false, read: { hits: 1, reads: 2 } });
    expect(read(table, '1 hits,2 misses')).toEqual({ all: false, read: {} });
    expect(read(table, '')).toEqual({ all: false, read: {} });
    expect(read(table, 'buffer usage:', 'buffer usage: '.length)).toEqual({ all: false, read: {} });
  });

  it('reads as split(", ") and the first matching anchored regex would, whatever the line', () => {
    // A seeded walk over lines made of known parts, near misses and separators.
    const fragments = ['no figure', 'no figures', '1 hits', '22 misses', '3 scanned (4.5% of total)', 'avg read rate: 6.7 MB/s', '8 x', '9.1 x', '1.2.3 x',
      '12345678901234567890 hits', '. x', 'x', '', ' hits', '5 hits ', '1 scanned (2% of total)', 'avg read rate: . MB/s'];
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const table = partTable(SPECS);
    for (let i = 0; i < 2000; i++) {
      const parts = Array.from({ length: 1 + next(5) }, () => fragments[next(fragments.length)]!);
      const line = parts.join(next(10) === 0 ? ',' : ', ');
      expect(read(table, line), line).toEqual(reference(line));
    }
  });

  it('keeps a bounded number of line shapes, and reads the lines past them the same', () => {
    const table = partTable(SPECS);
    const figures = ['1 hits', '2 misses', '3 x', '4.5 x', 'no figure'];
    for (let i = 0; i < 5 ** 4; i++) {
      const line = [0, 1, 2, 3].map((k) => figures[Math.floor(i / 5 ** k) % 5]!).join(', ');
      expect(read(table, line), line).toEqual(reference(line));
    }
    expect(table.shapes.size).toBe(MAX_SHAPES);
  });

  it('refuses a template that could match the separator', () => {
    expect(() => partTable<Read>([['{int} a, b', () => undefined]])).toThrow(/separator/);
  });
});
