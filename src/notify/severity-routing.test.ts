import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SEVERITIES } from '../domain/index.js';
import { minSeverityFor, type MinSeverityOverride, type SeverityRouting } from './severity-routing.js';

const LAG = 'replica-lag-over-lb-limit';
const REPORTING = 'db-reporting';

/** Every kind of override at once, each with its own severity so the winner is visible. */
const overrides: MinSeverityOverride[] = [
  { rule: null, target: REPORTING, minSeverity: 'critical' },
  { rule: LAG, target: null, minSeverity: 'warning' },
  { rule: LAG, target: REPORTING, minSeverity: 'info' },
];
const routing: SeverityRouting = { minSeverity: 'error', minSeverityOverrides: overrides };

describe('minSeverityFor: the most specific override wins', () => {
  it.each([
    ['rule and target', LAG, REPORTING, 'info'],
    ['rule, on another target', LAG, 'db-main', 'warning'],
    ['target, for another rule', 'error-storm', REPORTING, 'critical'],
    ['neither: the channel default', 'error-storm', 'db-main', 'error'],
  ])('%s', (_, ruleId, target, expected) => {
    expect(minSeverityFor(routing, ruleId, target)).toBe(expected);
  });

  it('is the channel default with no overrides', () => {
    expect(minSeverityFor({ minSeverity: 'warning', minSeverityOverrides: [] }, LAG, REPORTING)).toBe('warning');
  });

  it('does not depend on the order of the list', () => {
    const severity = fc.constantFrom(...SEVERITIES);
    const override = fc.record({
      rule: fc.constantFrom(null, LAG, 'error-storm'),
      target: fc.constantFrom(null, REPORTING, 'db-main'),
      minSeverity: severity,
    }).filter((o) => o.rule !== null || o.target !== null);
    // Unique by (rule, target), as the config requires.
    const list = fc.uniqueArray(override, { selector: (o) => `${o.rule}/${o.target}` });
    fc.assert(fc.property(list, severity, fc.constantFrom(LAG, 'error-storm'), fc.constantFrom(REPORTING, 'db-main'), (list, fallback, ruleId, target) => {
      const forward = minSeverityFor({ minSeverity: fallback, minSeverityOverrides: list }, ruleId, target);
      expect(minSeverityFor({ minSeverity: fallback, minSeverityOverrides: [...list].reverse() }, ruleId, target)).toBe(forward);
    }));
  });
});
