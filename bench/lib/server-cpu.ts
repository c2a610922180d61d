/**
 * CPU seconds a PostgreSQL server spent, from /proc: the postmaster, its live children, and the
 * children it already reaped (cutime/cstime). Benchmarks that drive a server compare this beside
 * their own process.cpuUsage(): on a shared machine CPU time is steadier than wall time.
 * Linux only; null elsewhere.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const TICKS_PER_SECOND = 100;

/** utime, stime, cutime, cstime and ppid of a process, in clock ticks; null once it exited. */
function stat(pid: number): { ppid: number; ticks: number; reapedTicks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command, from field 3 (state): ppid is 4, utime 14 .. cstime 17.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ').map(Number);
    return { ppid: fields[1]!, ticks: fields[11]! + fields[12]!, reapedTicks: fields[13]! + fields[14]! };
  } catch {
    return null;
  }
}

export function serverCpuSeconds(dataDir: string): number | null {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  const own = stat(postmaster);
  if (own === null) return null;
  let ticks = own.ticks + own.reapedTicks;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = stat(Number(entry));
    if (child?.ppid === postmaster) ticks += child.ticks;
  }
  return ticks / TICKS_PER_SECOND;
}

/** User + system CPU seconds of this process (all its threads) since `since`. */
export function ownCpuSeconds(since?: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
}
