import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../domain/log-entry.js';
import { StderrFramer, type StderrFramerOptions } from './frame-stderr.js';
import { feedAll, physicalLines } from './physical-lines.js';

const DEBIAN = '%m [%p] %q%u@%d ';

function framer(options: Partial<StderrFramerOptions> = {}): StderrFramer {
  return new StderrFramer({ file: 'postgresql.log', prefix: DEBIAN, ...options });
}

function entry(fields: Partial<LogEntry>): LogEntry {
  return {
    tsMs: null, pid: null, level: 'LOG', sqlstate: null, user: null, database: null, application: null, backendType: null,
    message: '', detail: null, hint: null, context: null, statement: null, query: null, location: null,
    source: { file: 'postgresql.log', offset: 0, line: 1 }, ...fields,
  };
}

const text = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('StderrFramer: multi-line entries', () => {
  it('folds DETAIL (with tab-continued lines), HINT, CONTEXT and STATEMENT into the deadlock ERROR', () => {
    const log = text(
      '2026-10-14 03:32:00.500 UTC [60001] app@shop ERROR:  deadlock detected',
      '2026-10-14 03:32:00.500 UTC [60001] app@shop DETAIL:  Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.',
      '\tProcess 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
      '\tProcess 60001: UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
      '\tProcess 60002: UPDATE accounts SET balance = balance - 10 WHERE id = 2;',
      '2026-10-14 03:32:00.500 UTC [60001] app@shop HINT:  See server log for query details.',
      '2026-10-14 03:32:00.500 UTC [60001] app@shop CONTEXT:  while updating tuple (0,2) in relation "accounts"',
      '2026-10-14 03:32:00.500 UTC [60001] app@shop STATEMENT:  UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
      '2026-10-14 03:32:01.000 UTC [60001] app@shop LOG:  duration: 0.101 ms  statement: ROLLBACK;',
    );
    const f = framer();
    const entries = feedAll(f, log);
    expect(entries).toEqual([
      entry({
        tsMs: Date.parse('2026-10-14T03:32:00.500Z'), pid: 60001, level: 'ERROR', user: 'app', database: 'shop',
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
      }),
      entry({
        tsMs: Date.parse('2026-10-14T03:32:01.000Z'), pid: 60001, user: 'app', database: 'shop',
        message: 'duration: 0.101 ms  statement: ROLLBACK;',
        source: { file: 'postgresql.log', offset: physicalLines(log)[8]?.offset ?? -1, line: 9 },
      }),
    ]);
    expect(f.stats).toMatchObject({ lines: 9, entries: 2, unparsed_lines: 0 });
  });

  it('joins an autovacuum report into one message, tabs stripped (PG 19, parallel workers)', () => {
    const lines = [
      'pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total), 812 eagerly scanned',
      'tuples: 912345 removed, 8123456 remain, 20310 are dead but not yet removable',
      'removable cutoff: 1873421, which was 48211 XIDs old when operation ended',
      'index scan needed: 24111 pages from table (19.29% of total) had 912345 dead item identifiers removed',
      'parallel workers: index vacuum: 2 planned, 2 launched in total',
      'memory usage: dead item storage 4.52 MB accumulated across 1 reset (limit 64.00 MB each)',
      'system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s',
    ];
    const log = text(
      '2026-10-14 03:12:45.123 UTC [41235] LOG:  automatic vacuum of table "shop.public.orders": index scans: 1',
      ...lines.map((l) => `\t${l}`),
    );
    expect(feedAll(framer(), log)).toEqual([
      entry({
        tsMs: Date.parse('2026-10-14T03:12:45.123Z'), pid: 41235,
        message: ['automatic vacuum of table "shop.public.orders": index scans: 1', ...lines].join('\n'),
      }),
    ]);
  });

  it('puts a tab-continued line into the field it follows: CONTEXT then WAL redo on a PG 19 standby', () => {
    // Observed on a real 19rc1 standby (pg-messages.md §13.1).
    const log = text(
      '2026-10-14 03:19:31.402 UTC [4011] LOG:  recovery still waiting after 1000.123 ms: recovery conflict on lock',
      '2026-10-14 03:19:31.402 UTC [4011] DETAIL:  Conflicting process: 52311.',
      '2026-10-14 03:19:31.402 UTC [4011] CONTEXT:  waiting for AccessExclusiveLock on relation 16402 of database 16384',
      '\tWAL redo at 0/0160A3F8 for Standby/LOCK: xid 1873502 db 16384 rel 16402 ',
    );
    const [e] = feedAll(framer(), log);
    expect(e?.message).toBe('recovery still waiting after 1000.123 ms: recovery conflict on lock');
    expect(e?.detail).toBe('Conflicting process: 52311.');
    expect(e?.context).toBe(
      'waiting for AccessExclusiveLock on relation 16402 of database 16384\nWAL redo at 0/0160A3F8 for Standby/LOCK: xid 1873502 db 16384 rel 16402 ',
    );
  });

  it('keeps two-line CONTEXT of a cancelled autovacuum and two-line HINTs', () => {
    const log = text(
      '2026-10-14 03:14:10.001 UTC [41300] ERROR:  canceling autovacuum task',
      '2026-10-14 03:14:10.001 UTC [41300] CONTEXT:  while scanning block 88123 of relation "public.orders"',
      '\tautomatic vacuum of table "shop.public.orders"',
      '2026-10-14 03:15:00.000 UTC [41301] WARNING:  bypassing nonessential maintenance of table "shop.public.orders" as a failsafe after 2 index scans',
      "2026-10-14 03:15:00.000 UTC [41301] DETAIL:  The table's relfrozenxid or relminmxid is too far in the past.",
      '2026-10-14 03:15:00.000 UTC [41301] HINT:  Consider increasing configuration parameter "maintenance_work_mem" or "autovacuum_work_mem".',
      '\tYou might also need to consider other ways for VACUUM to keep up with the allocation of transaction IDs.',
    );
    const entries = feedAll(framer(), log);
    expect(entries.map((e) => [e.level, e.context, e.hint])).toEqual([
      ['ERROR', 'while scanning block 88123 of relation "public.orders"\nautomatic vacuum of table "shop.public.orders"', null],
      [
        'WARNING', null,
        'Consider increasing configuration parameter "maintenance_work_mem" or "autovacuum_work_mem".\n' +
          'You might also need to consider other ways for VACUUM to keep up with the allocation of transaction IDs.',
      ],
    ]);
  });

  it('folds the lines of each process into its own entry when backends interleave, and keeps file order', () => {
    const log = text(
      '2026-10-14 03:30:00.001 UTC [60001] app@shop LOG:  process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms',
      '2026-10-14 03:30:00.002 UTC [60330] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
      '2026-10-14 03:30:00.001 UTC [60001] app@shop DETAIL:  Process holding the lock: 59990. Wait queue: 60001.',
      '2026-10-14 03:30:00.003 UTC [60321] app@shop LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60321.0", size 1073741824',
      '2026-10-14 03:30:00.001 UTC [60001] app@shop CONTEXT:  while updating tuple (12,7) in relation "orders"',
      '2026-10-14 03:30:00.003 UTC [60321] app@shop STATEMENT:  SELECT customer_id, sum(total) FROM orders GROUP BY 1 ORDER BY 2 DESC;',
      "2026-10-14 03:30:00.001 UTC [60001] app@shop STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;",
    );
    const entries = feedAll(framer(), log);
    expect(entries.map((e) => [e.pid, e.source.line, e.detail, e.context, e.statement])).toEqual([
      [60001, 1, 'Process holding the lock: 59990. Wait queue: 60001.', 'while updating tuple (12,7) in relation "orders"',
        "UPDATE orders SET status = 'paid' WHERE id = 42;"],
      [60330, 2, null, null, null],
      [60321, 4, null, null, 'SELECT customer_id, sum(total) FROM orders GROUP BY 1 ORDER BY 2 DESC;'],
    ]);
  });

  it('returns an entry as soon as its process starts the next one, without waiting for flush', () => {
    const f = framer();
    const [a, b, c] = physicalLines(text(
      '2026-10-14 06:01:00.001 UTC [60330] app@shop LOG:  duration: 1.000 ms  statement: BEGIN;',
      '2026-10-14 06:01:00.002 UTC [60331] app@shop LOG:  duration: 1.000 ms  statement: BEGIN;',
      '2026-10-14 06:01:00.003 UTC [60330] app@shop LOG:  duration: 1.000 ms  statement: END;',
    ));
    expect(f.push(a!)).toEqual([]);
    expect(f.push(b!)).toEqual([]);
    expect(f.push(c!).map((e) => e.message)).toEqual(['duration: 1.000 ms  statement: BEGIN;']);
    expect(f.flush().map((e) => e.pid)).toEqual([60331, 60330]);
  });

  it('gives up waiting for more lines of an entry after interleaveWindowLines lines of others', () => {
    const f = framer({ interleaveWindowLines: 2 });
    const lines = physicalLines(text(
      '2026-10-14 03:30:00.001 UTC [60001] app@shop LOG:  process 60001 acquired ShareLock on transaction 1873501 after 5868.911 ms',
      '2026-10-14 03:30:00.002 UTC [60330] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
      '2026-10-14 03:30:00.003 UTC [60331] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
      '2026-10-14 03:30:00.004 UTC [60332] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
      '2026-10-14 03:30:00.001 UTC [60001] app@shop STATEMENT:  UPDATE orders SET status = 1;',
    ));
    const out = lines.map((l) => f.push(l).map((e) => e.pid));
    expect(out).toEqual([[], [], [], [60001], [60330]]);
    expect(f.stats.unparsed_by_reason).toEqual({ orphan_field: 1 });
  });

  it('with a window of 0 lines treats each message as contiguous (the logging collector)', () => {
    const f = framer({ interleaveWindowLines: 0 });
    const lines = physicalLines(text(
      '2026-10-14 03:30:00.001 UTC [60001] app@shop LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60001.0", size 8192',
      '2026-10-14 03:30:00.001 UTC [60001] app@shop STATEMENT:  SELECT 1;',
      '2026-10-14 03:30:00.002 UTC [60330] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
    ));
    expect(lines.map((l) => f.push(l).map((e) => e.pid))).toEqual([[], [], [60001]]);
  });
});

