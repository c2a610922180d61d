import { describe, expect, it } from 'vitest';
import type { Severity } from '../domain/index.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { silentLogger } from '../lib/logger.js';
import { AlertStore } from '../store/alert-store.js';
import { openStore } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { RuleEngine, type AlertFireInput } from './engine.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { RecordingSink } from './rule-timeline.js';
import { evidenceOf, type Finding, type Rule } from './rule.js';

/** A rule whose findings a test script decides, per evaluation instant. */
function scripted(id: string, script: (nowMs: number) => Array<Partial<Finding> & { key: string }> | 'throw'): Rule {
  return {
    id,
    severity: 'warning',
    description: 'test rule',
    evaluate(_view, nowMs) {
      const result = script(nowMs);
      if (result === 'throw') throw new Error(`${id} broke`);
      return result.map((f) => ({
        dedupKey: f.key, target: 'primary', labels: {}, summary: f.summary ?? `${f.key} is true`, evidence: evidenceOf({}),
        ...(f.severity && { severity: f.severity }),
      }));
    },
  };
}

const views = new MemoryRuleView();
const S = 1000;

function engine(rules: Rule[], options = {}, sink = new RecordingSink(), clock = new ManualClock()) {
  const errors: Array<{ obj: object; msg: string }> = [];
  const log = { info() {}, warn() {}, error: (obj: object, msg: string) => void errors.push({ obj, msg }) };
  const e = new RuleEngine({ rules, views, alerts: sink, clock, log, options: { holdDownMs: 10 * S, refireMinIntervalMs: 60 * S, ...options } });
  return { e, sink, errors, clock };
}

const actions = (sink: RecordingSink) => sink.transitions.map((t) => `${t.action} ${t.dedupKey} @${t.atMs / S}`);

