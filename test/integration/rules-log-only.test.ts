/**
 * The replay, lock-queue, crash, wraparound and parallel-autovacuum rules over real logs alone, as
 * `pgvigil analyze --rules` runs them: the golden events of recorded fixtures
 * (test/fixtures/logs/<case>/expected.ndjson, written by real PostgreSQL 15, 18 and 19 servers),
 * no samples at all. What each rule can say from the log is asserted; an alert that cites no
 * series has the log as its basis.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { dropBlocksLockQueue } from '../../src/rules/drop-blocks-lock-queue.js';
import { MemoryRuleView, eventOf } from '../../src/rules/memory-rule-view.js';
import { parallelAutovacuumStarved, DEFAULTS as STARVED_DEFAULTS } from '../../src/rules/parallel-autovacuum-starved.js';
import { replayStalled } from '../../src/rules/replay-stalled.js';
import { replayStalledOnUnlink } from '../../src/rules/replay-stalled-on-unlink.js';
import type { Rule } from '../../src/rules/rule.js';
import type { RuleEvent, TargetInfo } from '../../src/rules/rule-view.js';
import { serverCrashed } from '../../src/rules/server-crashed.js';
import { wraparoundApproaching } from '../../src/rules/wraparound-approaching.js';
import { ddlDetails } from '../../src/rules/test-events.js';
import { EXPECTED_FILE, FIXTURES_DIR } from '../helpers/scenarios/fixture-case.js';

/** A case's golden events as stored events of `target`, ids counting up from `firstId`. */
function goldenEvents(name: string, target: string, firstId = 1): RuleEvent[] {
  const lines = fs.readFileSync(path.join(FIXTURES_DIR, name, EXPECTED_FILE), 'utf8').split('\n').filter((l) => l !== '');
  return lines.map((line, i) => ({ ...(JSON.parse(line) as AnyLogEvent), target, id: firstId + i }) as RuleEvent);
}

const TARGETS: TargetInfo[] = [{ name: 'primary', cluster: null }, { name: 'standby1', cluster: null }];
const evaluate = (rule: Rule, events: RuleEvent[], atMs: number) =>
  rule.evaluate(new MemoryRuleView({ events, targets: TARGETS }).at(atMs), atMs);
const tsOf = (events: RuleEvent[], pick: (e: RuleEvent) => boolean) => events.find(pick)!.tsMs;

describe('rules over a standby\'s log alone (recorded recovery conflicts)', () => {
  // The recorded waits last about 1 s: a 0 s threshold lets them show.
  const stalled = replayStalled({ minStallSeconds: 0, ddlLookbackMs: 15 * 60_000 });
  const unlink = replayStalledOnUnlink({ minStallSeconds: 0, ddlLookbackMs: 15 * 60_000 });

  for (const name of ['pg15-stderr-standby-recovery-conflicts', 'pg18-csvlog-standby-recovery-conflicts', 'pg19-jsonlog-standby-recovery-conflicts']) {
    describe(name, () => {
      const events = goldenEvents(name, 'standby1');
      const waiting = (reason: string) => events.find((e) => e.kind === 'recovery_conflict_wait' &&
        (e as RuleEvent<'recovery_conflict_wait'>).details.phase === 'waiting' && (e as RuleEvent<'recovery_conflict_wait'>).details.reason === reason)!;

      it('names each conflict replay waited on, exactly, while it lasted, with no series', () => {
        for (const [reason, how] of [['snapshot', 'for rows still visible to'], ['lock', 'on a lock held by']] as const) {
          const wait = waiting(reason);
          const [finding] = evaluate(stalled, events, wait.tsMs + 500);
          const pid = (wait as RuleEvent<'recovery_conflict_wait'>).details.conflicting_pids?.[0];
          expect(finding?.summary).toMatch(new RegExp(
            `^replay on standby1 has not advanced for 1 s \\(from its log\\): replay waiting ${how} standby query pid ${pid} \\(recovery conflict on ${reason}\\)$`,
          ));
          expect(finding?.evidence.series).toEqual([]);
          expect(finding?.evidence.eventIds).toContain(wait.id);
        }
        // Over once `finished waiting` is logged.
        expect(evaluate(stalled, events, events[events.length - 1]!.tsMs)).toEqual([]);
      });

      it('a DROP TABLE on the primary lining up with the lock wait: the lock\'s probable owner, never an unlink from the log', () => {
        // The lock conflict was the DROP TABLE's lock record; the primary's own log of that run is
        // not recorded, so its statement line is added here, 1 s before the standby's wait began.
        const lockWait = waiting('lock');
        const drop = eventOf('ddl', ddlDetails('DROP TABLE', 'rc_lock_table'), { tsMs: lockWait.tsMs - 1_100, target: 'primary', pid: 900, id: 10_000 });
        const [during] = evaluate(stalled, [...events, drop], lockWait.tsMs + 500);
        expect(during?.summary).toMatch(/ \(recovery conflict on lock, probably for DROP TABLE of rc_lock_table on primary at \d\d:\d\d:\d\d UTC\)$/);
        expect(during?.evidence.eventIds).toEqual(expect.arrayContaining([drop.id, lockWait.id]));
        // Once the wait ended, whether replay stood still on the unlink needs the standby's samples.
        const finished = events.find((e) => e.kind === 'recovery_conflict_wait' && e.tsMs > lockWait.tsMs)!;
        expect(evaluate(unlink, [...events, drop], finished.tsMs + 1_000)).toEqual([]);
      });

      it('with log_recovery_conflict_waits off (its lines removed), the cancel lines show replay waited, up to the delay', () => {
        const cancelsOnly = events.filter((e) => e.kind !== 'recovery_conflict_wait');
        const firstCancel = tsOf(cancelsOnly, (e) => e.kind === 'recovery_conflict');
        const [finding] = evaluate(stalled, cancelsOnly, firstCancel + 1_000);
        expect(finding?.summary).toMatch(
          /^replay on standby1 stood still for a time its log does not show: replay waited on a recovery conflict on snapshot until .* UTC, when it cancelled standby query pid \d+ \(for up to max_standby_streaming_delay, 30 s by default; log_recovery_conflict_waits = on would log when the wait began\)$/,
        );
        expect(finding?.evidence.series).toEqual([]);
      });
    });
  }
});

