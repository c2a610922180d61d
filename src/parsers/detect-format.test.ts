import { describe, expect, it } from 'vitest';
import { COMMON_PREFIXES, detectFormat } from './detect-format.js';

interface Session {
  pid: number;
  user: string;
  db: string;
  app: string;
  host: string;
}

/** Prints `prefix` as log_status_format() does for a session (null: a background process). */
function render(prefix: string, session: Session | null, pid: number, lineNumber: number): string {
  const values: Record<string, string> = {
    m: '2026-10-14 06:01:00.001 UTC', t: '2026-10-14 06:01:00 UTC', p: String(pid), l: String(lineNumber),
    u: session?.user ?? '', d: session?.db ?? '', a: session?.app ?? '', h: session?.host ?? '',
    r: session ? `${session.host}(53312)` : '', e: '00000',
  };
  let out = '';
  for (let i = 0; i < prefix.length; i++) {
    const ch = prefix.charAt(i);
    if (ch !== '%') {
      out += ch;
      continue;
    }
    const letter = prefix.charAt(++i);
    if (letter === 'q') {
      if (session === null) return out;
      continue;
    }
    out += values[letter] ?? '';
  }
  return out;
}

/** A realistic mix: client statements, a lock wait with DETAIL, an autovacuum report. */
function stderrSample(prefix: string): string[] {
  const app: Session = { pid: 60330, user: 'app', db: 'shop', app: 'orders-api', host: '10.1.2.3' };
  const lines: string[] = [];
  for (let i = 1; i <= 25; i++) lines.push(`${render(prefix, app, 60330, i)}LOG:  duration: 0.412 ms  statement: SELECT ${i};`);
  lines.push(`${render(prefix, app, 60330, 26)}LOG:  process 60330 still waiting for ShareLock on transaction 1873501 after 1000.052 ms`);
  lines.push(`${render(prefix, app, 60330, 27)}DETAIL:  Process holding the lock: 59990. Wait queue: 60330.`);
  lines.push(`${render(prefix, null, 41235, 1)}LOG:  automatic vacuum of table "shop.public.orders": index scans: 1`);
  lines.push('\tpages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)');
  lines.push('\tsystem usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s');
  return lines;
}

describe('detectFormat', () => {
  // '%m [%p] ' and '%t [%p] ' logs read the same under the Debian-style prefixes listed before them
  // (the first, with its %e), which also read client lines if the log has them: that is the answer.
  const expected: Record<string, string> = { '%m [%p] ': '%m [%p] %q%u@%d %e ', '%t [%p] ': '%t [%p] %q%u@%d ' };

  it.each(COMMON_PREFIXES.filter((p) => p !== ''))('finds the stderr prefix %j', (prefix) => {
    expect(detectFormat(stderrSample(prefix), { final: false })).toEqual({ format: 'stderr', prefix: expected[prefix] ?? prefix });
  });

  it('finds an empty prefix', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `LOG:  duration: 0.412 ms  statement: SELECT ${i};`);
    expect(detectFormat(lines, { final: false })).toEqual({ format: 'stderr', prefix: '' });
  });

  it('finds csvlog, with records spanning lines', () => {
    const lines: string[] = [];
    for (let i = 0; i < 10; i++) {
      lines.push(`2026-10-14 06:01:00.001 UTC,"app","shop",60330,"[local]",6529a1b2.ebaa,${i},"SELECT",2026-10-14 06:00:00 UTC,3/1234,0,LOG,00000,"duration: 0.412 ms  statement: SELECT ${i};",,,,,,,,,"psql","client backend",,0`);
      lines.push('2026-10-14 03:12:45.123 UTC,,,41235,,6529a1b2.a113,1,,2026-10-14 03:12:23 UTC,4/77,0,LOG,00000,"automatic vacuum of table ""shop.public.orders"": index scans: 1');
      lines.push('system usage: CPU: user: 3.21 s, system: 1.02 s, elapsed: 22.03 s",,,,,,,,,"","autovacuum worker",,0');
    }
    expect(detectFormat(lines, { final: false })).toEqual({ format: 'csvlog' });
  });

  it('finds jsonlog', () => {
    const lines = Array.from({ length: 25 }, (_, i) =>
      JSON.stringify({ timestamp: '2026-10-14 06:01:00.001 UTC', pid: 60330, error_severity: 'LOG', message: `duration: 0.412 ms  statement: SELECT ${i};` }));
    expect(detectFormat(lines, { final: false })).toEqual({ format: 'jsonlog' });
  });

  it('finds a syslog header and the prefix behind it', () => {
    const lines = Array.from({ length: 25 }, (_, i) =>
      `Oct 14 06:01:00 db1 postgres[60330]: [${i + 1}-1] user=app,db=shop,app=psql,client=10.1.2.3 LOG:  duration: 0.412 ms  statement: SELECT ${i};`);
    lines.push('Oct 14 06:01:00 db1 postgres[41235]: [30-1] user=,db=,app=,client= LOG:  automatic vacuum of table "shop.public.orders": index scans: 1');
    lines.push('Oct 14 06:01:00 db1 postgres[41235]: [30-2] #011pages: 0 removed, 125000 remain, 40213 scanned (32.17% of total)');
    expect(detectFormat(lines, { final: false })).toEqual({ format: 'stderr', prefix: 'user=%u,db=%d,app=%a,client=%h ', syslog: true });
  });

  it('waits for more lines before answering on little evidence, unless told no more will come', () => {
    const lines = stderrSample('%m [%p] %q%u@%d ').slice(0, 5);
    expect(detectFormat(lines, { final: false })).toBeNull();
    expect(detectFormat(lines, { final: true })).toEqual({ format: 'stderr', prefix: '%m [%p] %q%u@%d ' });
  });

  it('does not claim a prefix that reads too few lines', () => {
    const custom = stderrSample('%m %u %d [%p] ');
    expect(detectFormat(custom, { final: false })).toBeNull();
    expect(detectFormat([...custom, ...stderrSample('%m [%p] ').slice(0, 3)], { final: true })).toBeNull();
    expect(detectFormat(['\u0000\u0001garbage', 'more garbage'], { final: true })).toBeNull();
    expect(detectFormat([], { final: true })).toBeNull();
  });
});