describe('RuleEngine', () => {
  it('fires when a finding appears, once while it stays, and resolves after the hold-down', () => {
    const present = new Set([1, 2, 3]);
    const { e, sink } = engine([scripted('r', (t) => (present.has(t / S) ? [{ key: 'k' }] : []))]);
    for (const t of [1, 2, 3, 4, 12, 13, 14]) e.evaluate(t * S);
    expect(actions(sink)).toEqual(['fire k @1', 'resolve k @13']);
    expect(e.stats.openAlerts).toBe(0);
  });

  it('a condition that flaps within the hold-down pages once', () => {
    const present = new Set([1, 5, 9, 17]);
    const { e, sink } = engine([scripted('r', (t) => (present.has(t / S) ? [{ key: 'k' }] : []))]);
    for (let t = 1; t <= 40; t++) e.evaluate(t * S);
    expect(actions(sink)).toEqual(['fire k @1', 'resolve k @27']);
  });

  it('updates an open alert at once when the severity changes, and a new summary at most every refireMinIntervalMs', () => {
    const script = (t: number): Array<{ key: string; summary: string; severity: Severity }> =>
      [{ key: 'k', summary: `held for ${t / S} s`, severity: t >= 100 * S ? 'error' : 'warning' }];
    const { e, sink } = engine([scripted('r', script)]);
    for (const t of [1, 2, 30, 61, 62, 50 + 62]) e.evaluate(t * S);
    expect(sink.transitions.map((t) => [t.atMs / S, t.severity, t.summary])).toEqual([
      [1, 'warning', 'held for 1 s'],
      [61, 'warning', 'held for 61 s'],
      [112, 'error', 'held for 112 s'],
    ]);
  });

  it('stores the quantities the refire limit held back before the alert resolves: the record ends with the storm\'s full count, with no extra transition', () => {
    const db = openStore(':memory:');
    const store = new AlertStore(db, []);
    // 10 statements at the first sight, 15 a second later (held back: quantities only), then gone.
    const counts = new Map([[1, 10], [2, 15]]);
    const storm = scripted('r', (t) => (counts.has(t / S) ? [{ key: 'k', summary: `${counts.get(t / S)} statements cancelled` }] : []));
    const e = new RuleEngine({ rules: [storm], views, alerts: store, clock: new ManualClock(), log: silentLogger(), options: { holdDownMs: 10 * S, refireMinIntervalMs: 60 * S } });
    e.evaluate(1 * S);
    e.evaluate(2 * S);
    expect(db.prepare('SELECT summary FROM alerts').pluck().get()).toBe('10 statements cancelled');
    e.evaluate(13 * S);
    expect(db.prepare('SELECT summary, state FROM alerts').get()).toEqual({ summary: '15 statements cancelled', state: 'resolved' });
    expect(db.prepare('SELECT to_state FROM alert_transitions ORDER BY id').pluck().all()).toEqual(['firing', 'resolved']);
    db.close();
  });

  it('updates an open alert at once when its summary says something new, not only new quantities', () => {
    const script = (t: number): Array<{ key: string; summary: string }> =>
      [{ key: 'k', summary: `pid ${t / S} killed after ${t / S} s; the server ${t < 3 * S ? 'is reinitializing' : 'recovered'}` }];
    const { e, sink } = engine([scripted('r', script)]);
    for (const t of [1, 2, 3, 4]) e.evaluate(t * S);
    expect(sink.transitions.map((t) => [t.atMs / S, t.summary])).toEqual([
      [1, 'pid 1 killed after 1 s; the server is reinitializing'],
      [3, 'pid 3 killed after 3 s; the server recovered'],
    ]);
  });

  it('isolates a rule that throws: counted and logged with its id, the others run, its open alerts stay open', () => {
    let broken = false;
    const flaky = scripted('flaky', () => (broken ? 'throw' : [{ key: 'f' }]));
    const steady = scripted('steady', (t) => (t < 20 * S ? [{ key: 's' }] : []));
    const { e, sink, errors } = engine([flaky, steady]);
    e.evaluate(1 * S);
    broken = true;
    const report = e.evaluate(40 * S);
    expect(report.failedRules).toEqual(['flaky']);
    expect(actions(sink)).toEqual(['fire f @1', 'fire s @1', 'resolve s @40']);
    expect(e.stats.ruleFailures).toEqual({ flaky: 1 });
    expect(errors[0]?.obj).toMatchObject({ ruleId: 'flaky' });
    broken = false;
    e.evaluate(41 * S);
    expect(actions(sink)).toHaveLength(3);
  });

  it('keeps the first of two findings with one dedup key in an evaluation and counts the other', () => {
    const { e, sink } = engine([scripted('a', () => [{ key: 'same', summary: 'first' }]), scripted('b', () => [{ key: 'same', summary: 'second' }])]);
    e.evaluate(1 * S);
    expect(sink.transitions.map((t) => t.summary)).toEqual(['first']);
    expect(e.stats.duplicateFindings).toBe(1);
  });

  it('retries a transition the store could not write', () => {
    let failing = true;
    const written: string[] = [];
    const sink = {
      fire(alert: AlertFireInput) {
        if (failing) throw new Error('SQLITE_FULL');
        written.push(alert.dedupKey);
      },
      resolve() {},
    };
    const { e } = engine([scripted('r', () => [{ key: 'k' }])], {}, sink as unknown as RecordingSink);
    e.evaluate(1 * S);
    expect(e.stats.sinkFailures).toBe(1);
    failing = false;
    e.evaluate(2 * S);
    expect(written).toEqual(['k']);
  });

  it('after a restart resolves alerts whose condition is gone (after the hold-down) and those of rules no longer enabled', async () => {
    const sink = Object.assign(new RecordingSink(), {
      openAlerts: () => [{ ruleId: 'r', dedupKey: 'gone' }, { ruleId: 'r', dedupKey: 'still' }, { ruleId: 'removed-rule', dedupKey: 'orphan' }],
    });
    const clock = new ManualClock(0);
    const { e } = engine([scripted('r', () => [{ key: 'still' }])], {}, sink, clock);
    await e.start();
    e.evaluate(1 * S);
    e.evaluate(11 * S);
    expect(actions(sink)).toEqual(['resolve orphan @1', 'resolve gone @11']);
    await e.stop();
  });

  it('evaluates on its interval and right after the store writer commits, never after stop', async () => {
    const clock = new ManualClock(0);
    const db = openStore(':memory:');
    const writer = new StoreWriter(db, clock, silentLogger());
    const seen: number[] = [];
    const rule = scripted('r', (t) => {
      seen.push(t);
      return [];
    });
    const e = new RuleEngine({ rules: [rule], views, alerts: new RecordingSink(), clock, log: silentLogger(), commits: writer, options: { intervalMs: 5 * S, flushMinGapMs: S } });
    await e.start();
    await clock.advance(10 * S);
    expect(seen).toEqual([5 * S, 10 * S]);
    await clock.advance(2 * S);
    writer.enqueue({ samples: [{ target: 'primary', name: 'pg_up', labels: {}, tsMs: 12 * S, value: 1 }] });
    writer.flush();
    await Promise.resolve();
    expect(seen).toEqual([5 * S, 10 * S, 12 * S]);
    await e.stop();
    writer.enqueue({ samples: [{ target: 'primary', name: 'pg_up', labels: {}, tsMs: 13 * S, value: 1 }] });
    writer.flush();
    await clock.advance(20 * S);
    await Promise.resolve();
    expect(seen).toHaveLength(3);
    db.close();
  });

  it('a target catching up is judged on the backlog\'s time by scoped evaluations only; live ones go on for the others', () => {
    const present = new Map<string, (t: number) => boolean>([['A', () => true], ['B', () => true]]);
    const rule: Rule = {
      id: 'r', severity: 'warning', description: 'test rule',
      evaluate: (_view, nowMs) => ['A', 'B'].filter((target) => present.get(target)!(nowMs)).map((target) => ({
        dedupKey: `r/${target}`, target, labels: {}, summary: `storm on ${target}`, evidence: evidenceOf({}),
      })),
    };
    const { e, sink } = engine([rule]);
    e.evaluate(1 * S);
    // A's backlog starts at T (an epoch instant, far from the steady clock's 1 s).
    const T = Date.UTC(2026, 10, 3, 2, 0, 0);
    const scope = { target: 'A', ruleIds: new Set(['r']) };
    e.beginCatchUp(scope, T);
    present.set('A', (t) => t <= T + 5 * S).set('B', () => false);
    for (const t of [2, 3, 20]) e.evaluate(t * S);
    for (const t of [T + 5 * S, T + 10 * S, T + 20 * S]) e.evaluate(t, t, scope);
    expect(actions(sink)).toEqual(['fire r/A @1', 'fire r/B @1', 'resolve r/B @20', `resolve r/A @${(T + 20 * S) / S}`]);
    expect(e.openAlertsIn(scope)).toBe(0);
  });

  it('a late finding is marked found late; once the catch-up ends, its alert goes on live with a fresh hold-down', () => {
    const clock = new ManualClock(500 * S);
    const { e, sink } = engine([scripted('r', (t) => (t < 1e9 ? [] : [{ key: 'k' }]))], {}, undefined, clock);
    const T = Date.UTC(2026, 10, 3, 2, 0, 0);
    const scope = { target: 'primary', ruleIds: new Set(['r']) };
    e.beginCatchUp(scope, T);
    e.evaluate(T, T, scope);
    expect(sink.transitions.at(-1)).toMatchObject({ action: 'fire', atMs: T });
    expect(sink.transitions.at(-1)!.alert).toMatchObject({ summary: expect.stringMatching(/k is true \(found late/), evidence: { facts: { found_in_backlog: true } } });
    e.endCatchUp(scope);
    for (const t of [505, 511]) e.evaluate(t * S, t * S);
    expect(actions(sink)).toEqual([`fire k @${T / S}`, 'resolve k @511']);
  });
});

describe('RuleEngine when the wall clock jumps', () => {
  const HOUR = 3_600 * S;
  const present = { now: true };
  const condition = scripted('r', () => (present.now ? [{ key: 'k' }] : []));

  /** Started, evaluating every second on its own timer, with the condition firing for 3 s. */
  async function firing() {
    present.now = true;
    const { e, sink, clock } = engine([condition], { intervalMs: S });
    await e.start();
    await clock.advance(3 * S);
    expect(actions(sink)).toHaveLength(1);
    return { e, sink, clock, startMs: clock.nowMs() - 3 * S };
  }

  it('an hour forward: a condition absent for one evaluation does not resolve its alert, nor page again when it is back', async () => {
    const { e, sink, clock, startMs } = await firing();
    present.now = false;
    await clock.advance(S);
    clock.jumpWallClock(HOUR);
    await clock.advance(2 * S);
    present.now = true;
    await clock.advance(5 * S);
    expect(actions(sink)).toEqual([`fire k @${startMs / S + 1}`]);
    present.now = false;
    await clock.advance(11 * S);
    // Last seen at +11 s (steady time): resolved at +21 s, an hour later on the wall clock.
    expect(actions(sink)).toEqual([`fire k @${startMs / S + 1}`, `resolve k @${(startMs + HOUR) / S + 21}`]);
    await e.stop();
  });

  it('ten minutes back: an alert whose condition ended resolves after the hold-down, not ten minutes later', async () => {
    const { e, sink, clock, startMs } = await firing();
    present.now = false;
    clock.jumpWallClock(-10 * 60 * S);
    await clock.advance(11 * S);
    expect(actions(sink)).toEqual([`fire k @${startMs / S + 1}`, `resolve k @${(startMs - 10 * 60 * S) / S + 13}`]);
    await e.stop();
  });
});
