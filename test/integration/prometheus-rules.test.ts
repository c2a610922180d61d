/**
 * The Prometheus rules shipped in dashboards/prometheus: promtool accepts every rule file, and
 * their unit tests (dashboards/prometheus/tests) pass. Gated on promtool (Debian's prometheus).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { itWithTool, toolPath } from '../helpers/tools.js';

const DIR = 'dashboards/prometheus';
const run = promisify(execFile);
const filesIn = (dir: string, suffix: string) => readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => path.join(dir, f));

interface RuleFile { groups: Array<{ rules: Array<{ alert?: string; record?: string; expr: string; labels?: Record<string, string> }> }> }
interface RuleTests { tests: Array<{ alert_rule_test?: Array<{ alertname: string; exp_alerts: unknown[] }>; promql_expr_test?: Array<{ expr: string }> }> }

const rules = () => filesIn(DIR, '.rules.yml').flatMap((f) => (parse(readFileSync(f, 'utf8')) as RuleFile).groups.flatMap((g) => g.rules));
const unitTests = () => filesIn(path.join(DIR, 'tests'), '.test.yml').flatMap((f) => (parse(readFileSync(f, 'utf8')) as RuleTests).tests);

describe('Prometheus rules for pgvigil', () => {
  it('has a unit test that fires every alert and evaluates every recording rule', () => {
    const tests = unitTests();
    const fired = new Set(tests.flatMap((t) => (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname)));
    const evaluated = new Set(tests.flatMap((t) => (t.promql_expr_test ?? []).map((e) => e.expr)));
    const all = rules();
    expect(all.length).toBeGreaterThanOrEqual(17);
    for (const rule of all) {
      if (rule.alert !== undefined) expect(fired, `alert ${rule.alert}`).toContain(rule.alert);
      else expect(evaluated, `recording rule ${rule.record}`).toContain(rule.record);
    }
  });

  it('scopes every expression to the pgvigil job and uses only the severities routing trees expect', () => {
    for (const rule of rules()) {
      const selectors = rule.expr.match(/\b(pg|pgvigil|up)_?[a-z_]*(\{[^}]*\})?(?=[\s)\[=><*]|$)/g) ?? [];
      for (const selector of selectors.filter((m) => !/^(pgvigil_severity|pgvigil_rule)$/.test(m))) {
        expect(selector, `${rule.alert ?? rule.record}: ${selector}`).toContain('job="pgvigil"');
      }
      if (rule.alert !== undefined && rule.labels?.severity !== undefined) expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
    }
  });

  itWithTool('promtool', 'promtool check rules accepts every rule file', async () => {
    const files = filesIn(DIR, '.rules.yml');
    expect(files.length).toBeGreaterThanOrEqual(2);
    const { stdout } = await run(toolPath('promtool'), ['check', 'rules', ...files]);
    expect(stdout.match(/SUCCESS/g)).toHaveLength(files.length);
  });

  itWithTool('promtool', 'promtool test rules passes their unit tests', async () => {
    const tests = filesIn(path.join(DIR, 'tests'), '.test.yml');
    expect(tests.length).toBeGreaterThan(0);
    // promtool exits non-zero on a failed test; execFile then rejects with its output.
    const { stdout } = await run(toolPath('promtool'), ['test', 'rules', ...tests]);
    expect(stdout).toContain('SUCCESS');
  });
});
