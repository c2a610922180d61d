/**
 * Lock waits, lock timeouts, deadlocks and recovery conflicts (pgBadger's "Locks" and the
 * cancellations among its "Events"). Pure.
 */
import type { AnalyzeSummary, Ranked } from '../analyze-summary.js';
import { count, milliseconds } from '../text-format.js';
import { absent, factsTable, htmlTable, subheading, type PageSection } from './html-parts.js';

export function locksSection(summary: AnalyzeSummary, charts: string): PageSection {
  const waits = summary.lock_waits;
  const rankedTable = (what: string, rows: Ranked[], whenEmpty: string) => htmlTable<Ranked>([
    { header: what, align: 'left', cell: (r) => r.key },
    { header: 'count', align: 'right', cell: (r) => count(r.count) },
  ], rows, whenEmpty);
  return {
    id: 'locks',
    title: 'Locks, deadlocks and cancellations',
    body: [
      charts,
      factsTable([
        ['lock waits logged', count(waits.total)],
        ['longest wait', waits.max_wait_ms === null ? '-' : `${milliseconds(waits.max_wait_ms)} ms`],
        ['lock timeouts', count(summary.lock_timeouts.total)],
        ['deadlocks', count(summary.deadlocks)],
        ['recovery conflicts', count(summary.recovery_conflicts.total)],
      ]),
      subheading('Lock waits by phase'),
      waits.total === 0 ? absent('no lock wait logged: set log_lock_waits = on (waits longer than deadlock_timeout are logged)') : rankedTable('phase', waits.by_phase, ''),
      subheading('Lock timeouts by lock'),
      rankedTable('lock', summary.lock_timeouts.by_relation, 'no lock timeout'),
      subheading('Recovery conflicts by reason'),
      rankedTable('reason', summary.recovery_conflicts.by_reason, 'no recovery conflict'),
    ].join('\n'),
  };
}
