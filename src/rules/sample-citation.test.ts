/**
 * The contract behind an alert's basis (basisOf in src/domain/alert.ts): a finding that rests on
 * samples cites them, so its alert says `log+samples`, and only a finding the log alone gives says
 * `log`. repack-failed once tied an error to a REPACK through the session's sampled slot alone and
 * cited no series: an alert raised from samples claimed to rest on the log.
 *
 * "Rests on samples" is found by running each rule of the catalog twice over the same events
 * (every-input-view.ts): with every series answered and with none. A finding that appears only
 * with the samples, or that says something else with them (summary, severity), rests on them; so
 * does every finding from samples without a single event.
 */
import { describe, expect, it } from 'vitest';
import { basisOf } from '../domain/index.js';
import { APPLY_DELAY } from './apply-delay.js';
import { buildRules } from './catalog.js';
import { EVENTS, EveryInputView, NOW, SAMPLE_VALUES } from './every-input-view.js';
import type { Finding, Rule } from './rule.js';

/**
 * Every series at one value, and then without the settings that would excuse the others: a replay
 * delay as long as every stall and lag, a wal_receiver_timeout as long as every silence.
 */
const VARIANTS: ReadonlyArray<Record<string, number | null>> = [{}, {
  [APPLY_DELAY]: 0, pg_settings_wal_receiver_timeout_seconds: 60, pg_settings_wal_receiver_status_interval_seconds: 10,
}];

/** Findings that rest on samples without citing one, as `value: summary`. */
function uncitedSampleFindings(rule: Rule): string[] {
  const logOnly = new Map(rule.evaluate(new EveryInputView(undefined, EVENTS), NOW).map((f) => [f.dedupKey, f]));
  const severity = (f: Finding) => f.severity ?? rule.severity;
  const uncited: string[] = [];
  for (const value of SAMPLE_VALUES) {
    for (const [events, overrides] of [[], EVENTS].flatMap((e) => VARIANTS.map((o) => [e, o] as const))) {
      for (const f of rule.evaluate(new EveryInputView(value, events, overrides), NOW)) {
        const twin = events.length > 0 ? logOnly.get(f.dedupKey) : undefined;
        const restsOnSamples = !twin || twin.summary !== f.summary || severity(twin) !== severity(f);
        if (restsOnSamples && basisOf(f.evidence) !== 'log+samples') uncited.push(`${value}: ${f.summary}`);
      }
    }
  }
  return uncited;
}

/** How many findings appear only with the samples: the inputs reach the sample paths of the rule. */
function sampleOnlyFindings(rule: Rule): number {
  const logOnly = new Set(rule.evaluate(new EveryInputView(undefined, EVENTS), NOW).map((f) => f.dedupKey));
  return SAMPLE_VALUES.flatMap((value) => VARIANTS.flatMap((o) => rule.evaluate(new EveryInputView(value, EVENTS, o), NOW)))
    .filter((f) => !logOnly.has(f.dedupKey)).length;
}

describe('a rule that reads samples cites them', () => {
  const rules = buildRules({ disabled: [], thresholds: {} });

  for (const rule of rules) {
    it(`${rule.id}: every finding that rests on samples cites a series`, () => {
      expect(uncitedSampleFindings(rule)).toEqual([]);
    });
  }

  it('the inputs raise findings from samples in the REPACK, replay and slot rules', () => {
    const byId = new Map(rules.map((r) => [r.id, r]));
    const ids = ['repack-failed', 'repack-holds-vacuum', 'repack-change-ceiling', 'replay-stalled', 'replica-lag-over-lb-limit', 'replication-slot-danger', 'standby-disconnected'];
    for (const id of ids) {
      expect(sampleOnlyFindings(byId.get(id)!), id).toBeGreaterThan(0);
    }
  });

  it('catches a rule that drops the series it read', () => {
    const rule = rules.find((r) => r.id === 'repack-failed')!;
    const forgetful: Rule = { ...rule, evaluate: (view, nowMs) => rule.evaluate(view, nowMs).map((f) => ({ ...f, evidence: { ...f.evidence, series: [] } })) };
    expect(uncitedSampleFindings(forgetful)).toContainEqual(expect.stringContaining('it ran out of memory'));
  });
});
