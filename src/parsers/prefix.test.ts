import { describe, expect, it } from 'vitest';
import { compilePrefix, pidFromSessionId } from './prefix.js';

interface Fields {
  timestamp?: string;
  pid?: string;
  session?: string;
  user?: string;
  database?: string;
  application?: string;
  backendType?: string;
  sqlstate?: string;
  word: string;
  rest: string;
}

/** The captured fields of `line` under `prefix`, or null when it does not match. */
function fields(prefix: string, line: string): Fields | null {
  const compiled = compilePrefix(prefix);
  const m = compiled.regex.exec(line);
  if (m === null) return null;
  const g = compiled.groups;
  const out: Fields = { word: m[g.word] as string, rest: line.slice(m[0].length) };
  for (const key of ['timestamp', 'pid', 'session', 'user', 'database', 'application', 'backendType', 'sqlstate'] as const) {
    const value = g[key] === 0 ? undefined : m[g[key]];
    if (value !== undefined && value !== '') out[key] = value;
  }
  // %m and %t are captured in parts: put them back together to compare with the line.
  if (g.time !== 0) out.timestamp += ` ${m[g.time]}`;
  if (g.millis !== 0) out.timestamp += `.${m[g.millis]}`;
  if (g.zone !== 0) out.timestamp += ` ${m[g.zone]}`;
  return out;
}