describe('StderrFramer: prefix fields and variants', () => {
  it('moves the SQLSTATE of log_error_verbosity = verbose out of the message, and keeps LOCATION', () => {
    const log = text(
      '2026-10-14 03:31:10.010 UTC [60001] app@shop ERROR:  55P03: canceling statement due to lock timeout',
      '2026-10-14 03:31:10.010 UTC [60001] app@shop CONTEXT:  while updating tuple (12,7) in relation "orders"',
      '2026-10-14 03:31:10.010 UTC [60001] app@shop LOCATION:  ProcessInterrupts, postgres.c:3389',
      "2026-10-14 03:31:10.010 UTC [60001] app@shop STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;",
      '2026-10-14 03:31:11.000 UTC [60001] app@shop LOG:  00000: duration: 3.000 ms',
      '2026-10-14 03:31:11.000 UTC [60001] app@shop LOCATION:  exec_simple_query, postgres.c:1376',
    );
    const entries = feedAll(framer(), log);
    expect(entries.map((e) => [e.sqlstate, e.message, e.location])).toEqual([
      ['55P03', 'canceling statement due to lock timeout', 'ProcessInterrupts, postgres.c:3389'],
      ['00000', 'duration: 3.000 ms', 'exec_simple_query, postgres.c:1376'],
    ]);
  });

  it('does not take an ordinary message start for a SQLSTATE', () => {
    const [e] = feedAll(framer(), text('2026-10-14 03:31:10.010 UTC [60001] app@shop LOG:  ABORT: no digit here'));
    expect([e?.sqlstate, e?.message]).toEqual([null, 'ABORT: no digit here']);
  });

  it("reads %e, %b, %a and pgBadger's prefix; [unknown] and empty values become null", () => {
    const f = framer({ prefix: '%t [%p]: [%l-1] db=%d,user=%u,app=%a,client=%h %b %e ' });
    const log = text(
      '2026-10-14 03:31:10 UTC [60001]: [3-1] db=shop,user=app,app=psql,client=[local] client backend 57014 ERROR:  canceling statement due to statement timeout',
      '2026-10-14 03:31:11 UTC [60400]: [1-1] db=[unknown],user=[unknown],app=[unknown],client=10.1.2.3 client backend 00000 LOG:  connection received: host=10.1.2.3 port=53312',
      '2026-10-14 03:31:12 UTC [41235]: [1-1] db=,user=,app=,client= autovacuum worker 00000 LOG:  automatic analyze of table "shop.public.orders"',
    );
    expect(feedAll(f, log).map((e) => [e.tsMs, e.user, e.database, e.application, e.backendType, e.sqlstate])).toEqual([
      [Date.parse('2026-10-14T03:31:10Z'), 'app', 'shop', 'psql', 'client backend', '57014'],
      [Date.parse('2026-10-14T03:31:11Z'), null, null, null, 'client backend', '00000'],
      [Date.parse('2026-10-14T03:31:12Z'), null, null, null, 'autovacuum worker', '00000'],
    ]);
  });

  it('reads %n epoch timestamps, the pid from %c without %p, and DEBUG as DEBUG1', () => {
    const f = framer({ prefix: '%n %c ' });
    const [e] = feedAll(f, text('1792120320.001 6529a1b2.ebaa DEBUG:  autovacuum: processing database "shop"'));
    expect([e?.tsMs, e?.pid, e?.level]).toEqual([1792120320001, 0xebaa, 'DEBUG1']);
  });

  it('folds fields by line order when the prefix has no pid at all', () => {
    const f = framer({ prefix: '%m ' });
    const entries = feedAll(f, text(
      '2026-10-14 06:00:01.222 UTC LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60321.0", size 1073741824',
      '2026-10-14 06:00:01.222 UTC STATEMENT:  SELECT 1;',
    ));
    expect(entries.map((e) => [e.pid, e.statement])).toEqual([[null, 'SELECT 1;']]);
  });

  it('reads times in the server zone and strips a CR of CRLF files', () => {
    const f = framer({ timezone: 'America/Chicago' });
    const [e] = feedAll(f, '2026-11-30 01:12:01.123 CST [60001] app@shop LOG:  statement: SELECT 1\r\n');
    expect([e?.tsMs, e?.message]).toEqual([Date.parse('2026-11-30T07:12:01.123Z'), 'statement: SELECT 1']);
  });

  it('drops BACKTRACE text but keeps the entry whole', () => {
    const entries = feedAll(framer(), text(
      '2026-10-14 03:31:10.010 UTC [60001] app@shop ERROR:  division by zero',
      '2026-10-14 03:31:10.010 UTC [60001] app@shop BACKTRACE:  postgres: app shop [local] SELECT(int4div+0x3c) [0x55d1]',
      '\tpostgres: app shop [local] SELECT(ExecInterpExpr+0x1d2) [0x55d2]',
      '2026-10-14 03:31:10.010 UTC [60001] app@shop STATEMENT:  SELECT 1/0;',
    ));
    expect(entries.map((e) => [e.message, e.statement])).toEqual([['division by zero', 'SELECT 1/0;']]);
  });
});

