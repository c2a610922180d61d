import { describe, expect, it } from 'vitest';
import { csvChunks, csvLine } from './copy-csv.js';

describe('COPY csv encoding', () => {
  it('quotes every string, leaves NULL unquoted and empty, and doubles quotes', () => {
    expect(csvLine(['a', '', null, 'say "hi", twice', 'two\nlines', '\\.', 42, -1.5])).toBe('"a","",,"say ""hi"", twice","two\nlines","\\.",42,-1.5\n');
  });

  it('turns a NUL into U+FFFD, raw or escaped in JSON, but not an escaped backslash before u0000', () => {
    expect(csvLine(['a\u0000b', '{"m":"x\\u0000y"}', '{"m":"x\\\\u0000y"}'])).toBe('"a\uFFFDb","{""m"":""x\\ufffdy""}","{""m"":""x\\\\u0000y""}"\n');
  });

  it('writes non-finite numbers as PostgreSQL spells them', () => {
    expect(csvLine([NaN, Infinity, -Infinity])).toBe('"NaN","Infinity","-Infinity"\n');
  });

  it('groups lines into chunks without splitting a line', () => {
    const chunks = [...csvChunks([1, 2, 3, 4, 5], (n) => [String(n).repeat(4)], 12)];
    expect(chunks).toEqual(['"1111"\n"2222"\n', '"3333"\n"4444"\n', '"5555"\n']);
  });
});
