/**
 * Judges a server's settings against what pgvigil needs to see vacuum, locks and replication
 * in its log. Pure: takes the pg_settings values and the server version.
 */
import type { CheckResult } from './check-results.js';

export type Settings = Readonly<Record<string, string | undefined>>;

/** Debian's prefix, with the SQLSTATE: what README recommends and every hint says. */
export const RECOMMENDED_PREFIX = '%m [%p] %q%u@%d %e ';

export function judgeLogSettings(target: string, versionNum: number, settings: Settings): CheckResult[] {
  const aspect = (name: string) => `${target}: ${name}`;
  const results: CheckResult[] = [];
  const destinations = (settings.log_destination ?? 'stderr').split(',').map((d) => d.trim());
  const prefix = settings.log_line_prefix ?? '';
  if (destinations.includes('stderr')) {
    const hasTime = /%[mtn]/.test(prefix);
    const hasPid = /%p/.test(prefix);
    const hasSqlstate = /%e/.test(prefix);
    results.push(hasTime && hasPid
      ? hasSqlstate
        ? { aspect: aspect('log_line_prefix'), state: 'ok', message: JSON.stringify(prefix) }
        : {
            aspect: aspect('log_line_prefix'), state: 'warn', message: `${JSON.stringify(prefix)} lacks the SQLSTATE (%e): errors are not told apart by class`,
            hint: `set log_line_prefix = '${RECOMMENDED_PREFIX}'`,
          }
      : {
          aspect: aspect('log_line_prefix'), state: 'fail',
          message: `${JSON.stringify(prefix)} lacks ${[hasTime ? null : 'a timestamp (%m)', hasPid ? null : 'the pid (%p)'].filter(Boolean).join(' and ')}`,
          hint: `set log_line_prefix = '${RECOMMENDED_PREFIX}' (multi-line reports are stitched by pid)`,
        });
  }
  // The DDL that blocks a lock queue, stalls replay or is a REPACK is read from log_statement lines.
  const statements = settings.log_statement ?? 'none';
  results.push(statements === 'ddl' || statements === 'mod' || statements === 'all'
    ? { aspect: aspect('log_statement'), state: 'ok', message: statements }
    : { aspect: aspect('log_statement'), state: 'warn', message: `${statements}: DDL is not logged, so the rules cannot name the DROP, ALTER or REPACK behind a lock queue or a replay stall`, hint: 'set log_statement = ddl' });
  results.push(settings.log_checkpoints === 'on'
    ? { aspect: aspect('log_checkpoints'), state: 'ok', message: 'on' }
    : { aspect: aspect('log_checkpoints'), state: 'warn', message: 'off: checkpoints are not logged', hint: 'set log_checkpoints = on (the default since 15)' });
  const autovacuumMs = Number(settings.log_autovacuum_min_duration ?? '-1');
  results.push(autovacuumMs >= 0
    ? { aspect: aspect('log_autovacuum_min_duration'), state: autovacuumMs <= 10_000 ? 'ok' : 'warn', message: `${autovacuumMs} ms`, hint: 'runs shorter than this are invisible; 0 to 1000 ms is typical' }
    : { aspect: aspect('log_autovacuum_min_duration'), state: 'warn', message: 'off: autovacuum runs are not logged', hint: 'set log_autovacuum_min_duration = 0 (or a few seconds on busy servers)' });
  // PG 19+: autoanalyze has its own threshold, or its reports disappear.
  if (versionNum >= 190000) {
    const analyzeMs = Number(settings.log_autoanalyze_min_duration ?? '-1');
    results.push(analyzeMs >= 0
      ? { aspect: aspect('log_autoanalyze_min_duration'), state: 'ok', message: `${analyzeMs} ms` }
      : { aspect: aspect('log_autoanalyze_min_duration'), state: 'warn', message: 'off: autoanalyze runs are not logged', hint: 'set log_autoanalyze_min_duration = 0' });
  }
  results.push(settings.log_lock_waits === 'on'
    ? { aspect: aspect('log_lock_waits'), state: 'ok', message: 'on' }
    : { aspect: aspect('log_lock_waits'), state: 'warn', message: 'off: lock waits longer than deadlock_timeout are not logged', hint: 'set log_lock_waits = on' });
  // PG 14+: log_recovery_conflict_waits.
  if (versionNum >= 140000) {
    results.push(settings.log_recovery_conflict_waits === 'on'
      ? { aspect: aspect('log_recovery_conflict_waits'), state: 'ok', message: 'on' }
      : { aspect: aspect('log_recovery_conflict_waits'), state: 'warn', message: 'off: standby replay waits are not logged', hint: 'set log_recovery_conflict_waits = on (it matters on standbys)' });
  }
  return results;
}