describe('StderrFramer: bad input is counted, never thrown', () => {
  const cases: Array<{ name: string; log: string; entries: number; reasons: Record<string, number>; options?: Partial<StderrFramerOptions> }> = [
    { name: 'binary garbage', log: text('\u0000\u0001\u00ff\ufffd\ufffdPK\u0003\u0004', 'ELF\u0002\u0001\u0001'), entries: 0, reasons: { prefix_mismatch: 2 } },
    {
      name: 'an invalid UTF-8 byte (decoded as U+FFFD) inside the prefix',
      log: text('2026-10-14 03:32:00.500 UTC [6\ufffd001] app@shop LOG:  duration: 1.000 ms'),
      entries: 0, reasons: { prefix_mismatch: 1 },
    },
    {
      name: 'invalid UTF-8 inside a message is kept',
      log: text("2026-10-14 03:32:00.500 UTC [60001] app@shop LOG:  statement: SELECT 'caf\ufffd'"),
      entries: 1, reasons: {},
    },
    { name: 'a continuation line with nothing before it', log: text('\tpages: 0 removed, 1 remain'), entries: 0, reasons: { orphan_continuation: 1 } },
    {
      name: 'a DETAIL whose process has no open entry',
      log: text('2026-10-14 03:19:31.402 UTC [4011] DETAIL:  Conflicting process: 52311.'),
      entries: 0, reasons: { orphan_field: 1 },
    },
    {
      name: 'an invalid date, and the continuation line after it',
      log: text('2026-02-30 03:12:45.123 UTC [41235] LOG:  automatic vacuum of table "shop.public.orders": index scans: 1', '\tpages: 0 removed, 1 remain'),
      entries: 0, reasons: { invalid_timestamp: 1, orphan_continuation: 1 },
    },
    {
      name: 'an ambiguous zone abbreviation without log_timezone',
      log: text('2026-11-30 01:12:01.123 CST [60001] app@shop LOG:  statement: SELECT 1'),
      entries: 0, reasons: { ambiguous_time_zone: 1 },
    },
    {
      name: 'a line of another program between entries, then a space-indented line',
      log: text(
        '2026-10-14 04:00:00.100 UTC [1001] LOG:  client backend (PID 60001) was terminated by signal 9: Killed',
        'TRAP: failed Assert("false"), File: "heapam.c", Line: 42, PID: 60001',
        '    continued without a tab',
      ),
      entries: 1, reasons: { prefix_mismatch: 2 },
    },
    { name: 'blank lines', log: '\n\n', entries: 0, reasons: { blank_line: 2 } },
    {
      name: 'a prefix that does not match the log',
      log: text('2026-10-14 03:12:45 UTC [41235]: [1-1] user=,db=,app=,client= LOG:  checkpoint starting: time'),
      entries: 0, reasons: { prefix_mismatch: 1 },
    },
  ];

  it.each(cases)('$name', ({ log, entries, reasons, options }) => {
    const f = framer(options);
    expect(feedAll(f, log)).toHaveLength(entries);
    expect(f.stats.unparsed_by_reason).toEqual(reasons);
    expect(f.stats.unparsed_lines).toBe(Object.values(reasons).reduce((a, b) => a + b, 0));
  });

  it('keeps at most 5 examples per reason, cut to 300 characters', () => {
    const f = framer();
    feedAll(f, text(...Array.from({ length: 20 }, (_, i) => `garbage ${i} ${'#'.repeat(1000)}`)));
    expect(f.stats.unparsed_by_reason).toEqual({ prefix_mismatch: 20 });
    expect(f.stats.examples).toHaveLength(5);
    expect(f.stats.examples[0]).toEqual({ reason: 'prefix_mismatch', offset: 0, line: 1, text: `garbage 0 ${'#'.repeat(290)}` });
  });

  it('survives a 100 MB line: unmatched it is counted, matched it becomes a message cut to 1 MiB', () => {
    const huge = 'x'.repeat(100 * 1024 * 1024);
    const f = framer();
    expect(f.push({ text: huge, offset: 0, line: 1 })).toEqual([]);
    f.push({ text: `2026-10-14 06:01:00.001 UTC [60330] app@shop LOG:  statement: ${huge}`, offset: huge.length + 1, line: 2 });
    const [e] = f.flush();
    expect(f.stats.unparsed_by_reason).toEqual({ prefix_mismatch: 1 });
    expect(f.stats.examples[0]?.text).toHaveLength(300);
    expect(f.stats.truncated_fields).toBe(2);
    expect(e?.message.startsWith('statement: xxx')).toBe(true);
    expect(e?.message.length).toBeLessThan(1024 * 1024);
  });

  it('caps a field that tab-continued lines keep growing, counting every line that did not fit', () => {
    const f = framer({ maxFieldChars: 120 });
    const header = 'automatic vacuum of table "shop.public.orders": index scans: 1'; // 62 characters
    const [e] = feedAll(f, text(
      `2026-10-14 03:12:45.123 UTC [41235] LOG:  ${header}`,
      ...Array.from({ length: 10 }, () => `\t${'y'.repeat(30)}`),
    ));
    // 62 + 31 fit; the second line is cut after 26 of its characters; the 8 after it are dropped.
    expect(e?.message).toBe(`${header}\n${'y'.repeat(30)}\n${'y'.repeat(26)}`);
    expect(f.stats.truncated_fields).toBe(9);
  });
});

