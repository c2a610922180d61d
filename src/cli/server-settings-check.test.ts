import { describe, expect, it } from 'vitest';
import { formatCheckResults } from './check-results.js';
import { judgeLogSettings } from './server-settings-check.js';

describe('judgeLogSettings', () => {
  it('passes a well-configured PostgreSQL 18', () => {
    const results = judgeLogSettings('primary', 180001, {
      log_destination: 'stderr', log_line_prefix: '%m [%p] %q%u@%d ', log_autovacuum_min_duration: '0',
      log_lock_waits: 'on', log_recovery_conflict_waits: 'on',
    });
    expect(results.map((r) => r.state)).toEqual(['ok', 'ok', 'ok', 'ok']);
  });

  it('fails a prefix without pid and says how to fix it', () => {
    const text = formatCheckResults(judgeLogSettings('primary', 150004, {
      log_destination: 'stderr', log_line_prefix: '%t ', log_autovacuum_min_duration: '-1', log_lock_waits: 'off', log_recovery_conflict_waits: 'off',
    }));
    expect(text).toBe([
      "FAIL  primary: log_line_prefix              \"%t \" lacks the pid (%p)",
      "                                            hint: set log_line_prefix = '%m [%p] %q%u@%d ' (multi-line reports are stitched by pid)",
      "WARN  primary: log_autovacuum_min_duration  off: autovacuum runs are not logged",
      "                                            hint: set log_autovacuum_min_duration = 0 (or a few seconds on busy servers)",
      "WARN  primary: log_lock_waits               off: lock waits longer than deadlock_timeout are not logged",
      "                                            hint: set log_lock_waits = on",
      "WARN  primary: log_recovery_conflict_waits  off: standby replay waits are not logged",
      "                                            hint: set log_recovery_conflict_waits = on (it matters on standbys)",
    ].join('\n'));
  });

  it('does not ask for a prefix with csvlog only, asks for log_autoanalyze_min_duration on 19 only', () => {
    const on19 = judgeLogSettings('t', 190000, { log_destination: 'csvlog', log_autovacuum_min_duration: '0' }).map((r) => r.aspect);
    expect(on19).not.toContain('t: log_line_prefix');
    expect(on19).toContain('t: log_autoanalyze_min_duration');
    expect(judgeLogSettings('t', 130000, { log_destination: 'csvlog' }).map((r) => r.aspect)).toEqual(['t: log_autovacuum_min_duration', 't: log_lock_waits']);
  });
});
