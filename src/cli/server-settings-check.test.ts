import { describe, expect, it } from 'vitest';
import { formatCheckResults } from './check-results.js';
import { judgeLogSettings } from './server-settings-check.js';

describe('judgeLogSettings', () => {
  it('passes a well-configured PostgreSQL 18', () => {
    const results = judgeLogSettings('primary', 180001, {
      log_destination: 'stderr', log_line_prefix: '%m [%p] %q%u@%d %e ', log_autovacuum_min_duration: '0',
      log_lock_waits: 'on', log_recovery_conflict_waits: 'on', log_statement: 'ddl', log_checkpoints: 'on',
    });
    expect(results.map((r) => [r.aspect, r.state])).toEqual([
      ['primary: log_line_prefix', 'ok'], ['primary: log_statement', 'ok'], ['primary: log_checkpoints', 'ok'],
      ['primary: log_autovacuum_min_duration', 'ok'], ['primary: log_lock_waits', 'ok'], ['primary: log_recovery_conflict_waits', 'ok'],
    ]);
  });

  it('asks for the SQLSTATE in the prefix, DDL in the log and logged checkpoints, each with the setting that fixes it', () => {
    const text = formatCheckResults(judgeLogSettings('db1', 180001, {
      log_destination: 'stderr', log_line_prefix: '%m [%p] %q%u@%d ', log_autovacuum_min_duration: '0', log_lock_waits: 'on',
      log_recovery_conflict_waits: 'on', log_statement: 'none', log_checkpoints: 'off',
    }));
    expect(text).toContain("WARN  db1: log_line_prefix              \"%m [%p] %q%u@%d \" lacks the SQLSTATE (%e): errors are not told apart by class\n" +
      "                                        hint: set log_line_prefix = '%m [%p] %q%u@%d %e '");
    expect(text).toContain('WARN  db1: log_statement                none: DDL is not logged, so the rules cannot name the DROP, ALTER or REPACK behind a lock queue or a replay stall\n' +
      '                                        hint: set log_statement = ddl');
    expect(text).toContain('WARN  db1: log_checkpoints              off: checkpoints are not logged');
    expect(judgeLogSettings('db1', 180001, { log_statement: 'all' }).find((r) => r.aspect === 'db1: log_statement')?.state).toBe('ok');
  });

  it('fails a prefix without pid and says how to fix it', () => {
    const text = formatCheckResults(judgeLogSettings('primary', 150004, {
      log_destination: 'stderr', log_line_prefix: '%t ', log_autovacuum_min_duration: '-1', log_lock_waits: 'off', log_recovery_conflict_waits: 'off',
      log_statement: 'ddl', log_checkpoints: 'on',
    }));
    expect(text).toBe([
      "FAIL  primary: log_line_prefix              \"%t \" lacks the pid (%p)",
      "                                            hint: set log_line_prefix = '%m [%p] %q%u@%d %e ' (multi-line reports are stitched by pid)",
      'OK    primary: log_statement                ddl',
      'OK    primary: log_checkpoints              on',
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
    expect(judgeLogSettings('t', 130000, { log_destination: 'csvlog' }).map((r) => r.aspect)).toEqual(['t: log_statement', 't: log_checkpoints', 't: log_autovacuum_min_duration', 't: log_lock_waits']);
  });
});
