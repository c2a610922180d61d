/**
 * Deadlocks as text: each with its whole cycle as PostgreSQL printed it in the DETAIL (who waited
 * for which lock, blocked by whom, running what) and the tables involved, not a bare count.
 * Pure: cycles in, lines out.
 */
import type { DeadlockCycle } from './log-report/locks.js';

/** Cycles a text shows; `analyze --json` has up to the summary's topN. */
const CYCLES_SHOWN = 3;
/** A statement is cut here in text: a cycle should fit on a screen. */
const STATEMENT_CHARS = 120;

export function deadlockLines(deadlocks: { count: number; cycles: readonly DeadlockCycle[] }): string[] {
  const lines = deadlocks.cycles.slice(0, CYCLES_SHOWN).flatMap((cycle) => [
    `${cycle.at}${cycle.database === null ? '' : ` ${cycle.database}`}: pid ${cycle.pid ?? '?'}'s statement cancelled; ${cycle.relations.join(', ')}`,
    ...cycle.processes.map((p) => `  pid ${p.pid}${p.lock_mode === null ? '' : ` waits for ${p.lock_mode} on ${p.lock ?? '?'}`}` +
      `${p.blocked_by_pid === null ? '' : `, blocked by pid ${p.blocked_by_pid}`}${p.statement === null ? '' : `: ${cut(p.statement)}`}`),
  ]);
  const unshown = deadlocks.count - Math.min(deadlocks.cycles.length, CYCLES_SHOWN);
  if (unshown > 0) lines.push(`(${unshown} more, with their cycles in analyze --json)`);
  return lines;
}

function cut(statement: string): string {
  const oneLine = statement.replace(/\s+/g, ' ');
  return oneLine.length > STATEMENT_CHARS ? `${oneLine.slice(0, STATEMENT_CHARS - 3)}...` : oneLine;
}
