import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeLineParser } from './autoanalyze.js';
import { vacuumLineParser } from './autovacuum.js';
import { partTable } from './fields.js';
import { ReportBody } from './report-body.js';
import { partsAfter, type LineParser } from './usage-lines.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/logs');

/**
 * The vacuum and analyze reports of every stderr fixture log (real PostgreSQL 15, 18, 19 and the
 * synthetic 13/14): header without the prefix, then each TAB-continued line.
 */
function fixtureReports(): Array<{ kind: 'vacuum' | 'analyze'; message: string }> {
  const reports: Array<{ kind: 'vacuum' | 'analyze'; message: string }> = [];
  for (const dir of readdirSync(FIXTURES).filter((d) => d.includes('-stderr-'))) {
    for (const file of readdirSync(path.join(FIXTURES, dir)).filter((f) => f.endsWith('.log'))) {
      const lines = readFileSync(path.join(FIXTURES, dir, file), 'utf8').split('\n');
      lines.forEach((line, i) => {
        const header = /LOG: {2}(automatic (?:aggressive )?(vacuum|analyze).*)$/.exec(line);
        if (header === null) return;
        const body: string[] = [];
        for (let j = i + 1; lines[j]?.startsWith('\t'); j++) body.push(lines[j]!.slice(1));
        reports.push({ kind: header[2] === 'vacuum' ? 'vacuum' : 'analyze', message: [header[1], ...body].join('\n') });
      });
    }
  }
  return reports;
}

/** A seeded generator: the same variants every run. */
function randomFrom(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
}

/** Variants of a report: other figures, lines dropped, doubled or unknown, odd spacing, odd index names. */
function variant(message: string, next: (n: number) => number): string {
  const [header, ...lines] = message.split('\n');
  const figures = ['0', '7', '12345678901234567890', '3.5', '1.2.3', '.', '-4'];
  const changed = lines.map((line) => line.replace(/\d+(?:\.\d+)?/g, (n) => (next(4) === 0 ? figures[next(figures.length)]! : n)));
  switch (next(9)) {
    case 0: changed.splice(next(changed.length + 1), 1); break;
    case 1: changed.splice(next(changed.length + 1), 0, changed[next(changed.length)] ?? ''); break;
    case 2: changed.splice(next(changed.length + 1), 0, 'something new: 5 widgets'); break;
    case 3: changed[next(changed.length)] += ', 7 widgets'; break;
    case 4: changed[next(changed.length)] += ' '; break;
    case 5: changed.splice(next(changed.length + 1), 0, ''); break;
    case 6: changed.splice(next(changed.length + 1), 0, 'index "a": pages: 1 in total": pages: 2 in total, 0 newly deleted, 0 currently deleted, 0 reusable'); break;
    case 7: changed.splice(next(changed.length + 1), 0, 'index "b": pages: 3 in total, 0 reusable, 0 newly deleted'); break;
    default: break;
  }
  return [header, ...changed].join('\n');
}

function readWith<T>(body: ReportBody<T>, message: string, table: string): { read: unknown; unknown: string[] } {
  const read = { indexes: [] } as unknown as T;
  const unknown: string[] = [];
  body.read(message, table, read, unknown);
  return { read, unknown };
}

describe('ReportBody', () => {
  const reports = fixtureReports();

  it('finds the reports of the fixture logs', () => {
    expect(reports.filter((r) => r.kind === 'vacuum').length).toBeGreaterThan(20);
    expect(reports.filter((r) => r.kind === 'analyze').length).toBeGreaterThan(20);
  });

  it('reads every report as a reader that never saw one before, whatever the reports before it', () => {
    const next = randomFrom(19);
    const parsers: Record<'vacuum' | 'analyze', (line: string) => LineParser<unknown> | undefined> = {
      vacuum: vacuumLineParser as (line: string) => LineParser<unknown> | undefined,
      analyze: analyzeLineParser as (line: string) => LineParser<unknown> | undefined,
    };
    const warm = { vacuum: new ReportBody(parsers.vacuum), analyze: new ReportBody(parsers.analyze) };
    for (let round = 0; round < 20; round++) {
      reports.forEach(({ kind, message }, index) => {
        // Reports of a table as a busy server writes them: mostly of a shape seen before, some not.
        const table = `t${index}`;
        for (const text of [message, variant(message, next)]) {
          const cold = readWith(new ReportBody(parsers[kind]), text, table);
          expect(readWith(warm[kind], text, table), text).toEqual(cold);
        }
      });
    }
    // The comparison is only worth something if the warm readers used their shapes.
    for (const body of [warm.vacuum, warm.analyze]) expect(body.reads.shaped).toBeGreaterThan((body.reads.shaped + body.reads.lineByLine) / 3);
  });

  it('reads a report by the shape of its table, not of the last report read', () => {
    const body = new ReportBody(analyzeLineParser as (line: string) => LineParser<unknown> | undefined);
    const a = 'automatic analyze of table "d.s.a"\nbuffer usage: 1 hits, 2 reads, 3 dirtied\nsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.01 s';
    const b = 'automatic analyze of table "d.s.b"\nWAL usage: 1 records, 0 full page images, 0 bytes\nsystem usage: CPU: user: 0.00 s, system: 0.00 s, elapsed: 0.02 s';
    for (let i = 0; i < 3; i++) {
      readWith(body, a, 'a');
      readWith(body, b, 'b');
    }
    expect(body.reads).toEqual({ shaped: 4, lineByLine: 2 });
  });

  it('gives a part to the first template that matches it also in a line that is not the last', () => {
    type Read = Record<string, number | null>;
    // "{int} x" and "{dec} x" both match "1 x": the first in table order must win, as line by line.
    const figures = partsAfter<Read>('figures: ', partTable<Read>([
      ['{int} x', (v, r) => (r.int_x = v[0] ?? null)],
      ['{dec} x', (v, r) => (r.dec_x = v[0] ?? null)],
    ]));
    const other = partsAfter<Read>('other: ', partTable<Read>([['{int} y', (v, r) => (r.y = v[0] ?? null)]]));
    const body = new ReportBody<Read>((line) => (line.startsWith('figures') ? figures : line.startsWith('other') ? other : undefined));
    const read = (message: string): Read => {
      const into: Read = {};
      body.read(message, 't', into, []);
      return into;
    };
    expect(read('header\nfigures: 1.5 x\nother: 2 y')).toEqual({ dec_x: 1.5, y: 2 });
    expect(read('header\nfigures: 1 x\nother: 2 y')).toEqual({ int_x: 1, y: 2 });
    expect(body.reads).toEqual({ shaped: 0, lineByLine: 2 });
  });
});
