import { describe, expect, it } from 'vitest';
import { StderrFramer, type StderrFramerOptions } from './frame-stderr.js';
import { feedAll } from './physical-lines.js';

// The syslog header is read by the stderr framer; these tests go through it, as the daemon does.
function framer(options: Partial<StderrFramerOptions> = {}): StderrFramer {
  return new StderrFramer({ file: 'syslog', prefix: '%m [%p] %q%u@%d ', syslog: true, ...options });
}

const text = (...lines: string[]): string => `${lines.join('\n')}\n`;

describe('SyslogHeaderParser (through StderrFramer)', () => {
  const nowMs = () => Date.parse('2026-10-20T00:00:00Z');

  it('reads rsyslog lines: pid and time from the header, #011 continuations, chunked long lines', () => {
    const f = framer({ prefix: 'user=%u,db=%d,app=%a,client=%h ', nowMs });
    const log = text(
      'Oct 14 03:12:45 db1 postgres[41235]: [3-1] user=,db=,app=,client= LOG:  automatic vacuum of table "shop.public.orders": index scans: 0',
      'Oct 14 03:12:45 db1 postgres[60001]: [4-1] user=app,db=shop,app=psql,client=10.1.2.3 LOG:  process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms',
      'Oct 14 03:12:45 db1 postgres[41235]: [3-2] #011pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)',
      'Oct 14 03:12:45 db1 postgres[60001]: [4-2] user=app,db=shop,app=psql,client=10.1.2.3 DETAIL:  Process holding the lock: 59990. Wait queue: 60001.',
      'Oct 14 03:12:46 db1 postgres[60002]: [5-1] user=app,db=shop,app=psql,client=10.1.2.3 LOG:  duration: 1.000 ms  statement: SELECT aaaa',
      'Oct 14 03:12:46 db1 postgres[60002]: [5-2]  bbbb FROM t',
    );
    const entries = feedAll(f, log);
    expect(entries.map((e) => [e.pid, e.tsMs, e.user, e.message, e.detail])).toEqual([
      [41235, Date.parse('2026-10-14T03:12:45Z'), null,
        'automatic vacuum of table "shop.public.orders": index scans: 0\npages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)', null],
      [60001, Date.parse('2026-10-14T03:12:45Z'), 'app',
        'process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms', 'Process holding the lock: 59990. Wait queue: 60001.'],
      [60002, Date.parse('2026-10-14T03:12:46Z'), 'app', 'duration: 1.000 ms  statement: SELECT aaaa bbbb FROM t', null],
    ]);
    expect(f.stats.unparsed_lines).toBe(0);
  });

  it('prefers the prefix time to the header, reads RFC 3339 headers, puts a future month in last year', () => {
    const f = framer({ nowMs });
    const entries = feedAll(f, text(
      '2026-10-14T03:12:45.987654+02:00 db1 postgres[60001]: [7-1] 2026-10-14 01:12:45.123 UTC [60001] app@shop LOG:  statement: SELECT 1',
      '2026-10-14T03:12:45+0200 db1 postgres[60001]: [8] 2026-10-14 01:12:45.124 UTC [60001] app@shop LOG:  statement: SELECT 2',
    ));
    expect(entries.map((e) => e.tsMs)).toEqual([Date.parse('2026-10-14T01:12:45.123Z'), Date.parse('2026-10-14T01:12:45.124Z')]);

    const header = framer({ prefix: '', nowMs });
    const [e] = feedAll(header, text('Dec 31 23:59:59 db1 postgres[1001]: [1-1] LOG:  database system is ready to accept connections'));
    expect(e?.tsMs).toBe(Date.parse('2025-12-31T23:59:59Z'));
  });

  it('counts lines without a syslog header and invalid header dates', () => {
    const f = framer({ prefix: '', nowMs });
    feedAll(f, text(
      '2026-10-14 03:12:45.123 UTC [41235] LOG:  not behind syslog',
      'Feb 30 03:12:45 db1 postgres[1001]: [1-1] LOG:  database system is ready to accept connections',
    ));
    expect(f.stats.unparsed_by_reason).toEqual({ syslog_header_mismatch: 1, invalid_timestamp: 1 });
  });
});
