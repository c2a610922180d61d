import { describe, expect, it } from 'vitest';
import { JsonlogFramer } from './frame-jsonlog.js';
import { feedAll } from './physical-lines.js';

const framer = (): JsonlogFramer => new JsonlogFramer({ file: 'postgresql.json' });
const text = (...lines: string[]): string => `${lines.join('\n')}\n`;

// Objects as write_jsonlog() (jsonlog.c, 15+) writes them: keys in emission order, absent when empty.
const DEADLOCK = JSON.stringify({
  timestamp: '2026-10-14 03:32:00.500 UTC', user: 'app', dbname: 'shop', pid: 60001, remote_host: '10.1.2.3',
  remote_port: 53312, session_id: '6529a1b2.ea61', line_num: 5, ps: 'UPDATE', session_start: '2026-10-14 03:31:00 UTC',
  vxid: '3/1234', txid: 1873501, error_severity: 'ERROR', state_code: '40P01', message: 'deadlock detected',
  detail: 'Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.\nProcess 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
  hint: 'See server log for query details.', context: 'while updating tuple (0,2) in relation "accounts"',
  statement: 'UPDATE accounts SET balance = balance - 10 WHERE id = 1;', func_name: 'DeadLockReport', file_name: 'deadlock.c',
  file_line_num: 1135, application_name: 'psql', backend_type: 'client backend', query_id: 0,
});
const AUTOVACUUM = JSON.stringify({
  timestamp: '2026-10-14 05:12:45.123 CEST', pid: 41235, session_id: '6529a1b2.a113', line_num: 1,
  session_start: '2026-10-14 05:12:23 CEST', vxid: '4/77', txid: 0, error_severity: 'LOG',
  message: 'automatic vacuum of table "shop.public.orders": index scans: 1\npages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)',
  backend_type: 'autovacuum worker', query_id: 0,
});

describe('JsonlogFramer', () => {
  it('reads a client backend entry with every field', () => {
    expect(feedAll(framer(), text(DEADLOCK))).toEqual([
      {
        tsMs: Date.parse('2026-10-14T03:32:00.500Z'), pid: 60001, level: 'ERROR', sqlstate: '40P01',
        user: 'app', database: 'shop', application: 'psql', backendType: 'client backend',
        message: 'deadlock detected',
        detail: 'Process 60001 waits for ShareLock on transaction 1873502; blocked by process 60002.\nProcess 60002 waits for ShareLock on transaction 1873501; blocked by process 60001.',
        hint: 'See server log for query details.',
        context: 'while updating tuple (0,2) in relation "accounts"',
        statement: 'UPDATE accounts SET balance = balance - 10 WHERE id = 1;',
        query: null,
        location: 'DeadLockReport, deadlock.c:1135',
        source: { file: 'postgresql.json', offset: 0, line: 1 },
      },
    ]);
  });

  it('reads a background process entry with absent keys, in its zone', () => {
    const [e] = feedAll(framer(), text(AUTOVACUUM));
    expect([e?.tsMs, e?.user, e?.sqlstate, e?.backendType, e?.location]).toEqual([
      Date.parse('2026-10-14T03:12:45.123Z'), null, null, 'autovacuum worker', null,
    ]);
    expect(e?.message.split('\n')).toHaveLength(2);
  });

  const bad: Array<{ name: string; line: string; reason: string }> = [
    { name: 'a cut line', line: DEADLOCK.slice(0, 120), reason: 'json_malformed' },
    { name: 'binary garbage', line: '\u0000\u0001\u00ff\ufffd', reason: 'json_malformed' },
    { name: 'a JSON array', line: '[1,2]', reason: 'json_malformed' },
    { name: 'an object without a message', line: '{"timestamp":"2026-10-14 03:32:00.500 UTC","error_severity":"LOG"}', reason: 'json_missing_field' },
    { name: 'an invalid date', line: DEADLOCK.replace('2026-10-14 03:32', '2026-10-32 03:32'), reason: 'invalid_timestamp' },
    { name: 'an unknown severity', line: DEADLOCK.replace('"ERROR"', '"FEHLER"'), reason: 'unknown_severity' },
  ];

  it.each(bad)('counts $name and goes on', ({ line, reason }) => {
    const f = framer();
    expect(feedAll(f, text(line, AUTOVACUUM))).toHaveLength(1);
    expect(f.stats.unparsed_by_reason).toEqual({ [reason]: 1 });
    expect(f.safeOffset()).toBeNull();
  });
});
