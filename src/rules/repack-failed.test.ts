import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseLogFile } from '../../test/helpers/scenarios/parse-log.js';
import { basisOf, type GenericDetails, type LogLevel } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { repackFailed, DEFAULTS, CEILING_ALLOC_BYTES } from './repack-failed.js';
import { repackLostAtSwap, DEFAULTS as LOST_AT_SWAP } from './repack-lost-at-swap.js';
import { serverCrashed, DEFAULTS as CRASHED } from './server-crashed.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { crashDetails, ddlDetails, lockWaitDetails } from './test-events.js';

const rule = repackFailed(DEFAULTS);
const at = (step: number) => T0 + step * STEP;
const PID = 71000;
const REPACK = 'REPACK (CONCURRENTLY) orders';

const statement = (step: number, concurrently = true) =>
  eventOf('ddl', ddlDetails('REPACK', 'orders', concurrently), { tsMs: at(step), pid: PID, database: 'shop', message: `statement: ${REPACK}` });
const generic = (step: number, message: string, level: LogLevel = 'ERROR', pid = PID) =>
  eventOf('generic', { classified: false } satisfies GenericDetails, { tsMs: at(step), pid, database: 'shop', level, message });
const swapWait = (step: number, phase: 'waiting' | 'acquired' = 'waiting', lockMode = 'AccessExclusiveLock') =>
  eventOf('lock_wait', lockWaitDetails({ waiting_pid: PID, lock_mode: lockMode, phase, holder_pids: [70990], queue_pids: [PID], statement: REPACK }), { tsMs: at(step), pid: PID, database: 'shop' });
const statementTimeout = (step: number) =>
  eventOf('statement_timeout', { pid: PID, database: 'shop', user: 'dba', statement: REPACK, context: null }, { tsMs: at(step), pid: PID, database: 'shop', level: 'ERROR', sqlstate: '57014' });
const kill = (step: number, signal = 9, query: string | null = REPACK) =>
  eventOf('server_crash', crashDetails({ pid: PID, signal, signal_name: signal === 9 ? 'Killed' : 'Segmentation fault', statement: query }), { tsMs: at(step), pid: 1 });

const CEILING = `invalid memory alloc request size ${CEILING_ALLOC_BYTES}`;

const evaluate = (events: RuleEvent[], series = [] as ReturnType<typeof seriesOf>[], step = 11) =>
  rule.evaluate(new MemoryRuleView({ events, series }).at(at(step)), at(step));

describe('repack-failed', () => {
  const cases: Array<[string, RuleEvent[], string | null]> = [
    ['fires: the change ceiling (invalid memory alloc request size 1677721600)', [statement(0), generic(10, CEILING)], 'change_ceiling'],
    ['fires: another allocation over 1 GB', [statement(0), generic(10, 'invalid memory alloc request size 1342177280')], 'alloc_limit'],
    ['fires: the same allocation in a plain REPACK is not the change ceiling', [statement(0, false), generic(10, CEILING)], 'alloc_limit'],
    ['fires: out of memory', [statement(0), generic(10, 'out of memory')], 'out_of_memory'],
    ['quiet: its backend OOM-killed, a server crash (crash DETAIL names the REPACK): server-crashed names it', [kill(10)], null],
    ['quiet: its backend killed while its logged statement ran (no DETAIL): server-crashed names it', [statement(0), kill(10, 9, null)], null],
    ['fires: statement_timeout while waiting for the swap lock', [statement(0), swapWait(8), statementTimeout(10)], 'statement_timeout_at_swap'],
    ['fires: a cancel while waiting for the swap lock', [statement(0), swapWait(8), generic(10, 'canceling statement due to user request')], 'cancel_at_swap'],
    ['quiet: a cancel after the swap lock was acquired (not waiting)', [statement(0), swapWait(8), swapWait(9, 'acquired'), generic(10, 'canceling statement due to user request')], null],
    ['quiet: a cancel with no swap wait logged (not at the swap)', [statement(0), generic(10, 'canceling statement due to user request')], null],
    ['quiet: statement_timeout waiting for SHARE UPDATE EXCLUSIVE at the start', [statement(0), swapWait(8, 'waiting', 'ShareUpdateExclusiveLock'), statementTimeout(10)], null],
    ['quiet: a cancel at the swap of a plain REPACK (it has no swap)', [statement(0, false), swapWait(8), generic(10, 'canceling statement due to user request')], null],
    ['quiet: out of memory of another session', [statement(0), generic(10, 'out of memory', 'ERROR', 71001)], null],
    ['quiet: out of memory after the REPACK finished (duration line)', [statement(0), generic(5, 'duration: 25000.0 ms', 'LOG'), generic(10, 'out of memory')], null],
    ['quiet: a crash of a backend running something else', [kill(10, 9, 'SELECT 1')], null],
    ['quiet: the REPACK succeeded', [statement(0), generic(10, 'duration: 50000.0 ms', 'LOG')], null],
  ];
  for (const [name, events, cause] of cases) {
    it(name, () => {
      const findings = evaluate(events);
      expect(findings.map((f) => f.labels.cause)).toEqual(cause === null ? [] : [cause]);
    });
  }

  it('says what failed, how much work was lost and why', () => {
    const start = statement(0);
    const failure = generic(10, CEILING);
    const [finding] = evaluate([start, failure]);
    expect(finding?.summary).toBe(
      'REPACK (CONCURRENTLY) of shop.orders failed after 50 s and threw that work away: it hit the 104,857,600-change ceiling ' +
      '(invalid memory alloc request size 1677721600): more rows were updated or deleted during the run than REPACK can hold',
    );
    expect(finding?.evidence.eventIds).toEqual([start.id, failure.id]);
    expect(basisOf(finding!.evidence)).toBe('log');
    expect(finding?.evidence.facts).toMatchObject({ repack_pid: PID, cause: 'change_ceiling', work_lost_seconds: 50, alloc_request_bytes: CEILING_ALLOC_BYTES });
  });

  it('without the statement, ties an error to the REPACK its sampled slot shows', () => {
    const slot = seriesOf(`pg_replication_slots_info{slot_name="pg_repack_71001",owner="repack",database="shop",owner_pid="${PID}"}`, '1 1 1 1 1 1 1 1 1 1');
    const [finding] = evaluate([generic(10, 'out of memory')], [slot]);
    expect(finding?.summary).toBe('REPACK (CONCURRENTLY) in database shop (slot pg_repack_71001) failed after 50 s and threw that work away: it ran out of memory');
    // Only the slot ties the error to a REPACK: the alert rests on it and says so.
    expect(basisOf(finding!.evidence)).toBe('log+samples');
    expect(finding?.evidence.series.map((s) => [s.name, s.labels.slot_name])).toEqual([['pg_replication_slots_info', 'pg_repack_71001']]);
    expect(evaluate([generic(10, 'out of memory', 'ERROR', 71001)], [slot])).toEqual([]);
  });

  it('fires once per failure with a stable key, and resolves after activeForMs', () => {
    const short = repackFailed({ ...DEFAULTS, activeForMs: 30_000 });
    const events = [statement(0), generic(4, 'out of memory'), statement(6), generic(10, CEILING)];
    const steps = transitionSteps(timeline([short], new MemoryRuleView({ events }), instants(0, 20)));
    expect(steps.map(([action, , step]) => [action, step])).toEqual([['fire', 4], ['fire', 10], ['resolve', 11], ['resolve', 17]]);
    // The retry is its own run: 20 s from its own statement, not from the first one.
    const [retry] = short.evaluate(new MemoryRuleView({ events }).at(at(10)), at(10));
    expect(retry?.evidence.facts.work_lost_seconds).toBe(20);
  });
});

