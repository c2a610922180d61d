/**
 * A child process death the postmaster treats as a crash (postmaster.c LogChildExit() from
 * HandleChildCrash(), LOG): `<process> (PID n) was terminated by signal n: <name>`, `... exited
 * with exit code n` for n >= 2, `... was terminated by exception 0x..` (Windows) and `... exited
 * with unrecognized status n`. The postmaster then logs `terminating any other active server
 * processes` and resets (server_restart).
 *
 * Exit code 1 is not a crash: a background worker's ordinary failure exit (e.g. REPACK's decoding
 * worker) is logged at LOG as `background worker "..." (PID n) exited with exit code 1` and the
 * postmaster just restarts that worker; a client backend's exit 1 is a FATAL and not logged here.
 *
 * The process name changed in 18: `server process` (13-17) became `client backend`,
 * `autovacuum worker`, `walsender` (18+).
 */
import type { LogEntry, ServerCrashDetails } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { toInt } from './fields.js';

// `s`: without it a line break (a user's RAISE LOG text may hold one) stops `.*` before `$`, and
// every " (PID n) ..." before it is retried to the break: quadratic time on a hostile message.
const EXIT = /^(.+?) \(PID (\d+)\) (?:was terminated by signal (\d+)(?:: (.*))?|exited with exit code (\d+)|was terminated by exception (0x[0-9A-Fa-f]+)|exited with unrecognized status (\d+))$/s;
const WORKER = /^background worker "(.*)"$/;
const FAILED_PROCESS = 'Failed process was running: ';

/** Cheap pre-check for the dispatcher: child-exit messages name a PID in parentheses. */
export function mentionsChildPid(message: string): boolean {
  return message.includes(' (PID ');
}

export function classifyServerCrash(entry: LogEntry, message: string): Classification | null {
  const g = EXIT.exec(message);
  const processName = g?.[1];
  if (!g || processName === undefined) return null;
  const exitCode = toInt(g[5]);
  if (exitCode !== null && exitCode < 2) return null;
  const worker = WORKER.exec(processName);
  const detail = entry.detail?.trim() ?? null;
  const details: ServerCrashDetails = {
    process_type: worker ? 'background worker' : processName,
    worker_type: worker?.[1] ?? null,
    pid: Number(g[2]),
    signal: toInt(g[3]),
    signal_name: g[4] ?? null,
    exit_code: exitCode,
    exception: g[6] ?? null,
    statement: detail?.startsWith(FAILED_PROCESS) ? detail.slice(FAILED_PROCESS.length) : null,
  };
  return { kind: 'server_crash', details };
}