describe('StderrFramer: safeOffset', () => {
  const log = text(
    '2026-10-14 03:30:00.001 UTC [60001] app@shop LOG:  process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms',
    '2026-10-14 03:30:00.002 UTC [60330] app@shop LOG:  duration: 0.412 ms  statement: BEGIN;',
    '2026-10-14 03:30:00.001 UTC [60001] app@shop DETAIL:  Process holding the lock: 59990. Wait queue: 60001.',
    '2026-10-14 03:30:00.003 UTC [60330] app@shop LOG:  duration: 0.100 ms  statement: END;',
    '2026-10-14 03:30:00.004 UTC [60001] app@shop LOG:  process 60001 acquired ShareLock on transaction 1873501 after 5868.911 ms',
    '2026-10-14 03:30:00.005 UTC [60330] app@shop LOG:  duration: 0.100 ms  statement: BEGIN;',
  );
  const lines = physicalLines(log);
  const offsetOf = (i: number): number => lines[i]?.offset ?? -1;

  it('is the first byte of the oldest entry not yet returned, null when none', () => {
    const f = framer();
    expect(f.safeOffset()).toBeNull();
    const seen = lines.map((l) => {
      const out = f.push(l).map((e) => e.source.line);
      return { out, safe: f.safeOffset() };
    });
    expect(seen).toEqual([
      { out: [], safe: offsetOf(0) },
      { out: [], safe: offsetOf(0) },
      { out: [], safe: offsetOf(0) },
      // 60330 finished its first entry, but 60001's older one is still open
      { out: [], safe: offsetOf(0) },
      { out: [1, 2], safe: offsetOf(3) },
      { out: [4], safe: offsetOf(4) },
    ]);
    expect(f.flush().map((e) => e.source.line)).toEqual([5, 6]);
    expect(f.safeOffset()).toBeNull();
  });

  it('re-reading from it (after a restart) returns each entry exactly once', () => {
    for (let stopAfter = 0; stopAfter <= lines.length; stopAfter++) {
      const first = framer();
      const returned: LogEntry[] = [];
      for (const l of lines.slice(0, stopAfter)) returned.push(...first.push(l));
      const resumeAt = first.safeOffset();
      const second = framer();
      for (const l of lines.filter((x) => resumeAt !== null && x.offset >= resumeAt)) returned.push(...second.push(l));
      if (resumeAt === null) for (const l of lines.slice(stopAfter)) returned.push(...second.push(l));
      returned.push(...second.flush());
      expect(returned).toEqual(feedAll(framer(), log));
    }
  });
});
