import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import type { AnyLogEvent } from '../domain/log-event.js';
import { createLogPipeline, type LogPipeline, type LogPipelineOptions } from './log-pipeline.js';
import { feedAll, physicalLines } from './physical-lines.js';
import { TimeZoneConfigError } from './timestamp.js';

const text = (...lines: string[]): string => `${lines.join('\n')}\n`;

function run(options: Partial<LogPipelineOptions>, log: string): { events: AnyLogEvent[]; pipeline: LogPipeline } {
  const pipeline = createLogPipeline({ target: 'primary', format: 'stderr', file: '/var/log/postgresql/postgresql-18-main.log', ...options });
  return { events: feedAll(pipeline, log), pipeline };
}

const MIXED = text(
  '2026-10-14 03:30:00.001 UTC [60001] app@shop LOG:  process 60001 still waiting for ShareLock on transaction 1873501 after 1000.052 ms',
  '2026-10-14 03:30:00.001 UTC [60001] app@shop DETAIL:  Process holding the lock: 59990. Wait queue: 60001.',
  '2026-10-14 03:30:00.001 UTC [60001] app@shop CONTEXT:  while updating tuple (12,7) in relation "orders"',
  "2026-10-14 03:30:00.001 UTC [60001] app@shop STATEMENT:  UPDATE orders SET status = 'paid' WHERE id = 42;",
  "2026-10-14 06:01:00.001 UTC [60330] app@shop LOG:  duration: 1532.114 ms  statement: SELECT * FROM orders WHERE status = 'open';",
  '2026-10-14 06:00:01.222 UTC [60321] app@shop LOG:  temporary file: path "base/pgsql_tmp/pgsql_tmp60321.0", size 1073741824',
  '2026-10-14 06:00:01.222 UTC [60321] app@shop STATEMENT:  SELECT customer_id, sum(total) FROM orders GROUP BY 1 ORDER BY 2 DESC;',
  'not a log line',
);

describe('createLogPipeline', () => {
  it('frames and classifies, stamping target and source on every event', () => {
    const { events, pipeline } = run({ prefix: '%m [%p] %q%u@%d ' }, MIXED);
    expect(events.map((e) => [e.kind, e.target, e.pid, e.source.line])).toEqual([
      ['lock_wait', 'primary', 60001, 1],
      ['generic', 'primary', 60330, 5],
      ['temp_file', 'primary', 60321, 6],
    ]);
    expect(events[0]?.source.file).toBe('/var/log/postgresql/postgresql-18-main.log');
    const stats = pipeline.stats;
    expect(stats).toMatchObject({ lines: 8, entries: 3, unparsed_lines: 1, unparsed_by_reason: { prefix_mismatch: 1 }, events: 3 });
    expect(stats.events_by_kind).toMatchObject({ lock_wait: 1, generic: 1, temp_file: 1, autovacuum: 0 });
  });

  it('passes safeOffset through from the framer', () => {
    const pipeline = createLogPipeline({ target: 'primary', format: 'stderr', prefix: '%m [%p] %q%u@%d ', file: 'x.log' });
    const [first] = physicalLines(MIXED);
    pipeline.push(first!);
    expect(pipeline.safeOffset()).toBe(0);
    pipeline.flush();
    expect(pipeline.safeOffset()).toBeNull();
  });

  it("gives entries without a timestamp the clock's time", () => {
    const clock = new ManualClock(Date.UTC(2026, 9, 14, 6, 0, 0));
    const { events } = run({ prefix: '[%p] ', clock }, text('[4011] LOG:  checkpoint starting: time'));
    expect(events.map((e) => [e.tsMs, e.pid])).toEqual([[Date.UTC(2026, 9, 14, 6, 0, 0), 4011]]);
  });

  it("uses PostgreSQL's default prefix when none is given", () => {
    const { events } = run({}, text('2026-10-14 04:00:00.100 UTC [1001] LOG:  database system is ready to accept connections'));
    expect(events.map((e) => [e.pid, e.level])).toEqual([[1001, 'LOG']]);
  });

  it('reads csvlog and jsonlog', () => {
    const csv = run({ format: 'csvlog' }, text(
      '2026-10-14 06:00:01.222 UTC,"app","shop",60321,"[local]",6529a1b2.ebaa,3,"SELECT",2026-10-14 06:00:00 UTC,3/1234,0,LOG,00000,"temporary file: path ""base/pgsql_tmp/pgsql_tmp60321.0"", size 1073741824",,,,,,"SELECT 1;",,,"psql","client backend",,0',
    ));
    const json = run({ format: 'jsonlog' }, text(JSON.stringify({
      timestamp: '2026-10-14 06:00:01.222 UTC', pid: 60321, error_severity: 'LOG',
      message: 'temporary file: path "base/pgsql_tmp/pgsql_tmp60321.0", size 1073741824', statement: 'SELECT 1;',
    })));
    expect([...csv.events, ...json.events].map((e) => [e.kind, e.pid, e.tsMs])).toEqual([
      ['temp_file', 60321, Date.parse('2026-10-14T06:00:01.222Z')],
      ['temp_file', 60321, Date.parse('2026-10-14T06:00:01.222Z')],
    ]);
  });

  it('refuses an unknown log_timezone at creation (configuration), for every format', () => {
    for (const format of ['stderr', 'csvlog', 'jsonlog'] as const) {
      expect(() => createLogPipeline({ target: 't', format, file: 'x', timezone: 'Not/AZone' })).toThrow(TimeZoneConfigError);
    }
  });
});
