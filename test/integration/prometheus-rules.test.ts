/**
 * The Prometheus rules shipped in dashboards/prometheus: promtool accepts every rule file, and
 * their unit tests (dashboards/prometheus/tests) pass. Gated on promtool (Debian's prometheus).
 */
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect } from 'vitest';
import { itWithTool, toolPath } from '../helpers/tools.js';

const DIR = 'dashboards/prometheus';
const run = promisify(execFile);
const filesIn = (dir: string, suffix: string) => readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => path.join(dir, f));

describe('Prometheus rules for pgvigil', () => {
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
