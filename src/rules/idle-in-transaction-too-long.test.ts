import { describe, expect, it } from 'vitest';
import { DEFAULTS, idleInTransactionTooLong } from './idle-in-transaction-too-long.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { instants, timeline, transitionSteps } from './rule-timeline.js';
import type { SeriesData } from './rule-view.js';
import { NOTATION_T0 as T0, seriesOf } from './series-notation.js';

// Steps of one minute; the default threshold (10 min) is ten of them.
const STEP = 60_000;
const rule = idleInTransactionTooLong();
const grid = { stepMs: STEP };
const at = (step: number) => T0 + step * STEP;
const THRESHOLD_SECONDS = DEFAULTS.minIdleMs / 1000;

interface Identity {
  datname: string;
  usename: string;
  application_name: string;
}
const RAILS: Identity = { datname: 'shop', usename: 'web', application_name: 'rails' };

/** One identity's sessions: the longest idle wait (seconds, `_` none sampled, null none idle) and how many are idle. */
function identity(idleSeconds: string, sessions: string, who: Identity = RAILS): SeriesData[] {
  const labels = `datname="${who.datname}",usename="${who.usename}",application_name="${who.application_name}"`;
  return [
    seriesOf(`pg_stat_activity_idle_in_transaction_max_seconds{${labels}}`, idleSeconds, grid),
    seriesOf(`pg_stat_activity_idle_in_transaction{${labels}}`, sessions, grid),
  ];
}
const timeout = (seconds: number, steps: number) => seriesOf('pg_settings_idle_in_transaction_session_timeout_seconds', Array<string>(steps).fill(String(seconds)).join(' '), grid);

const evaluateAt = (series: SeriesData[], step: number) => rule.evaluate(new MemoryRuleView({ series, staleAfterMs: 2 * STEP }).at(at(step)), at(step));

describe('idle-in-transaction-too-long at its defaults', () => {
  it('fires at 10 min idle in a transaction, naming the database, user and application, with no pid', () => {
    const [finding] = evaluateAt([...identity(`540 ${THRESHOLD_SECONDS}`, '1 1'), timeout(0, 2)], 1);
    expect(finding?.summary).toBe('1 session of user web (application rails) in database shop on primary is idle in a transaction, for 10 min: ' +
      'it keeps every lock taken, so DDL on those tables waits and queues everyone behind it; idle_in_transaction_session_timeout is off');
    expect(finding?.dedupKey).toBe('idle-in-transaction-too-long/primary/shop/web/rails');
    expect(finding?.labels).toEqual(RAILS);
    expect(finding?.evidence.facts).toMatchObject({ idle_seconds: 600, sessions: 1, session_timeout_seconds: 0 });
  });

  it('speaks of a pool\'s sessions together, by the longest', () => {
    const [finding] = evaluateAt(identity('3700', '4'), 0);
    expect(finding?.summary).toMatch(/^4 sessions of user web \(application rails\) in database shop on primary are idle in a transaction, the longest for 62 min: they keep every lock taken/);
  });

  it('names a session without application_name as such', () => {
    const [finding] = evaluateAt(identity('900', '1', { datname: 'shop', usename: 'alice', application_name: '' }), 0);
    expect(finding?.summary).toMatch(/^1 session of user alice \(no application_name\) in database shop/);
  });

  const quiet: Array<[string, SeriesData[]]> = [
    ['near miss: idle in a transaction for 9 min 59 s', identity(String(THRESHOLD_SECONDS - 1), '3')],
    ['a normal day: idle for seconds between statements', identity('0.2 1.5 0.3', '5 6 4')],
    ['nobody idle in a transaction (NULL)', identity('null', '0')],
  ];
  for (const [name, series] of quiet) {
    it(`quiet: ${name}`, () => expect(evaluateAt(series, series[0]!.points.length - 1)).toEqual([]));
  }

  it('one alert per identity; resolves once its sessions commit, roll back or end', () => {
    const etl = { datname: 'shop', usename: 'etl', application_name: 'airflow' };
    const view = new MemoryRuleView({
      series: [...identity('300 600 660 720 null null', '1 1 1 1 0 0'), ...identity('700 760 820 880 940 1000', '2 2 2 2 2 2', etl)],
      staleAfterMs: 2 * STEP,
    });
    const steps = transitionSteps(timeline([rule], view, instants(0, 5, STEP), { refireMinIntervalMs: 3_600_000 }), T0, STEP);
    expect(steps).toEqual([
      ['fire', 'idle-in-transaction-too-long/primary/shop/etl/airflow', 0],
      ['fire', 'idle-in-transaction-too-long/primary/shop/web/rails', 1],
      ['resolve', 'idle-in-transaction-too-long/primary/shop/web/rails', 4],
    ]);
  });
});
