import { describe, expect, it } from 'vitest';
import type { GenericDetails } from '../domain/index.js';
import { dropBlocksLockQueue, DEFAULTS } from './drop-blocks-lock-queue.js';
import { MemoryRuleView, eventOf } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { RuleEvent } from './rule-view.js';
import { NOTATION_STEP_MS as STEP, NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import type { SeriesData } from './rule-view.js';
import { lockTimeoutDetails, lockWaitDetails, relationLock } from './test-events.js';

const at = (step: number) => T0 + step * STEP;
const rule = dropBlocksLockQueue(DEFAULTS);
const DROP = 'DROP TABLE build_logs;';
const KEY = 'drop-blocks-lock-queue/primary/60010';

function wait(step: number, pid: number, mode: string, statement: string, queue: number[], o: { relation?: number; phase?: 'waiting' | 'acquired' } = {}) {
  return eventOf('lock_wait', lockWaitDetails({
    waiting_pid: pid, lock_mode: mode, phase: o.phase ?? 'waiting', lock_object: relationLock(o.relation ?? 16402, 16384),
    wait_ms: 1000, holder_pids: o.phase === 'acquired' ? null : [59990], queue_pids: o.phase === 'acquired' ? null : queue, statement,
  }), { tsMs: at(step), pid, database: 'ci' });
}

// The DROP (60010) queues behind a long reader (59990); two readers queue behind the DROP.
const ddl = wait(1, 60010, 'AccessExclusiveLock', DROP, [60010]);
const reader1 = wait(2, 60011, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 1;', [60010, 60011]);
const reader2 = wait(3, 60012, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 2;', [60010, 60011, 60012]);
const generic = (step: number, pid: number, level: 'ERROR' | 'LOG', message: string): RuleEvent =>
  eventOf('generic', { classified: false } as GenericDetails, { tsMs: at(step), pid, level, message });

const evaluate = (events: RuleEvent[], step = 4, series: SeriesData[] = []) =>
  rule.evaluate(new MemoryRuleView({ events, series, staleAfterMs: STEP }).at(at(step)), at(step));

/** A pg_lock_waits sample of one waiting session (wait seconds per step). */
function sampled(pid: number, mode: string, query: string, blocking: string, waits: string): SeriesData {
  return seriesOf(
    `pg_lock_waits_session_wait_seconds{datname="ci",pid="${pid}",usename="app",application_name="",locktype="relation",mode="${mode}",` +
    `schemaname="public",relname="build_logs",blocking_pids="${blocking}",query="${query}"}`, waits);
}
const sessions = (counts: string) => seriesOf('pg_lock_waits_sessions{datname="ci"}', counts);

describe('drop-blocks-lock-queue', () => {
  const cases: Array<[string, RuleEvent[], number]> = [
    ['fires: two readers queue behind the waiting DROP', [ddl, reader1, reader2], 2],
    ['fires: the queue in the DROP\'s own DETAIL is enough', [wait(1, 60010, 'AccessExclusiveLock', DROP, [60010, 60020, 60021])], 2],
    ['quiet: the DROP waits but nobody queues behind it yet', [ddl], 0],
    ['quiet: a reader waits, but not behind a DDL', [reader1, reader2], 0],
    ['quiet: the waiters are on another relation', [ddl, wait(2, 60011, 'AccessShareLock', 'SELECT 1', [60011], { relation: 16999 })], 0],
    ['quiet: the DROP acquired its lock', [ddl, reader1, reader2, wait(4, 60010, 'AccessExclusiveLock', DROP, [], { phase: 'acquired' })], 0],
    ['quiet: the DROP hit lock_timeout', [ddl, reader1, eventOf('lock_timeout', lockTimeoutDetails({ pid: 60010, statement: DROP }), { tsMs: at(3), pid: 60010, level: 'ERROR' })], 0],
    ['quiet: the DROP was cancelled (a generic ERROR of its session)', [ddl, reader1, generic(3, 60010, 'ERROR', 'canceling statement due to user request')], 0],
    ['fires: a LOG line of the DROP\'s session is not its end', [ddl, reader1, generic(3, 60010, 'LOG', 'duration: 1.0 ms')], 1],
  ];
  for (const [name, events, blocked] of cases) {
    it(name, () => {
      const findings = evaluate(events);
      expect(findings.length).toBe(blocked > 0 ? 1 : 0);
      if (blocked > 0) expect(findings[0]?.summary).toMatch(new RegExp(`blocks at least ${blocked} quer(y|ies) queued behind it \\(the log shows only`));
    });
  }

  it('says what waits, for how long, behind whom, and how many queries queue behind it', () => {
    const [finding] = evaluate([ddl, reader1, reader2]);
    // From the log alone: a lower bound, and what would count them all.
    expect(finding?.summary).toBe('DROP TABLE build_logs has waited 16 s for AccessExclusiveLock behind pid 59990 and blocks at least 2 queries queued behind it ' +
      '(the log shows only waits past deadlock_timeout; pgvigil run\'s pg_lock_waits samples would count them all)');
    expect(finding?.evidence.eventIds).toEqual([ddl.id, reader1.id, reader2.id]);
    expect(finding?.evidence.facts).toMatchObject({ blocked_pids: '60011, 60012', holder_pids: '59990' });
    expect(finding?.severity).toBe('warning');
  });

  it('names the table and database when the daemon resolved the OIDs, keeping the OIDs beside them', () => {
    const named = (event: RuleEvent<'lock_wait'>): RuleEvent<'lock_wait'> => {
      const copy = structuredClone(event);
      Object.assign(copy.details.lock_object, { database_name: 'ci', relation_name: 'public.build_logs' });
      return copy;
    };
    const [finding] = evaluate([named(ddl), named(reader1)]);
    expect(finding?.summary).toMatch(/^DROP TABLE build_logs has waited 16 s for AccessExclusiveLock on ci\.public\.build_logs \(relation 16402 of database 16384\) behind pid 59990 and blocks/);
    expect(finding?.evidence.facts).toMatchObject({ lock: 'ci.public.build_logs (relation 16402 of database 16384)' });
  });

  describe('with pg_lock_waits samples', () => {
    const ddlSample = sampled(60010, 'AccessExclusiveLock', 'DROP TABLE build_logs;', '59990', '_ _ 10 15 20');
    const readerSamples = [
      sampled(60011, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 1', '59990,60010', '_ _ _ 5 10'),
      sampled(60012, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 2', '59990,60010', '_ _ _ _ 5'),
    ];

    it('fires from the samples alone (log_lock_waits off): the sessions whose pg_blocking_pids name the DROP', () => {
      const [finding] = evaluate([], 4, [ddlSample, ...readerSamples, sessions('_ _ 1 2 3')]);
      expect(finding?.summary).toBe('DROP TABLE build_logs has waited 20 s for AccessExclusiveLock behind pid 59990 and blocks 2 queries queued behind it');
      expect(finding?.dedupKey).toBe(KEY);
    });

    it('adds sampled waiters to the logged wait: one alert, the union of both', () => {
      const more = sampled(60013, 'RowExclusiveLock', 'INSERT INTO build_logs VALUES (1)', '60010', '_ _ _ _ 2');
      const findings = evaluate([ddl, reader1], 4, [ddlSample, more, sessions('_ _ 1 2 3')]);
      expect(findings).toHaveLength(1);
      expect(findings[0]?.evidence.facts.blocked_pids).toBe('60011, 60013');
    });

    it('ends from the samples alone: the newest complete collection of the database no longer shows the DROP', () => {
      const until3 = [sampled(60010, 'AccessExclusiveLock', 'DROP TABLE build_logs;', '59990', '_ _ 10 15 _'),
        sampled(60011, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 1', '59990,60010', '_ _ _ 5 _')];
      expect(evaluate([], 3, [...until3, sessions('_ _ 1 2 0')])).toHaveLength(1);
      expect(evaluate([], 4, [...until3, sessions('_ _ 1 2 0')])).toEqual([]);
      // Not complete (more waiters than are reported one by one): the older samples still count.
      expect(evaluate([], 4, [...until3, sessions('_ _ 1 2 99')])).toHaveLength(1);
    });

    it('quiet: the sampled waiter is not a DDL', () => {
      expect(evaluate([], 4, readerSamples)).toEqual([]);
    });

    it('ends when the log says the DROP got its lock, though the samples taken before are still fresh', () => {
      // Seen live on PG 18: the samples kept the alert open (its summary still counting the wait
      // up, without the log evidence) until they went stale.
      const samples = [sampled(60010, 'AccessExclusiveLock', 'DROP TABLE build_logs', '59990', '_ _ 10 15 _'),
        sampled(60011, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 1', '60010', '_ _ _ 5 _'), sessions('_ _ 1 2 _')];
      expect(evaluate([ddl, reader1], 4, samples)).toHaveLength(1);
      const acquired = wait(3.5, 60010, 'AccessExclusiveLock', DROP, [], { phase: 'acquired' });
      expect(evaluate([ddl, reader1, acquired], 4, samples)).toEqual([]);
      expect(evaluate([acquired], 4, samples)).toEqual([]);
    });

    it('a complete collection taken before the wait was logged says nothing about it', () => {
      // Collected at step 0 with no waiters; the DROP logs its wait at step 2; the next collection is due later.
      const logged = wait(2, 60010, 'AccessExclusiveLock', DROP, [60010, 60020, 60021]);
      const view = new MemoryRuleView({ events: [logged], series: [sessions('0 _ _ _ _ _')], staleAfterMs: 60_000 });
      expect(rule.evaluate(view.at(at(3)), at(3)).map((f) => f.dedupKey)).toEqual([KEY]);
      // A complete collection after the line that no longer shows the DROP ends it.
      const after = new MemoryRuleView({ events: [logged], series: [sessions('0 _ _ 0 _ _')], staleAfterMs: 60_000 });
      expect(rule.evaluate(after.at(at(4)), at(4))).toEqual([]);
    });

    it('a logged wait ends when a complete sample of its database no longer shows the DROP', () => {
      expect(evaluate([ddl, reader1, reader2], 4, [sessions('_ _ _ _ 0')])).toEqual([]);
      // Not complete (more waiters than are reported one by one): absence proves nothing.
      expect(evaluate([ddl, reader1, reader2], 4, [sessions('_ _ _ _ 25')])).toHaveLength(1);
    });
  });

  describe('DDL that takes a weaker lock queues the queries that conflict with it', () => {
    const CREATE_INDEX = 'CREATE INDEX build_logs_kind ON build_logs (kind);';
    const createIndex = wait(1, 60010, 'ShareLock', CREATE_INDEX, [60010]);
    const writer = wait(2, 60011, 'RowExclusiveLock', "UPDATE build_logs SET kind = 'x' WHERE id = 1;", [60011]);
    const reader = wait(3, 60012, 'AccessShareLock', 'SELECT * FROM build_logs WHERE id = 2;', [60012]);

    it('a CREATE INDEX waiting for SHARE blocks the writes behind it, not the reads', () => {
      const [finding] = evaluate([createIndex, writer, reader]);
      expect(finding?.summary).toMatch(/^CREATE INDEX on build_logs has waited 16 s for ShareLock behind pid 59990 and blocks at least 1 query queued behind it/);
      expect(finding?.evidence.facts).toMatchObject({ blocked_pids: '60011' });
    });

    it.each([
      ['ShareRowExclusiveLock', 'CREATE TRIGGER audit AFTER INSERT ON build_logs FOR EACH ROW EXECUTE FUNCTION audit();'],
      ['ShareRowExclusiveLock', 'ALTER TABLE build_logs ADD FOREIGN KEY (run_id) REFERENCES runs;'],
      ['ExclusiveLock', 'REFRESH MATERIALIZED VIEW CONCURRENTLY build_logs;'],
    ])('%s for %s queues the writes', (mode, statement) => {
      expect(evaluate([wait(1, 60010, mode, statement, [60010]), writer])).toHaveLength(1);
    });

    it('a CREATE INDEX CONCURRENTLY (SHARE UPDATE EXCLUSIVE) queues no query', () => {
      expect(evaluate([wait(1, 60010, 'ShareUpdateExclusiveLock', 'CREATE INDEX CONCURRENTLY k ON build_logs (kind);', [60010]), writer, reader])).toEqual([]);
    });
  });

  it('escalates to error when ten queries queue', () => {
    const queue = [60010, ...Array.from({ length: 10 }, (_, i) => 61000 + i)];
    expect(evaluate([wait(1, 60010, 'AccessExclusiveLock', DROP, queue)])[0]?.severity).toBe('error');
  });

  it('fires once and resolves when the DROP gets its lock', () => {
    const events = [ddl, reader1, reader2, wait(6, 60010, 'AccessExclusiveLock', DROP, [], { phase: 'acquired' })];
    expect(transitionSteps(timeline([rule], new MemoryRuleView({ events }), instants(0, 8)))).toEqual([
      ['fire', KEY, 2],
      ['resolve', KEY, 6],
    ]);
  });
});
