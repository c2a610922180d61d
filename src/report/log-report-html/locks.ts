/**
 * Lock waits per relation with their waiters and holders, deadlocks with their whole cycle, and
 * cancellations and terminations by cause (pgBadger's "Locks" and the cancellations among its
 * "Events"); per minute how many of each. Pure.
 */
import type { DeadlockCycle, LocksResult, RelationWaitsResult } from '../log-report/locks.js';
import { count, milliseconds } from '../text-format.js';
import { absent, chartGrid, factsTable, htmlTable, subheading, type PageSection, type TimeWindow } from './html-parts.js';
import { minuteChart } from './minute-charts.js';

const NO_LOCK_WAITS = 'no lock wait logged: set log_lock_waits = on (waits longer than deadlock_timeout are logged)';

export function locksSection(result: LocksResult, window: TimeWindow): PageSection {
  const { lock_waits: waits, deadlocks, cancellations } = result;
  const title = 'Locks, deadlocks and cancellations';
  if (waits.waits + deadlocks.count + cancellations.total === 0) return { id: 'locks', title, body: absent(`${NO_LOCK_WAITS}; no deadlock, cancelled statement or terminated session either`) };
  const relations = waits.other === null ? waits.by_relation : [...waits.by_relation, { ...waits.other, relation: '(further relations, added up)' }];
  return {
    id: 'locks',
    title,
    body: [
      chartGrid([minuteChart('locks_per_minute', 'Lock waits, lock timeouts, deadlocks and cancellations per minute', 'count', result.per_minute, [
        { counter: 'lock_waits', label: 'lock waits' }, { counter: 'lock_timeouts', label: 'lock timeouts' },
        { counter: 'deadlocks', label: 'deadlocks' }, { counter: 'cancellations', label: 'cancellations' },
      ], 'no lock wait, deadlock or cancellation')], window),
      factsTable([
        ['lock waits logged', count(waits.waits)],
        ['of which timed out', count(waits.timed_out)],
        ['longest wait', waits.longest_wait_ms === null ? '-' : `${milliseconds(waits.longest_wait_ms)} ms`],
        ['deadlocks', count(deadlocks.count)],
        ['cancellations and terminations', count(cancellations.total)],
      ]),
      subheading('Lock waits by relation'),
      waits.waits === 0 ? absent(NO_LOCK_WAITS) : htmlTable<RelationWaitsResult>([
        { header: 'relation', align: 'left', cell: (r) => r.relation },
        { header: 'waits', align: 'right', cell: (r) => count(r.waits) },
        { header: 'acquired', align: 'right', cell: (r) => count(r.acquired) },
        { header: 'timed out', align: 'right', cell: (r) => count(r.timed_out) },
        { header: 'deadlocked', align: 'right', cell: (r) => count(r.deadlocked) },
        { header: 'longest ms', align: 'right', cell: (r) => milliseconds(r.longest_wait_ms) },
        { header: 'modes', align: 'left', cell: (r) => r.lock_modes.map((m) => `${m.mode} ${count(m.count)}`).join(', ') },
        { header: 'waiters', align: 'left', sql: true, cell: (r) => pids(r.waiters) },
        { header: 'holders', align: 'left', sql: true, cell: (r) => pids(r.blockers) },
      ], relations, NO_LOCK_WAITS),
      subheading(`Deadlocks: ${count(deadlocks.count)}`),
      deadlocks.cycles.length === 0 ? absent('no deadlock in this log') : deadlocks.cycles.map(cycleHtml).join('\n'),
      subheading('Cancellations and terminations by cause'),
      htmlTable<LocksResult['cancellations']['by_cause'][number]>([
        { header: 'cause', align: 'left', cell: (c) => c.cause },
        { header: 'count', align: 'right', cell: (c) => count(c.count) },
        { header: 'session terminated', align: 'right', cell: (c) => count(c.terminated) },
      ], cancellations.by_cause, 'no statement cancelled or session terminated'),
    ].join('\n'),
  };
}

/** A deadlock's cycle, process by process: who waited for what, held by whom, running which statement. */
function cycleHtml(cycle: DeadlockCycle): string {
  return [
    subheading(`${cycle.at}${cycle.database ? ` in ${cycle.database}` : ''}: pid ${cycle.pid ?? '?'} cancelled`),
    htmlTable<DeadlockCycle['processes'][number]>([
      { header: 'pid', align: 'right', cell: (p) => String(p.pid) },
      { header: 'waited for', align: 'left', cell: (p) => [p.lock_mode, p.lock].filter(Boolean).join(' on ') || '-' },
      { header: 'blocked by', align: 'right', cell: (p) => (p.blocked_by_pid === null ? '-' : String(p.blocked_by_pid)) },
      { header: 'statement', align: 'left', sql: true, cell: (p) => p.statement ?? '-' },
    ], cycle.processes, 'the cycle was not logged'),
  ].join('\n');
}

/** "10149: UPDATE ...; 10152": each process, with its statement when the log had it. */
function pids(processes: ReadonlyArray<{ pid: number; statement: string | null }>): string {
  return processes.length === 0 ? '-' : processes.map((p) => (p.statement === null ? String(p.pid) : `${p.pid}: ${p.statement}`)).join('; ');
}
