/**
 * The names every collector declares follow the naming rules of metric-defs.ts, and promtool
 * accepts them (it flags counters without _total and names ending in _count / _sum / _bucket).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { itWithTool, toolPath } from '../../test/helpers/tools.js';
import { createCollectors } from './index.js';
import { settingMetric, WATCHED_SETTINGS } from './pg-settings.js';
import { SCHEDULER_METRICS } from '../sources/poll-scheduler.js';

const collectors = createCollectors();
// pg_settings names depend on each setting's unit: the ones the watched settings take on 18.
const SETTING_UNITS: Record<string, string> = { lock_timeout: 'ms', maintenance_work_mem: 'kB', log_temp_files: 'kB', autovacuum_naptime: 's' };
const defs = [
  ...collectors.flatMap((c) => c.metrics),
  ...WATCHED_SETTINGS.map((name) => settingMetric(name, SETTING_UNITS[name] ?? null).def),
  ...SCHEDULER_METRICS,
];

describe('metric names', () => {
  it('are unique, snake_case, and start with the collector name', () => {
    const names = defs.map((d) => d.name);
    expect(new Set(names).size).toBe(names.length);
    // The scheduler's figures about the server (pg_up) are pg_; those about pgvigil's own connections pgvigil_.
    const scheduler = new Set(SCHEDULER_METRICS.map((d) => d.name));
    for (const name of names) expect(name).toMatch(scheduler.has(name) ? /^(pg|pgvigil)_[a-z0-9_]+$/ : /^pg_[a-z0-9_]+$/);
    for (const c of collectors) {
      const own = c.name === 'pg_standby' ? /^pg_(standby|stat_wal_receiver|stat_recovery)_/ : new RegExp(`^${c.name}_`);
      for (const m of c.metrics) expect(m.name).toMatch(own);
    }
  });

  it('end counters in _total and never use the histogram suffixes', () => {
    for (const d of defs) {
      expect(d.name.endsWith('_total'), d.name).toBe(d.type === 'counter');
      expect(d.name).not.toMatch(/_(count|sum|bucket)$/);
      expect(d.help.length).toBeGreaterThan(0);
    }
  });

  itWithTool('promtool', 'pass promtool check metrics', () => {
    const exposition = defs
      .map((d) => `# HELP ${d.name} ${d.help.replace(/\\/g, '\\\\').replace(/\n/g, ' ')}\n# TYPE ${d.name} ${d.type}\n${d.name}{target="t"} 1\n`)
      .join('');
    const result = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`.trim()).toBe('');
    expect(result.status).toBe(0);
  });
});
