import { describe, expect, it } from 'vitest';
import { basisOf } from '../domain/index.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent, SeriesData } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { serverCrashed, DEFAULTS } from './server-crashed.js';
import { crashDetails, ddlDetails, restartDetails } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = serverCrashed(DEFAULTS);

const oom = eventOf('server_crash', crashDetails({ pid: 41, signal: 9, signal_name: 'Killed', statement: 'REPACK (CONCURRENTLY) events;' }), { tsMs: at(1), pid: 1001 });
const reinit = eventOf('server_restart', restartDetails('reinitializing'), { tsMs: at(1) + 50, pid: 1001 });
const ready = eventOf('server_restart', restartDetails('ready'), { tsMs: at(2), pid: 1001 });

const evaluate = (events: RuleEvent[], step = 3) => rule.evaluate(new MemoryRuleView({ events }).at(at(step)), at(step));

describe('server-crashed', () => {
  it('says who was killed, by what, running what, and that the server restarted', () => {
    const [finding] = evaluate([oom, reinit, ready]);
    expect(finding?.summary).toBe(
      'client backend pid 41 was killed by signal 9 (Killed: on Linux almost always the OOM killer) while running: ' +
      'REPACK (CONCURRENTLY) events (REPACK keeps about 50 bytes per concurrently changed row in memory); ' +
      'its REPACK (CONCURRENTLY) of events was rolled back, all its work lost; ' +
      'the server terminated every connection, recovered and accepts connections again',
    );
    expect(rule.severity).toBe('critical');
    expect(finding?.evidence.eventIds).toEqual([oom.id, ready.id]);
  });

  describe('a crash that ended a REPACK names the run and the work lost (repack-failed stays quiet about it)', () => {
    const PID = 41;
    const repackStatement = (step: number) =>
      eventOf('ddl', ddlDetails('REPACK', 'events', true), { tsMs: at(step), pid: PID, database: 'shop', message: 'statement: REPACK (CONCURRENTLY) events' });
    const killed = (step: number, statement: string | null) =>
      eventOf('server_crash', crashDetails({ pid: PID, signal: 9, signal_name: 'Killed', statement }), { tsMs: at(step), pid: 1001 });
    const evaluateAt = (events: RuleEvent[], series: SeriesData[] = []) => rule.evaluate(new MemoryRuleView({ events, series }).at(at(12)), at(12));

    it('from the logged statement: its start, the work lost, the statement cited', () => {
      const start = repackStatement(2);
      const crash = killed(10, null);
      const [finding] = evaluateAt([start, crash]);
      expect(finding?.summary).toMatch(/; its REPACK \(CONCURRENTLY\) of shop\.events was rolled back, 40 s of work lost; the server/);
      expect(finding?.evidence.eventIds).toEqual([start.id, crash.id]);
      expect(finding?.evidence.facts).toMatchObject({ repack_relation: 'events', repack_work_started_ms: at(2), repack_work_lost_seconds: 40 });
      expect(basisOf(finding!.evidence)).toBe('log');
    });

    it('from the sampled slot alone: named by its slot, the slot cited (basis log+samples)', () => {
      const slot = seriesOf(`pg_replication_slots_info{slot_name="pg_repack_4300",owner="repack",database="shop",owner_pid="${PID}"}`, '_ _ 1 1 1 1 1 1 1 1');
      const [finding] = evaluateAt([killed(10, null)], [slot]);
      expect(finding?.summary).toMatch(/; its REPACK \(CONCURRENTLY\) in database shop \(slot pg_repack_4300\) was rolled back, 40 s of work lost; /);
      expect(basisOf(finding!.evidence)).toBe('log+samples');
    });

    it('quiet about REPACK when the killed backend had moved on to another statement', () => {
      const [finding] = evaluateAt([repackStatement(2), killed(10, 'SELECT count(*) FROM events')]);
      expect(finding?.summary).not.toMatch(/rolled back/);
      expect(finding?.evidence.facts).not.toHaveProperty('repack_relation');
    });
  });

  const cases: Array<[string, RuleEvent[], RegExp | null]> = [
    ['a segfault of a 13-17 "server process", still reinitializing',
      [eventOf('server_crash', crashDetails({ pid: 77, process_type: 'server process', signal: 11, signal_name: 'Segmentation fault' }), { tsMs: at(1) }), reinit],
      /^server process pid 77 was terminated by signal 11 \(Segmentation fault\); the server terminated every connection and is reinitializing$/],
    ['a background worker exiting with code 2, restart_after_crash off',
      [eventOf('server_crash', crashDetails({ pid: 88, process_type: 'background worker', worker_type: 'logical replication worker', exit_code: 2 }), { tsMs: at(1) }),
        eventOf('server_restart', restartDetails('not_restarting'), { tsMs: at(1) + 10 })],
      /^background worker "logical replication worker" pid 88 exited with exit code 2; .*stayed down \(restart_after_crash is off\)$/],
    ['quiet: no crash, only an ordinary restart', [ready], null],
    ['quiet: the crash was more than 30 min ago', [eventOf('server_crash', crashDetails({ pid: 1, signal: 9 }), { tsMs: at(3) - 31 * 60_000 })], null],
  ];
  for (const [name, events, summary] of cases) {
    it(name, () => {
      const findings = evaluate(events);
      if (summary === null) expect(findings).toEqual([]);
      else expect(findings[0]?.summary).toMatch(summary);
    });
  }

  it('a crash loop is one alert whose count follows; it resolves activeForMs after the last crash', () => {
    const second = eventOf('server_crash', crashDetails({ pid: 42, signal: 9 }), { tsMs: at(4) });
    const third = eventOf('server_crash', crashDetails({ pid: 43, signal: 9 }), { tsMs: at(6) });
    const short = serverCrashed({ activeForMs: 3 * STEP });
    const transitions = timeline([short], new MemoryRuleView({ events: [oom, reinit, second, third] }), instants(0, 12), { refireMinIntervalMs: 0 });
    const key = 'server-crashed/primary';
    expect(transitionSteps(transitions)).toEqual([['fire', key, 1], ['fire', key, 4], ['fire', key, 6], ['resolve', key, 10]]);
    expect(transitions[2]!.summary).toMatch(/^crash loop: 3 crashes since 00:00:05 UTC; the latest: client backend pid 43 was killed by signal 9 /);
    expect(transitions[2]!.alert!.evidence.facts).toMatchObject({ crashes: 3, first_crash_ms: at(1), pid: 43 });
    // A crash longer than activeForMs after the one before starts a loop of its own.
    const later = eventOf('server_crash', crashDetails({ pid: 44, signal: 9 }), { tsMs: at(20) });
    expect(short.evaluate(new MemoryRuleView({ events: [oom, second, later] }).at(at(21)), at(21))[0]?.evidence.facts).toMatchObject({ crashes: 1, pid: 44 });
  });

  describe('the whole server died: seen at its next start', () => {
    const restart = (step: number, phase: Parameters<typeof restartDetails>[0], extra: Partial<ReturnType<typeof restartDetails>> = {}) =>
      eventOf('server_restart', { ...restartDetails(phase), ...extra }, { tsMs: at(step), pid: 2002 });
    const start = (step: number) => [
      restart(step, 'interrupted', { last_known_up: '2026-12-03 10:25:28 UTC' }), restart(step, 'automatic_recovery'), restart(step + 1, 'ready'),
    ];

    it('critical, with when it was last known up, from a start that finds it not properly shut down with nothing before', () => {
      for (const before of [[], [ready]]) {
        const [finding] = evaluate([...before, ...start(2)], 4);
        expect(finding?.summary).toBe(
          'the whole server died without logging why (a host reset, a kill -9 of the postmaster, or an OOM kill of the whole container): ' +
          'no crash or shutdown line before its start at 00:00:10 UTC, which found it not properly shut down ' +
          '(last known up at 2026-12-03 10:25:28 UTC) and ran crash recovery; it accepts connections again',
        );
        expect(finding?.evidence.facts).toMatchObject({ process_type: 'postmaster', last_known_up: '2026-12-03 10:25:28 UTC', crashes: 1 });
      }
    });

    it('quiet when the recovery follows a crash reset (that crash is the alert) or a shutdown', () => {
      const afterReset = evaluate([oom, reinit, ...start(2)], 4);
      expect(afterReset).toHaveLength(1);
      expect(afterReset[0]?.summary).toMatch(/^client backend pid 41 /);
      expect(evaluate([restart(1, 'shutdown_requested', { shutdown_mode: 'immediate' }), ...start(2)], 4)).toEqual([]);
      expect(evaluate([restart(1, 'shut_down'), ...start(2)], 4)).toEqual([]);
    });

    it('killed again and again: one alert, counting', () => {
      const [finding] = evaluate([...start(1), ...start(3), ...start(5)], 7);
      expect(finding?.summary).toMatch(/^crash loop: 3 crashes since 00:00:05 UTC; the latest: the whole server died /);
    });
  });
});
