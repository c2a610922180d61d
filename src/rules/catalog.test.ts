import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EVENT_KINDS } from '../domain/index.js';
import { COLLECTOR_NAMES } from '../collectors/index.js';
import { buildRules, describeRules, RULE_IDS, RULES, RulesConfigError, SCHEDULER_PROBE, thresholdsFromConfig, toSnake } from './catalog.js';
import { MemoryRuleView } from './memory-rule-view.js';
import { NOTATION_T0, seriesOf } from './series-notation.js';

describe('rule catalog', () => {
  it('has one rule per file, its id equal to the file name, each with a test beside it', () => {
    const files = readdirSync(fileURLToPath(new URL('.', import.meta.url)));
    for (const rule of buildRules({ disabled: [], thresholds: {} })) {
      expect(RULE_IDS).toContain(rule.id);
      expect(files).toContain(`${rule.id}.ts`);
    }
    const tested = (id: string) => files.includes(`${id}.test.ts`) || (id === 'replay-stalled' && files.includes('replay-stalled-on-unlink.test.ts'));
    expect(RULE_IDS.filter((id) => !tested(id))).toEqual([]);
  });

  it('leaves out disabled rules and applies threshold overrides over the defaults', () => {
    const rules = buildRules({ disabled: ['server-crashed'], thresholds: thresholdsFromConfig({ 'xmin-horizon-held': { warn_age_xids: 10 } }) });
    expect(rules.map((r) => r.id)).not.toContain('server-crashed');
    expect(rules).toHaveLength(RULE_IDS.length - 1);
    const view = new MemoryRuleView({ series: [seriesOf('pg_xmin_horizon_holder_age_xids{kind="backend",scope="database",pid="1"}', '20')] });
    const xmin = (list: typeof rules) => list.find((r) => r.id === 'xmin-horizon-held')!.evaluate(view.at(NOTATION_T0), NOTATION_T0);
    expect(xmin(rules)).toHaveLength(1);
    expect(xmin(buildRules({ disabled: [], thresholds: {} }))).toHaveLength(0);
  });

  it('docs/rules.md has a section per rule and lists every threshold with its default', () => {
    const docs = readFileSync(new URL('../../docs/rules.md', import.meta.url), 'utf8');
    for (const id of RULE_IDS) {
      expect(docs).toContain(`\n## ${id}\n`);
      const row = docs.split('\n').find((line) => line.startsWith(`| \`${id}\` |`)) ?? '';
      for (const [key, value] of Object.entries(RULES[id].defaults)) expect(row).toContain(`\`${toSnake(key)}: ${value}\``);
    }
  });

  it('says what every rule needs: collectors that exist, event kinds that exist, settings by their names', () => {
    for (const { id, needs } of describeRules()) {
      expect(needs.collectors.length + needs.events.length, `${id} reads nothing`).toBeGreaterThan(0);
      for (const collector of needs.collectors) expect([...COLLECTOR_NAMES, SCHEDULER_PROBE], `${id} needs collector ${collector}`).toContain(collector);
      for (const kind of needs.events) expect(EVENT_KINDS, `${id} reads events ${kind}`).toContain(kind);
      for (const setting of needs.settings) expect(setting.name, id).toMatch(/^[a-z_]+$/);
    }
  });

  it('describes each rule with the thresholds in force beside their defaults', () => {
    const rules = describeRules({ disabled: ['error-storm'], thresholds: thresholdsFromConfig({ 'error-storm': { min_events: 50 } }) });
    const storm = rules.find((r) => r.id === 'error-storm');
    expect(storm).toMatchObject({ enabled: false, severity: 'warning' });
    expect(storm?.thresholds).toContainEqual({ name: 'min_events', value: 50, default: 20 });
    expect(rules.map((r) => r.id)).toEqual(RULE_IDS);
  });

  it('lists every problem at once: unknown rule ids, unknown threshold keys with the allowed ones, bad values', () => {
    const build = () => buildRules({
      disabled: ['repack-hold-vacuum'],
      thresholds: thresholdsFromConfig({ 'xmin-horizon-held': { warn_age: 10, error_age_xids: -1 }, nope: { a: 1 } }),
    });
    expect(build).toThrow(RulesConfigError);
    try {
      build();
    } catch (err) {
      expect((err as RulesConfigError).problems).toEqual([
        expect.stringMatching(/^rules\.disabled: unknown rule id "repack-hold-vacuum" \(known: repack-holds-vacuum, /),
        'rules.thresholds.xmin-horizon-held.warn_age: unknown threshold (allowed: warn_age_xids, min_held_ms, error_age_xids)',
        'rules.thresholds.xmin-horizon-held.error_age_xids: expected a number >= 0, got -1',
        expect.stringMatching(/^rules\.thresholds\.nope: unknown rule id/),
      ]);
    }
  });
});