// Lines as log_status_format() (elog.c) prints them; messages from pg-messages.md.
const CASES: Array<{ name: string; prefix: string; line: string; want: Fields | null }> = [
  {
    name: '%m %p %u %d, client backend (Debian default)',
    prefix: '%m [%p] %q%u@%d ',
    line: "2026-10-14 06:01:00.001 UTC [60330] app@shop LOG:  duration: 1532.114 ms  statement: SELECT * FROM orders WHERE status = 'open';",
    want: {
      timestamp: '2026-10-14 06:01:00.001 UTC', pid: '60330', user: 'app', database: 'shop', word: 'LOG',
      rest: "duration: 1532.114 ms  statement: SELECT * FROM orders WHERE status = 'open';",
    },
  },
  {
    name: '%q: a background process prints nothing after it',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 03:12:45.123 UTC [41235] LOG:  automatic vacuum of table "shop.public.orders": index scans: 1',
    want: {
      timestamp: '2026-10-14 03:12:45.123 UTC', pid: '41235', word: 'LOG',
      rest: 'automatic vacuum of table "shop.public.orders": index scans: 1',
    },
  },
  {
    name: '%q: a background process whose message has an "@" and a line word further on is not read as a session',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 03:12:46.001 UTC [18940] LOG:  archive command failed, mail sent to ops@example.com LOG:  see the archiver',
    want: {
      timestamp: '2026-10-14 03:12:46.001 UTC', pid: '18940', word: 'LOG',
      rest: 'archive command failed, mail sent to ops@example.com LOG:  see the archiver',
    },
  },
  {
    name: '[unknown] user and database before authentication',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 06:05:00.001 UTC [60400] [unknown]@[unknown] LOG:  connection received: host=10.1.2.3 port=53312',
    want: {
      timestamp: '2026-10-14 06:05:00.001 UTC', pid: '60400', user: '[unknown]', database: '[unknown]', word: 'LOG',
      rest: 'connection received: host=10.1.2.3 port=53312',
    },
  },
  {
    name: 'a user name with "@" (Entra ID, Cloud SQL IAM) keeps it',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 06:05:00.011 UTC [60400] ana@example.com@shop LOG:  connection authorized: user=ana@example.com database=shop',
    want: {
      timestamp: '2026-10-14 06:05:00.011 UTC', pid: '60400', user: 'ana@example.com', database: 'shop', word: 'LOG',
      rest: 'connection authorized: user=ana@example.com database=shop',
    },
  },
  {
    name: 'a database name with a space',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 06:05:00.011 UTC [60400] app@my shop ERROR:  canceling statement due to lock timeout',
    want: {
      timestamp: '2026-10-14 06:05:00.011 UTC', pid: '60400', user: 'app', database: 'my shop', word: 'ERROR',
      rest: 'canceling statement due to lock timeout',
    },
  },
  {
    name: 'DETAIL label with the same prefix',
    prefix: '%m [%p] %q%u@%d ',
    line: '2026-10-14 03:30:00.001 UTC [60001] app@shop DETAIL:  Process holding the lock: 59990. Wait queue: 60001.',
    want: {
      timestamp: '2026-10-14 03:30:00.001 UTC', pid: '60001', user: 'app', database: 'shop', word: 'DETAIL',
      rest: 'Process holding the lock: 59990. Wait queue: 60001.',
    },
  },
  {
    name: "pgBadger's prefix: %t %p %l %u %d %a %h",
    prefix: '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ',
    line: '2026-10-14 03:31:10 CEST [60001]: [7-1] user=app,db=shop,app=orders-api,client=10.1.2.3 ERROR:  canceling statement due to lock timeout',
    want: {
      timestamp: '2026-10-14 03:31:10 CEST', pid: '60001', user: 'app', database: 'shop', application: 'orders-api', word: 'ERROR',
      rest: 'canceling statement due to lock timeout',
    },
  },
  {
    name: "pgBadger's prefix without %q: empty fields in a background process",
    prefix: '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ',
    line: '2026-10-14 03:12:45 UTC [41235]: [1-1] user=,db=,app=,client= LOG:  checkpoint starting: time',
    want: { timestamp: '2026-10-14 03:12:45 UTC', pid: '41235', word: 'LOG', rest: 'checkpoint starting: time' },
  },
  {
    name: '%a with spaces, %r host(port), %e SQLSTATE, %x xid, %v vxid',
    prefix: '%m %r %e %x %v [%p] %a: ',
    line: '2026-10-14 03:32:00.500 +01 10.1.2.3(53312) 40P01 1873502 3/1234 [60001] pgAdmin 4 - DB:shop: ERROR:  deadlock detected',
    want: {
      timestamp: '2026-10-14 03:32:00.500 +01', pid: '60001', sqlstate: '40P01', application: 'pgAdmin 4 - DB:shop', word: 'ERROR',
      rest: 'deadlock detected',
    },
  },
  {
    name: '%r of a Unix socket client, %h, %L (18+)',
    prefix: '%m [%p] %r %h %L ',
    line: '2026-10-14 03:32:00.500 UTC [60001] [local] [local] [none] LOG:  statement: SELECT 1',
    want: { timestamp: '2026-10-14 03:32:00.500 UTC', pid: '60001', word: 'LOG', rest: 'statement: SELECT 1' },
  },
  {
    name: '%r with an IPv6 address before ":" separators (Amazon RDS)',
    prefix: '%t:%r:%u@%d:[%p]:',
    line: '2026-10-14 03:32:00 UTC:2001:db8::7(41002):app@shop:[60001]:LOG:  duration: 0.412 ms  statement: BEGIN;',
    want: {
      timestamp: '2026-10-14 03:32:00 UTC', pid: '60001', user: 'app', database: 'shop', word: 'LOG',
      rest: 'duration: 0.412 ms  statement: BEGIN;',
    },
  },
  {
    name: '%b backend type with spaces, %P leader pid (14+), %Q query id (14+)',
    prefix: '%m [%p] %b %P %Q ',
    line: '2026-10-14 03:32:00.500 UTC [60011] parallel worker 60001 -6747390187311187456 LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60011.0", size 8192',
    want: {
      timestamp: '2026-10-14 03:32:00.500 UTC', pid: '60011', backendType: 'parallel worker', word: 'LOG',
      rest: 'temporary file: path "base/pgsql_tmp/pgsql_tmp60011.0", size 8192',
    },
  },
  {
    name: '%P empty outside parallel workers',
    prefix: '%m [%p] %b %P %Q ',
    line: '2026-10-14 03:32:00.500 UTC [60001] client backend  0 LOG:  statement: SELECT 1',
    want: { timestamp: '2026-10-14 03:32:00.500 UTC', pid: '60001', backendType: 'client backend', word: 'LOG', rest: 'statement: SELECT 1' },
  },
  {
    name: '%n epoch, %c session id, %l line, %s process start, %i command tag',
    prefix: '%n %c %l %s %i [%p] ',
    line: '1792120320.001 6529a1b2.ebaa 12 2026-10-14 06:00:00 UTC idle in transaction [60330] FATAL:  terminating connection due to idle-in-transaction timeout',
    want: {
      timestamp: '1792120320.001', pid: '60330', session: '6529a1b2.ebaa', word: 'FATAL',
      rest: 'terminating connection due to idle-in-transaction timeout',
    },
  },
  {
    name: 'padding: %-10u left-aligned, %8p right-aligned, %-12d of a background process',
    prefix: '%m [%8p] %-10u %-12d ',
    line: '2026-10-14 06:01:00.001 UTC [   60330] app        shop         LOG:  statement: SELECT 1',
    want: { timestamp: '2026-10-14 06:01:00.001 UTC', pid: '60330', user: 'app', database: 'shop', word: 'LOG', rest: 'statement: SELECT 1' },
  },
  {
    name: 'padding of absent fields prints spaces',
    prefix: '%m [%8p] %-10u %-12d ',
    line: '2026-10-14 06:01:00.001 UTC [   41235]                         LOG:  checkpoint starting: time',
    want: { timestamp: '2026-10-14 06:01:00.001 UTC', pid: '41235', word: 'LOG', rest: 'checkpoint starting: time' },
  },
  {
    name: '%% is a literal percent; an unknown escape prints nothing',
    prefix: '100%% %m %z[%p] ',
    line: '100% 2026-10-14 06:01:00.001 UTC [60330] WARNING:  there is no transaction in progress',
    want: { timestamp: '2026-10-14 06:01:00.001 UTC', pid: '60330', word: 'WARNING', rest: 'there is no transaction in progress' },
  },
  {
    name: 'a prefix ending inside an escape stops there',
    prefix: '%m [%p] %-',
    line: '2026-10-14 06:01:00.001 UTC [60330] LOG:  statement: SELECT 1',
    want: { timestamp: '2026-10-14 06:01:00.001 UTC', pid: '60330', word: 'LOG', rest: 'statement: SELECT 1' },
  },
  {
    name: 'regex metacharacters in literals',
    prefix: '(%m) {%p} *%u|%d$ ',
    line: '(2026-10-14 06:01:00.001 UTC) {60330} *app|shop$ NOTICE:  relation "t" already exists, skipping',
    want: {
      timestamp: '2026-10-14 06:01:00.001 UTC', pid: '60330', user: 'app', database: 'shop', word: 'NOTICE',
      rest: 'relation "t" already exists, skipping',
    },
  },
  {
    name: 'empty prefix (before PostgreSQL 10)',
    prefix: '',
    line: 'PANIC:  could not locate a valid checkpoint record',
    want: { word: 'PANIC', rest: 'could not locate a valid checkpoint record' },
  },
  { name: 'not the prefix', prefix: '%m [%p] ', line: 'Oct 14 03:12:45 db1 kernel: Out of memory: Killed process 41235 (postgres)', want: null },
  { name: 'one space after the severity is not a message', prefix: '%m [%p] ', line: '2026-10-14 06:01:00.001 UTC [60330] LOG: x', want: null },
  { name: 'a translated severity is not a severity', prefix: '%m [%p] ', line: '2026-10-14 06:01:00.001 UTC [60330] FEHLER:  x', want: null },
];

describe('compilePrefix', () => {
  it.each(CASES)('$name', ({ prefix, line, want }) => {
    expect(fields(prefix, line)).toEqual(want);
  });

  it('reports where the pid comes from', () => {
    expect(compilePrefix('%m [%p] ').pidFrom).toBe('p');
    expect(compilePrefix('%m %c ').pidFrom).toBe('c');
    expect(compilePrefix('%m %u ').pidFrom).toBeNull();
    expect(compilePrefix('%t [%p] ').timestampKind).toBe('t');
    expect(compilePrefix('%n %m ').timestampKind).toBe('n');
    expect(compilePrefix('[%p] ').timestampKind).toBeNull();
  });

  it('costs bounded work on a long line that almost matches', () => {
    const line = `2026-10-14 06:01:00.001 UTC [60330] ${'x'.repeat(1_000_000)}`;
    expect(fields('%m [%p] %q%u@%d %a ', line)).toBeNull();
  });
});

describe('pidFromSessionId', () => {
  it('reads the hex pid after the dot', () => {
    expect(pidFromSessionId('6529a1b2.ebaa')).toBe(0xebaa);
    expect(pidFromSessionId('6529a1b2')).toBeNull();
  });
});
