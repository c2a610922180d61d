/**
 * `deadlock detected` (ERROR 40P01, deadlock.c DeadLockReport(), 13-19). The server-log DETAIL
 * lists the cycle: one `Process N waits for <mode> on <lock>; blocked by process M.` line per
 * process, then one `Process N: <query>` line per process (a query may span several lines).
 */
import type { DeadlockProcess, LogEntry } from '../../domain/index.js';
import { sessionFields, type Classification } from './classification.js';
import { parseModeOn } from './lock-object.js';

export const DEADLOCK_DETECTED = 'deadlock detected';

const WAITS = /^Process (\d+) waits for (.+); blocked by process (\d+)\.$/;
const QUERY = /^Process (\d+): (.*)$/;

export function classifyDeadlock(entry: LogEntry): Classification {
  return {
    kind: 'deadlock',
    details: { ...sessionFields(entry), processes: parseCycle(entry.detail ?? ''), context: entry.context },
  };
}

function parseCycle(detail: string): DeadlockProcess[] {
  const byPid = new Map<number, DeadlockProcess>();
  const processOf = (pid: number): DeadlockProcess => {
    let process = byPid.get(pid);
    if (!process) {
      process = { pid, lock_mode: null, lock_object: null, blocked_by_pid: null, query: null };
      byPid.set(pid, process);
    }
    return process;
  };
  let queryOf: DeadlockProcess | null = null;
  for (const raw of detail.split('\n')) {
    const line = raw.replace(/^\t/, '');
    const waits = WAITS.exec(line);
    const lock = waits?.[2] === undefined ? null : parseModeOn(waits[2]);
    if (waits && lock) {
      Object.assign(processOf(Number(waits[1])), lock, { blocked_by_pid: Number(waits[3]) });
      queryOf = null;
      continue;
    }
    const query = QUERY.exec(line);
    if (query) {
      queryOf = processOf(Number(query[1]));
      queryOf.query = query[2] ?? '';
    } else if (queryOf) {
      // A multi-line query: the line continues the previous `Process N:` line.
      queryOf.query = `${queryOf.query ?? ''}\n${line}`;
    }
  }
  return [...byPid.values()];
}
