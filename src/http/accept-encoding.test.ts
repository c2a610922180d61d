import { describe, expect, it } from 'vitest';
import { acceptsGzip } from './accept-encoding.js';

describe('acceptsGzip', () => {
  const cases: Array<[string | undefined, boolean]> = [
    // Prometheus's scrape header, and curl --compressed's.
    ['gzip', true],
    ['deflate, gzip, br, zstd', true],
    [undefined, false],
    ['', false],
    ['identity', false],
    ['br, deflate', false],
    ['GZIP', true],
    ['x-gzip', true],
    ['gzip;q=0.5, identity', true],
    ['gzip; q=0', false],
    ['gzip;q=0.000', false],
    ['*', true],
    ['*;q=0', false],
    // A named coding wins over the wildcard.
    ['*, gzip;q=0', false],
    ['gzip;q=0, *', false],
    ['br, *;q=0.1', true],
    ['gzip;q=banana', false],
    ['gzip;q=1.5', false],
  ];

  it.each(cases)('%j -> %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
