import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-reader.js';
import type { PhysicalLine } from '../parsers/framer.js';

/** Pushes `input` cut at every offset in `cuts`, returns what was emitted before and at end(). */
function split(input: Buffer, cuts: number[], options = {}): { lines: PhysicalLine[]; afterEnd: PhysicalLine[]; splitter: LineSplitter } {
  const splitter = new LineSplitter(options);
  const lines: PhysicalLine[] = [];
  let from = 0;
  for (const cut of [...cuts, input.length]) {
    splitter.push(input.subarray(from, cut), (line) => lines.push(line));
    from = cut;
  }
  const afterEnd: PhysicalLine[] = [];
  splitter.end((line) => afterEnd.push(line));
  return { lines, afterEnd, splitter };
}

/** The reference answer: offsets found by scanning bytes, text decoded line by line. */
function reference(input: Buffer): Array<{ text: string; offset: number }> {
  const out: Array<{ text: string; offset: number }> = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a) {
      out.push({ text: input.toString('utf8', start, i), offset: start });
      start = i + 1;
    }
  }
  return out;
}

describe('LineSplitter', () => {
  const ascii = Buffer.from('first line\nsecond\n\nfourth after an empty one\npartial');
  const utf8 = Buffer.from('héllo wörld\n日本語のログ\n😀 emoji line\nplain\n', 'utf8');
  const invalid = Buffer.concat([Buffer.from('ok\nbad '), Buffer.from([0xe9, 0xff, 0xc3]), Buffer.from(' bytes\nafter\n')]);

  it.each([
    ['ascii', ascii],
    ['multi-byte utf-8', utf8],
    ['invalid utf-8', invalid],
  ])('gives exact byte offsets for %s input, whatever the chunk cuts', (_name, input) => {
    const expected = reference(input);
    for (let cut = 0; cut <= input.length; cut++) {
      for (const second of [cut, Math.min(input.length, cut + 3)]) {
        const { lines } = split(input, [cut, second]);
        expect(lines.map(({ text, offset }) => ({ text, offset }))).toEqual(expected);
      }
    }
  });

  it('gives exact lines and offsets in chunks of many ASCII slabs: long, empty and CRLF lines at any place', () => {
    let seed = 5;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const lengths = [0, 1, 12, 13, 80, 4095, 4096, 4097, 9000];
    const lines = Array.from({ length: 400 }, (_, i) => `${i}:${'x'.repeat(lengths[next(lengths.length)]!)}${next(5) === 0 ? '\r' : ''}`);
    const input = Buffer.from(`${lines.join('\n')}\n`);
    const expected = reference(input).map(({ text, offset }) => ({ text: text.endsWith('\r') ? text.slice(0, -1) : text, offset }));
    for (const cuts of [[], [65_536, 131_072, 196_608], Array.from({ length: 20 }, () => next(input.length)).sort((a, b) => a - b)]) {
      const { lines: got } = split(input, cuts, { maxLineBytes: 1 << 20 });
      expect(got.map(({ text, offset }) => ({ text, offset }))).toEqual(expected);
    }
  });

  it('never emits a partial last line until end() is called', () => {
    const { lines, afterEnd, splitter } = split(ascii, [5]);
    expect(lines.at(-1)?.text).toBe('fourth after an empty one');
    expect(afterEnd).toEqual([{ text: 'partial', offset: ascii.length - 'partial'.length, line: 5 }]);
    expect(splitter.consumedOffset).toBe(ascii.length);
  });

  it('reports the consumed offset at the start of an unfinished line', () => {
    const splitter = new LineSplitter({ startOffset: 1000, startLine: null });
    const lines: PhysicalLine[] = [];
    splitter.push(Buffer.from('abc\nde'), (l) => lines.push(l));
    expect(lines).toEqual([{ text: 'abc', offset: 1000, line: null }]);
    expect(splitter.consumedOffset).toBe(1004);
    expect(splitter.pendingBytes).toBe(2);
    splitter.push(Buffer.from('f\n'), (l) => lines.push(l));
    expect(lines[1]).toEqual({ text: 'def', offset: 1004, line: null });
    expect(splitter.consumedOffset).toBe(1008);
  });

  it('numbers lines from 1 by default', () => {
    const { lines } = split(Buffer.from('a\nb\nc\n'), [3]);
    expect(lines.map((l) => l.line)).toEqual([1, 2, 3]);
  });

  it('drops a trailing carriage return', () => {
    const { lines } = split(Buffer.from('dos line\r\nnext\r\n'), [9]);
    expect(lines.map((l) => l.text)).toEqual(['dos line', 'next']);
    expect(lines[1]?.offset).toBe(10);
  });

  it('keeps the first maxLineBytes of an over-long line, counts it and skips to its newline', () => {
    const long = 'x'.repeat(5000);
    const input = Buffer.from(`short\n${long}\nafter\n`);
    const cuts = [100, 1000, 2000, 4000];
    const { lines, splitter } = split(input, cuts, { maxLineBytes: 1024 });
    expect(lines.map((l) => l.text.length)).toEqual([5, 1024, 5]);
    expect(lines[2]).toEqual({ text: 'after', offset: 6 + 5000 + 1, line: 3 });
    expect(splitter.stats).toEqual({ lines: 3, overLongLines: 1, skippedBytes: 5000 - 1024 });
  });

  it('cuts an over-long line at a character boundary: the limit inside `日` keeps none of its bytes', () => {
    const long = '日'.repeat(2000); // 3 bytes each; 1024 is 1 byte into the 342nd
    const input = Buffer.from(`${long}\n€\n`);
    // Cut where the line is held across chunks: the limit applies to held lines.
    for (const cuts of [[1], [1023], [1025, 3000]]) {
      const { lines, splitter } = split(input, cuts, { maxLineBytes: 1024 });
      expect(lines.map((l) => l.text)).toEqual(['日'.repeat(341), '€']);
      expect(splitter.stats.skippedBytes).toBe(6000 - 341 * 3);
    }
  });

  it('replaces invalid bytes instead of throwing', () => {
    const { lines } = split(invalid, []);
    expect(lines[1]?.text).toBe('bad \ufffd\ufffd\ufffd bytes');
  });

  it('restarts at a given offset after reset()', () => {
    const splitter = new LineSplitter();
    const lines: PhysicalLine[] = [];
    splitter.push(Buffer.from('old data\nunfinished'), (l) => lines.push(l));
    splitter.reset(0, 1);
    splitter.push(Buffer.from('new\n'), (l) => lines.push(l));
    expect(lines.at(-1)).toEqual({ text: 'new', offset: 0, line: 1 });
  });
});
