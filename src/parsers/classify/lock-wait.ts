/**
 * log_lock_waits lines (proc.c ProcSleep(), LOG, 13-19; on by default in 19):
 * `process N still waiting for <mode> on <lock> after N ms`, `acquired`, `avoided deadlock ...
 * by rearranging queue order`, `detected deadlock while waiting`, `failed to acquire`, and 18+
 * `could not obtain <mode> on <lock>` (log_lock_failures, no duration).
 * DETAIL (server log only): `Process(es) holding the lock: <pids>. Wait queue: <pids>.`; the
 * 18+ `could not obtain` DETAIL has a comma before `Wait queue`.
 */
import type { LockWaitDetails, LockWaitPhase, LogEntry } from '../../domain/index.js';
import type { Classification } from './classification.js';
import { pidList, toFloat } from './fields.js';
import { parseModeOn } from './lock-object.js';

const FORMS: ReadonlyArray<readonly [RegExp, LockWaitPhase]> = [
  [/^still waiting for (.+) after ([\d.]+) ms$/, 'waiting'],
  [/^acquired (.+) after ([\d.]+) ms$/, 'acquired'],
  [/^avoided deadlock for (.+) by rearranging queue order after ([\d.]+) ms$/, 'avoided_deadlock'],
  [/^detected deadlock while waiting for (.+) after ([\d.]+) ms$/, 'detected_deadlock'],
  [/^failed to acquire (.+) after ([\d.]+) ms$/, 'failed'],
  // PG 18+.
  [/^could not obtain (.+)$/, 'could_not_obtain'],
];

const PROCESS = /^process (\d+) (.*)$/;
// `s`: without it a line break in the DETAIL (RAISE ... USING DETAIL can hold any text) makes the
// lazy groups retry at every ". Wait queue: " up to the break: quadratic time.
const HOLDERS = /^Process(?:es)? holding the lock: (.*?)[.,] Wait queue: (.*?)\.?$/s;

/** `message` starts with "process "; null when it is not one of the lock-wait forms. */
export function classifyLockWait(entry: LogEntry, message: string): Classification | null {
  const head = PROCESS.exec(message);
  const rest = head?.[2];
  if (!head || rest === undefined) return null;
  for (const [pattern, phase] of FORMS) {
    const g = pattern.exec(rest);
    const lock = g?.[1] === undefined ? null : parseModeOn(g[1]);
    if (!g || !lock) continue;
    const details: LockWaitDetails = {
      phase,
      waiting_pid: Number(head[1]),
      ...lock,
      wait_ms: toFloat(g[2]),
      holder_pids: null,
      queue_pids: null,
      statement: entry.statement,
      context: entry.context,
    };
    const holders = entry.detail === null ? null : HOLDERS.exec(entry.detail.trim());
    if (holders) {
      details.holder_pids = pidList(holders[1] ?? '');
      details.queue_pids = pidList(holders[2] ?? '');
    }
    return { kind: 'lock_wait', details };
  }
  return null;
}