describe('repack-failed and repack-lost-at-swap over a real PostgreSQL 19 log', () => {
  const logs = fileURLToPath(new URL('../../test/fixtures/rule-logs/', import.meta.url));
  const load = async (file: string) => {
    const parsed = await parseLogFile(path.join(logs, file), { format: 'stderr', prefix: '%m [%p] %q%u@%d ', timezone: 'UTC', target: 'pg19' });
    return parsed.events.map((e, i) => ({ ...e, id: i + 1 })) as RuleEvent[];
  };

  it('one alert per failed run: lock_timeout from lost-at-swap, statement_timeout and cancel from repack-failed, none for the success', async () => {
    const events = await load('pg19-repack-swap-failures.log');
    const view = new MemoryRuleView({ events });
    const end = events[events.length - 1]!.tsMs;
    const failed = rule.evaluate(view.at(end), end);
    const lost = repackLostAtSwap(LOST_AT_SWAP).evaluate(view.at(end), end);
    expect(lost.map((f) => f.summary)).toEqual([
      'REPACK (CONCURRENTLY) of postgres.accounts threw away 2 s of work at the final swap: lock_timeout expired after 1 s waiting for AccessExclusiveLock behind pid 4661',
    ]);
    expect(failed.map((f) => f.summary)).toEqual([
      'REPACK (CONCURRENTLY) of postgres.accounts failed after 2 s and threw that work away: statement_timeout expired at the final swap, waiting for AccessExclusiveLock behind pid 4661',
      'REPACK (CONCURRENTLY) of postgres.accounts failed after 1 s and threw that work away: it was cancelled (pg_cancel_backend or the client) at the final swap, waiting for AccessExclusiveLock behind pid 4661',
    ]);
    // The decoding worker's FATAL and its exit, logged just before the session's error, are cited.
    const cited = failed[0]!.evidence.eventIds.map((id) => events.find((e) => e.id === id)!.message);
    expect(cited).toEqual(expect.arrayContaining([
      'terminating background worker "REPACK decoding worker" due to administrator command',
      'background worker "REPACK decoding worker" (PID 4671) exited with exit code 1',
      'canceling statement due to statement timeout',
    ]));
  });

  it('a backend killed with SIGKILL while REPACK ran (as the OOM killer does) is one alert: the crash, naming the REPACK lost', async () => {
    const events = await load('pg19-repack-backend-killed.log');
    const end = events[events.length - 1]!.tsMs;
    const view = new MemoryRuleView({ events }).at(end);
    expect(rule.evaluate(view, end)).toEqual([]);
    const [crash, ...more] = serverCrashed(CRASHED).evaluate(view, end);
    expect(more).toEqual([]);
    expect(crash?.summary).toBe(
      'client backend pid 5355 was killed by signal 9 (Killed: on Linux almost always the OOM killer) while running: REPACK (CONCURRENTLY) orders ' +
      '(REPACK keeps about 50 bytes per concurrently changed row in memory); its REPACK (CONCURRENTLY) of postgres.orders was rolled back, ' +
      '2 s of work lost; the server terminated every connection, recovered and accepts connections again',
    );
    const cited = crash!.evidence.eventIds.map((id) => events.find((e) => e.id === id)!.message);
    expect(cited).toEqual(['statement: REPACK (CONCURRENTLY) orders', 'client backend (PID 5355) was terminated by signal 9: Killed', 'database system is ready to accept connections']);
    expect(crash?.evidence.facts).toMatchObject({ repack_relation: 'orders', repack_work_lost_seconds: 2 });
  });
});
