import { describe, expect, it } from 'vitest';
import { copyChunks, copyLine, textArrayLiteral } from './copy-text.js';

describe('COPY text encoding', () => {
  it('separates fields by tabs, writes NULL as \\N and an empty string as nothing, and leaves quotes and commas alone', () => {
    expect(copyLine(['a', '', null, 'say "hi", twice', '{"k":"v"}', 42, -1.5])).toBe('a\t\t\\N\tsay "hi", twice\t{"k":"v"}\t42\t-1.5\n');
  });

  it('escapes backslashes, line breaks and tabs, so a line \\. cannot end the data', () => {
    expect(copyLine(['two\nlines\r\nand CRLF', 'a\tb', '\\.', '{"m":"a\\"b"}'])).toBe('two\\nlines\\r\\nand CRLF\ta\\tb\t\\\\.\t{"m":"a\\\\"b"}\n');
  });

  it('turns a NUL into U+FFFD, raw or escaped in JSON, but not an escaped backslash before u0000', () => {
    expect(copyLine(['a\u0000b', '{"m":"x\\u0000y"}', '{"m":"x\\\\u0000y"}'])).toBe('a\uFFFDb\t{"m":"x\\\\ufffdy"}\t{"m":"x\\\\\\\\u0000y"}\n');
  });

  it('writes non-finite numbers as PostgreSQL spells them', () => {
    expect(copyLine([NaN, Infinity, -Infinity])).toBe('NaN\tInfinity\t-Infinity\n');
  });

  it('groups lines into chunks without splitting a line', () => {
    const chunks = [...copyChunks([1, 2, 3, 4, 5], (n) => [String(n).repeat(4)], 10)];
    expect(chunks).toEqual(['1111\n2222\n', '3333\n4444\n', '5555\n']);
  });

  it('writes a text[] literal with every element quoted, its quotes and backslashes escaped, and COPY escaping on top', () => {
    const literal = textArrayLiteral(['{"m":"say \\"hi\\""}', 'a,b', '', 'NULL', 'back\\slash']);
    expect(literal).toBe('{"{\\"m\\":\\"say \\\\\\"hi\\\\\\"\\"}","a,b","","NULL","back\\\\slash"}');
    expect(copyLine([literal])).toBe(`${literal.replace(/\\/g, '\\\\')}\n`);
  });
});
