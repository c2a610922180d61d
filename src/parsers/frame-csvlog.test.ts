import { describe, expect, it } from 'vitest';
import { CsvlogFramer } from './frame-csvlog.js';
import { feedAll, physicalLines } from './physical-lines.js';

const framer = (batchRecords?: number): CsvlogFramer => new CsvlogFramer({ file: 'postgresql.csv', batchRecords });
const text = (...lines: string[]): string => `${lines.join('\n')}\n`;

// Records as write_csvlog() (csvlog.c) writes them: strings quoted with "" doubling, raw newlines.
const DEADLOCK_PG15 = [
  '2026-10-14 03:32:00.500 UTC,"app","shop",60001,"10.1.2.3:53312",6529a1b2.ea61,5,"UPDATE",2026-10-14 03:31:00 UTC,3/1234,1873501,ERROR,40P01,"deadlock detected","Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.',
  'Process 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
  'Process 60001: UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
  'Process 60002: UPDATE accounts SET balance = balance - 10 WHERE id = 2;","See server log for query details.",,,"while updating tuple (0,2) in relation ""accounts""","UPDATE accounts SET balance = balance - 10 WHERE id = 1;",,,"psql","client backend",,0',
];
const AUTOVACUUM_PG13 = [
  '2026-10-14 03:12:45.123 UTC,,,41235,,6529a1b2.a113,1,,2026-10-14 03:12:23 UTC,4/77,0,LOG,00000,"automatic vacuum of table ""shop.public.orders"": index scans: 1',
  'pages: 0 removed, 125000 remain, 0 skipped due to pins, 84512 skipped frozen',
  'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s",,,,,,,,,"","autovacuum worker"',
];
const DURATION_PG18 =
  '2026-10-14 06:01:00.001 UTC,"app","shop",60330,"[local]",6529a1b2.ebaa,12,"SELECT",2026-10-14 06:00:00 UTC,3/1234,0,LOG,00000,"duration: 1532.114 ms  statement: SELECT * FROM orders WHERE status = \'open\';",,,,,,,,,"psql","client backend",,-6747390187311187456';

describe('CsvlogFramer', () => {
  it('reads a record whose quoted fields span lines (PG 14+, 26 columns)', () => {
    const f = framer();
    const entries = feedAll(f, text(...DEADLOCK_PG15));
    expect(entries).toEqual([
      {
        tsMs: Date.parse('2026-10-14T03:32:00.500Z'), pid: 60001, level: 'ERROR', sqlstate: '40P01',
        user: 'app', database: 'shop', application: 'psql', backendType: 'client backend',
        message: 'deadlock detected',
        detail: [
          'Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.',
          'Process 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
          'Process 60001: UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
          'Process 60002: UPDATE accounts SET balance = balance - 10 WHERE id = 2;',
        ].join('\n'),
        hint: 'See server log for query details.',
        context: 'while updating tuple (0,2) in relation "accounts"',
        statement: 'UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
        query: null, location: null,
        source: { file: 'postgresql.csv', offset: 0, line: 1 },
      },
    ]);
    expect(f.stats).toMatchObject({ lines: 4, entries: 1, unparsed_lines: 0 });
  });

  it('reads PG 13 records (24 columns) of a background process', () => {
    const [e] = feedAll(framer(), text(...AUTOVACUUM_PG13));
    expect([e?.pid, e?.user, e?.database, e?.application, e?.backendType, e?.sqlstate]).toEqual([41235, null, null, null, 'autovacuum worker', '00000']);
    expect(e?.message.split('\n')).toEqual([
      'automatic vacuum of table "shop.public.orders": index scans: 1',
      'pages: 0 removed, 125000 remain, 0 skipped due to pins, 84512 skipped frozen',
      'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
    ]);
  });

  it('with batches of 1, returns each record on its last line and keeps safeOffset at the open record', () => {
    const f = framer(1);
    const lines = physicalLines(text(DURATION_PG18, ...DEADLOCK_PG15));
    const seen = lines.map((l) => ({ out: f.push(l).length, safe: f.safeOffset() }));
    const second = lines[1]?.offset;
    expect(seen).toEqual([
      { out: 1, safe: null },
      { out: 0, safe: second },
      { out: 0, safe: second },
      { out: 0, safe: second },
      { out: 1, safe: null },
    ]);
  });

  it('parses complete records in batches: returned when a batch fills or at flush, safeOffset at the oldest', () => {
    const f = framer(3);
    const lines = physicalLines(text(DURATION_PG18, ...DEADLOCK_PG15, DURATION_PG18, DURATION_PG18, DURATION_PG18));
    const seen = lines.map((l) => ({ out: f.push(l).map((e) => e.source.line), safe: f.safeOffset() }));
    expect(seen).toEqual([
      { out: [], safe: 0 },
      { out: [], safe: 0 },
      { out: [], safe: 0 },
      { out: [], safe: 0 },
      { out: [], safe: 0 },
      { out: [1, 2, 6], safe: null },
      { out: [], safe: lines[6]?.offset },
      { out: [], safe: lines[6]?.offset },
    ]);
    expect(f.flush().map((e) => e.source.line)).toEqual([7, 8]);
    expect(f.safeOffset()).toBeNull();
  });

  it('isolates a bad row inside a batch', () => {
    const f = framer(4);
    const entries = feedAll(f, text(DURATION_PG18, DURATION_PG18.replace('"app"', '"app"x'), DURATION_PG18, DURATION_PG18));
    expect(entries.map((e) => e.source.line)).toEqual([1, 3, 4]);
    expect(f.stats.unparsed_by_reason).toEqual({ csv_malformed: 1 });
  });

  const bad: Array<{ name: string; log: string; entries: number; reasons: Record<string, number> }> = [
    {
      name: 'a row cut mid-field, then a new record',
      log: text(DEADLOCK_PG15[0] as string, DURATION_PG18),
      entries: 1, reasons: { csv_truncated: 1 },
    },
    {
      name: 'a row cut mid-field at the end of the file',
      log: text(DURATION_PG18, ...DEADLOCK_PG15.slice(0, 2)),
      entries: 1, reasons: { csv_truncated: 2 },
    },
    { name: 'a row with too few columns', log: text('2026-10-14 06:01:00.001 UTC,"app","shop",60330,LOG,00000,"x"'), entries: 0, reasons: { csv_column_count: 1 } },
    { name: 'a stray quote', log: text(DURATION_PG18.replace('"app"', '"app"x')), entries: 0, reasons: { csv_malformed: 1 } },
    { name: 'an invalid date', log: text(DURATION_PG18.replace('2026-10-14 06:01', '2026-02-30 06:01')), entries: 0, reasons: { invalid_timestamp: 1 } },
    { name: 'a translated severity', log: text(DURATION_PG18.replace(',LOG,', ',FEHLER,')), entries: 0, reasons: { unknown_severity: 1 } },
    { name: 'binary garbage', log: text('\u0000\u0001\u00ff\ufffd PK\u0003\u0004'), entries: 0, reasons: { csv_column_count: 1 } },
  ];

  it.each(bad)('counts $name and goes on', ({ log, entries, reasons }) => {
    const f = framer();
    expect(feedAll(f, log)).toHaveLength(entries);
    expect(f.stats.unparsed_by_reason).toEqual(reasons);
  });
});
