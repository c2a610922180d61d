import { describe, expect, it } from 'vitest';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';
import { DEFAULTS, transactionOpenTooLong } from './transaction-open-too-long.js';

// Steps of one minute; the default threshold (1 h) is sixty of them.
const STEP = 60_000;
const rule = transactionOpenTooLong();
const grid = { stepMs: STEP };
const at = (step: number) => T0 + step * STEP;
const THRESHOLD_SECONDS = DEFAULTS.minOpenMs / 1000;

interface Session {
  pid: string;
  datname: string;
  usename: string;
  application_name: string;
  state: string;
  strongest_lock: string;
  query: string;
}
const ETL: Session = {
  pid: '4242', datname: 'shop', usename: 'etl', application_name: 'nightly-load', state: 'active', strongest_lock: 'RowExclusiveLock',
  query: "UPDATE orders SET status = 'archived' WHERE placed_at < '2025-01-01'",
};

const labelsOf = (l: Record<string, string>) => Object.entries(l).map(([k, v]) => `${k}="${v.replace(/"/g, '\\"')}"`).join(',');

/** One session's transaction age (seconds per step, `_` not sampled) and its relation locks. */
function session(ageSeconds: string, locks: string | null, s: Session = ETL): SeriesData[] {
  const { state, strongest_lock, query, ...identity } = s;
  return [
    seriesOf(`pg_long_transactions_xact_age_seconds{${labelsOf({ ...identity, state, strongest_lock, query })}}`, ageSeconds, grid),
    ...(locks === null ? [] : [seriesOf(`pg_long_transactions_relation_locks{${labelsOf(identity)}}`, locks, grid)]),
  ];
}

const evaluateAt = (series: SeriesData[], step: number) => rule.evaluate(new MemoryRuleView({ series, staleAfterMs: 2 * STEP }).at(at(step)), at(step));

describe('transaction-open-too-long at its defaults', () => {
  it('fires at 1 h, naming the pid, user, application, database, state, statement (no literals) and the locks held', () => {
    const [finding] = evaluateAt(session(`3540 ${THRESHOLD_SECONDS}`, '3 3'), 1);
    expect(finding?.summary).toBe('session pid 4242 of user etl (application nightly-load) in database shop on primary has had a transaction open for 60 min ' +
      '(active, running: UPDATE orders SET status = ? WHERE placed_at < ?): it keeps 3 relation locks (the strongest RowExclusiveLock) until it ends, ' +
      'so DDL on those tables waits and queues everyone behind it');
    expect(finding?.dedupKey).toBe('transaction-open-too-long/primary/4242');
    expect(finding?.labels).toEqual({ datname: 'shop', usename: 'etl', application_name: 'nightly-load' });
    expect(finding?.evidence.facts).toMatchObject({ pid: 4242, open_seconds: 3600, relation_locks: 3, strongest_lock: 'RowExclusiveLock', state: 'active' });
    expect(finding?.evidence.facts.query).not.toContain("'");
    expect(finding?.evidence.series.map((s) => s.name)).toEqual(['pg_long_transactions_xact_age_seconds', 'pg_long_transactions_relation_locks']);
  });

  it('says "last statement" between statements, and what it holds when it holds no relation lock', () => {
    const [finding] = evaluateAt(session('5000', '0', { ...ETL, state: 'idle in transaction', strongest_lock: '', query: 'COMMIT' }), 0);
    expect(finding?.summary).toMatch(/ \(idle in transaction, last statement: COMMIT\): it holds no relation lock now but keeps any it takes until it ends, /);
  });

  it('one alert per session: two sessions of one application are two', () => {
    const findings = evaluateAt([...session('4000', '1'), ...session('3700', '1', { ...ETL, pid: '4243' })], 0);
    expect(findings.map((f) => f.dedupKey)).toEqual(['transaction-open-too-long/primary/4242', 'transaction-open-too-long/primary/4243']);
  });

  it('a session whose state or statement changed is still one session, read at its newest sample', () => {
    const series = [...session(`3650 3710 _`, '2 2 2'), ...session(`_ _ 3770`, null, { ...ETL, state: 'idle in transaction', query: 'SELECT 1' })];
    const findings = evaluateAt(series, 2);
    expect(findings).toHaveLength(1);
    expect(findings[0]!.summary).toMatch(/open for 63 min \(idle in transaction, last statement: SELECT \?\)/);
  });

  const quiet: Array<[string, SeriesData[], number]> = [
    ['near miss: open for 59 min 59 s', session(String(THRESHOLD_SECONDS - 1), '5'), 0],
    ['a normal day: transactions of seconds', session('0.2 1.5 30', '1 1 1'), 2],
    ['the session ended: its last sample is stale', session(`${THRESHOLD_SECONDS} _ _ _`, '1 _ _ _'), 3],
  ];
  for (const [name, series, step] of quiet) it(`quiet: ${name}`, () => expect(evaluateAt(series, step)).toEqual([]));

  it('is not judged on a standby, whose sessions block no DDL', () => {
    const standby = seriesOf('pg_standby_replay_standing_still_seconds', '0', grid);
    expect(evaluateAt([...session('7200', '1'), standby], 0)).toEqual([]);
  });

  it('fires once while the transaction stays open and resolves when it ends', () => {
    const series = session(Array.from({ length: 8 }, (_, i) => String(3480 + i * 60)).join(' ') + ' _ _ _ _ _', '1 1 1 1 1 1 1 1 _ _ _ _ _');
    const transitions = timeline([rule], new MemoryRuleView({ series, staleAfterMs: 2 * STEP }), instants(0, 12, STEP), { refireMinIntervalMs: 3_600_000, holdDownMs: STEP });
    const key = transitions[0]!.dedupKey;
    expect(transitionSteps(transitions, T0, STEP)).toEqual([['fire', key, 2], ['resolve', key, 10]]);
  });
});