describe('lock queues, crashes and parallel autovacuum from the log alone', () => {
  it('a REPACK waiting for its swap lock is a queued DDL, ended by its lock_timeout (pg19)', () => {
    const events = goldenEvents('pg19-stderr-repack-lock-timeout-at-swap', 'primary');
    const waited = tsOf(events, (e) => e.kind === 'lock_wait');
    const anyQueue = dropBlocksLockQueue({ minBlockedQueries: 0, errorBlockedQueries: 10, activeForMs: 30 * 60_000 });
    const [finding] = evaluate(anyQueue, events, waited + 100);
    expect(finding?.summary).toMatch(/^REPACK accounts has waited 0 s for AccessExclusiveLock behind pid 27629 and blocks at least 0 queries queued behind it \(the log shows only/);
    expect(evaluate(anyQueue, events, tsOf(events, (e) => e.kind === 'lock_timeout') + 100)).toEqual([]);
    // With the default (a query queued behind it), nothing: nobody queued behind the REPACK.
    expect(evaluate(dropBlocksLockQueue(), events, waited + 100)).toEqual([]);
  });

  for (const name of ['pg15-stderr-lock-waits-and-lock-timeout', 'pg18-csvlog-lock-waits-and-lock-timeout', 'pg19-jsonlog-lock-waits-and-lock-timeout']) {
    it(`quiet on a row lock and a SELECT behind LOCK TABLE: no DDL is waiting (${name})`, () => {
      const events = goldenEvents(name, 'primary');
      for (const e of events) expect(evaluate(dropBlocksLockQueue(), events, e.tsMs)).toEqual([]);
    });
  }

  for (const name of ['pg15-stderr-backend-killed-crash-restart', 'pg18-csvlog-backend-killed-crash-restart', 'pg19-jsonlog-backend-killed-crash-restart']) {
    it(`a backend killed by signal 9 is a crash, exactly (${name})`, () => {
      const events = goldenEvents(name, 'primary');
      // One finding: the recovery after the reset is the crash's own, not a second death.
      const findings = evaluate(serverCrashed(), events, events[events.length - 1]!.tsMs);
      expect(findings).toHaveLength(1);
      const [finding] = findings;
      expect(finding?.summary).toMatch(
        /^(client backend|server process) pid \d+ was killed by signal 9 \(Killed: on Linux almost always the OOM killer\).*; the server terminated every connection, recovered and accepts connections again$/,
      );
      expect(finding?.evidence.series).toEqual([]);
    });
  }

  for (const name of ['pg15-stderr-server-killed-crash-recovery', 'pg18-csvlog-server-killed-crash-recovery', 'pg18-jsonlog-server-killed-crash-recovery']) {
    it(`the whole server killed at once is a crash, seen at its next start (${name})`, () => {
      const events = goldenEvents(name, 'primary');
      const findings = evaluate(serverCrashed(), events, events[events.length - 1]!.tsMs);
      expect(findings).toHaveLength(1);
      expect(findings[0]!.summary).toMatch(
        /^the whole server died without logging why .*: no crash or shutdown line before its start at \d\d:\d\d:\d\d UTC, which found it not properly shut down \(last known up at [\d-]+ [\d:]+ UTC\) and ran crash recovery; it accepts connections again$/,
      );
      expect(findings[0]!.evidence.facts).toMatchObject({ process_type: 'postmaster', crashes: 1 });
    });
  }

  for (const name of ['pg15-stderr-multixact-members-run-short', 'pg15-csvlog-multixact-members-run-short']) {
    it(`the multixact members space running short, from the server's warning alone (${name})`, () => {
      const events = goldenEvents(name, 'primary');
      const [finding] = evaluate(wraparoundApproaching(), events, events[events.length - 1]!.tsMs);
      expect(finding).toMatchObject({ severity: 'critical', labels: { datname: 'OID 1', counter: 'multixact_member' } });
      expect(finding?.summary).toMatch(/^the server warns database with OID 1 must be vacuumed before 9,218 more multixact members are used: /);
    });
  }

  it('parallel autovacuum given fewer workers than planned (pg19): named from its report alone', () => {
    const events = goldenEvents('pg19-stderr-parallel-autovacuum-starved', 'primary');
    const reported = events[events.length - 1]!.tsMs;
    // One starved report is not "repeatedly": quiet by default, named with min_reports 1.
    expect(evaluate(parallelAutovacuumStarved(), events, reported)).toEqual([]);
    const [finding] = evaluate(parallelAutovacuumStarved({ ...STARVED_DEFAULTS, minReports: 1 }), events, reported);
    expect(finding?.summary).toBe(
      'autovacuum got fewer parallel workers than it planned in 1 of 1 parallel runs in the last 60 min ' +
      '(worst: postgres.public.parallel_autovacuum_starved, index vacuum: 3 planned, 1 launched): ' +
      'the max_parallel_workers / max_worker_processes pool is exhausted ' +
      '(its size is not sampled: pgvigil run reads max_parallel_workers and max_worker_processes from pg_settings)',
    );
    expect(finding?.evidence.series).toEqual([]);
  });
});
