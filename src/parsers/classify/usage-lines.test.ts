import { describe, expect, it } from 'vitest';
import { LineTable, type LineParser } from './usage-lines.js';

describe('LineTable', () => {
  it('finds the parser of the text before the first colon, as a Map lookup of that text would', () => {
    const parsers = new Map<string, LineParser<unknown>>(
      ['', 'system usage', 'buffer usage', 'memory usage', 'pages', 'tuples', 'index scan needed', 'index scan not needed', 'avg read rate', 'WAL usage', 'frozen', 'I/O timings'].map((key) => [key, () => true]),
    );
    const table = new LineTable(parsers);
    const lines = ['pages: 0 removed', 'tuples: 1 remain', 'index scan needed: 3 pages', 'index scan not needed: 0 pages', 'avg read rate: 1 MB/s',
      'WAL usage: 1 records', 'frozen: 0 pages', 'I/O timings: read: 1 ms', 'pages', 'pagesX: 1', 'page: 1', 'Pages: 1', 'frozen', ': x', '',
      'index scan bypassed: 1', 'tuples missed: 1 dead', 'system usage: CPU', 'buffer usage: 1 hits', 'memory usage: x', 'bemory usage: x'];
    for (const line of lines) {
      const colon = line.indexOf(':');
      expect(table.get(line), line).toBe(parsers.get(colon < 0 ? line : line.slice(0, colon)));
    }
  });
});
