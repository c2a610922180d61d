import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import type { GenericDetails } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { logRepackRuns, type LogRun } from './repack-log-runs.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0 } from './series-notation.js';
import { crashDetails, ddlDetails, lockTimeoutDetails, lockWaitDetails, restartDetails } from './test-events.js';

const LOGS = fileURLToPath(new URL('../../test/fixtures/rule-logs/', import.meta.url));
const TARGET = 'pg19';

async function load(file: string): Promise<RuleEvent[]> {
  const parsed = await parseLogFile(path.join(LOGS, file), { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC', target: TARGET });
  return parsed.events.map((e, i) => ({ ...e, id: i + 1 })) as RuleEvent[];
}

const runsAt = (events: RuleEvent[], nowMs: number, target = TARGET) =>
  logRepackRuns(new MemoryRuleView({ events }).at(nowMs), target, 0);
const ts = (iso: string) => Date.parse(`${iso}Z`);
const summary = (r: LogRun) => ({ pid: r.pid, start: r.startMs, exact: r.startExact, end: r.endMs, how: r.end, relation: r.relation, concurrently: r.concurrently });

describe('REPACK runs in a real PostgreSQL 19 log', () => {
  it('one session, four runs: lock_timeout, statement_timeout and a cancel at the swap, then a success ended by its duration line', async () => {
    const events = await load('pg19-repack-swap-failures.log');
    const runs = runsAt(events, events[events.length - 1]!.tsMs);
    expect(runs.map(summary)).toEqual([
      { pid: 4663, start: ts('2026-12-01T13:08:53.106'), exact: true, end: ts('2026-12-01T13:08:54.656'), how: 'failed', relation: 'accounts', concurrently: true },
      { pid: 4663, start: ts('2026-12-01T13:08:54.692'), exact: true, end: ts('2026-12-01T13:08:56.254'), how: 'failed', relation: 'accounts', concurrently: true },
      { pid: 4663, start: ts('2026-12-01T13:08:56.288'), exact: true, end: ts('2026-12-01T13:08:57.633'), how: 'failed', relation: 'accounts', concurrently: true },
      // start = end − duration: 13:08:57.920 − 273.763 ms.
      { pid: 4663, start: ts('2026-12-01T13:08:57.920') - 273.763, exact: true, end: ts('2026-12-01T13:08:57.920'), how: 'finished', relation: 'accounts', concurrently: true },
    ]);
    expect(runs.map((r) => r.endEvent?.message)).toEqual([
      'canceling statement due to lock timeout', 'canceling statement due to statement timeout', 'canceling statement due to user request', 'duration: 273.763 ms',
    ]);
    expect(runs.map((r) => r.lastWait?.details.lock_mode ?? null)).toEqual(['AccessExclusiveLock', 'AccessExclusiveLock', 'AccessExclusiveLock', null]);
  });

  it('a run with no end in the log is still running at the end of the log', async () => {
    const events = await load('pg19-repack-swap-failures.log');
    const cut = ts('2026-12-01T13:08:57.700');
    const last = runsAt(events, cut).pop()!;
    expect(summary(last)).toMatchObject({ start: ts('2026-12-01T13:08:57.647'), end: null, how: null });
  });

  it('log_statement = ddl logs REPACK and CLUSTER at their start; a plain REPACK is a run, VACUUM FULL and CLUSTER are not', async () => {
    const events = await load('pg19-log-statement-ddl-repack.log');
    const runs = runsAt(events, events[events.length - 1]!.tsMs);
    expect(runs.map((r) => [r.relation, r.concurrently, r.end])).toEqual([['t', true, 'finished'], ['t', false, 'finished']]);
  });

  it('a REPACK whose backend was killed ends at the crash', async () => {
    const events = await load('pg19-repack-backend-killed.log');
    const [run] = runsAt(events, events[events.length - 1]!.tsMs);
    expect(summary(run!)).toMatchObject({ pid: 5355, start: ts('2026-12-01T13:09:27.920'), end: ts('2026-12-01T13:09:30.009'), how: 'killed' });
  });
});

describe('REPACK runs from events', () => {
  const at = (step: number) => T0 + step * STEP;
  const generic = (step: number, pid: number, message: string, level: 'LOG' | 'ERROR' = 'LOG') =>
    eventOf('generic', { classified: false } satisfies GenericDetails, { tsMs: at(step), pid, level, message });
  const repack = (step: number, pid = 7) => eventOf('ddl', ddlDetails('REPACK', 'orders', true), { tsMs: at(step), pid });

  const cases: Array<[string, RuleEvent[], Array<[number, boolean, string | null]>]> = [
    ['the session\'s next statement ends a run whose end was not logged', [repack(0), eventOf('ddl', ddlDetails('DROP TABLE', 'x'), { tsMs: at(5), pid: 7 })], [[at(0), true, 'next_statement']]],
    ['a server restart ends every run', [repack(0), eventOf('server_restart', restartDetails('terminating_others'), { tsMs: at(5), pid: 1 })], [[at(0), true, 'server_restart']]],
    ['a duration line of another statement ends it', [repack(0), generic(5, 7, 'duration: 1.0 ms  statement: SELECT 1')], [[at(0), true, 'next_statement']]],
    ['an ERROR of the session ends it', [repack(0), generic(5, 7, 'out of memory', 'ERROR')], [[at(0), true, 'failed']]],
    ['a LOG line of the session does not', [repack(0), generic(5, 7, 'temporary file: path "base/pgsql_tmp/x", size 1')], [[at(0), true, null]]],
    ['another session\'s error does not', [repack(0), generic(5, 8, 'out of memory', 'ERROR')], [[at(0), true, null]]],
    ['a lock wait shows a run whose statement was not logged, its start not exact (the wait\'s start)',
      [eventOf('lock_wait', lockWaitDetails({ waiting_pid: 7, lock_mode: 'AccessExclusiveLock', wait_ms: 5000, statement: 'REPACK (CONCURRENTLY) orders' }), { tsMs: at(4), pid: 7 })],
      [[at(3), false, null]]],
    ['a lock_timeout with the REPACK statement alone is a run that starts and ends there',
      [eventOf('lock_timeout', lockTimeoutDetails({ pid: 7, statement: 'REPACK (CONCURRENTLY) orders' }), { tsMs: at(4), pid: 7, level: 'ERROR' })],
      [[at(4), false, 'failed']]],
    ['a retry is a second run', [repack(0), generic(2, 7, 'out of memory', 'ERROR'), repack(3), generic(9, 7, 'duration: 20000.0 ms')],
      [[at(0), true, 'failed'], [at(5), true, 'finished']]],
    ['a crash whose DETAIL names REPACK is a run of the crashed pid',
      [eventOf('server_crash', crashDetails({ pid: 9, signal: 9, statement: 'REPACK (CONCURRENTLY) orders' }), { tsMs: at(4), pid: 1 })],
      [[at(4), false, 'killed']]],
    ['a crash whose DETAIL names another query ends the run as the next statement, not as its kill',
      [repack(0, 9), eventOf('server_crash', crashDetails({ pid: 9, signal: 9, statement: 'SELECT 1' }), { tsMs: at(4), pid: 1 })],
      [[at(0), true, 'next_statement']]],
  ];
  for (const [name, events, expected] of cases) {
    it(name, () => {
      const runs = runsAt(events, at(10), 'primary');
      expect(runs.map((r) => [r.startMs, r.startExact, r.end])).toEqual(expected);
    });
  }
});
