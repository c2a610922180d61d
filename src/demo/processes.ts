/**
 * Processes and waiting, for the harness: running a program to its exit, telling whether a pid
 * is alive, polling a condition with a deadline, finding a free port. Knows nothing of PostgreSQL.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import type { Command } from './pg-install.js';

const POLL_INTERVAL_MS = 100;
const LOOPBACK = '127.0.0.1';
// Programs run with a fixed environment: nothing of the test process (PGDATA, PGPORT, locales the
// chroot lacks) leaks into the server.
// C.UTF-8 rather than C: processes without a database (postmaster, checkpointer, startup) write
// their messages in the character set of this locale, and a server whose lc_messages is not
// English would otherwise print every non-ASCII letter as "?" (issue #16).
const SERVER_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C.UTF-8', TZ: 'UTC' };

/** Runs a command to its exit; rejects with the command line and its output when it fails. */
export function runCommand(command: Command): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command.file, command.args, {
      env: SERVER_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(command.uid === undefined ? {} : { uid: command.uid, gid: command.gid }),
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => reject(new Error(`cannot run ${command.file}: ${error.message}`, { cause: error })));
    // 'close', not 'exit': the output is complete only when the pipes close. pg_ctl -l hands the
    // postmaster a log file, so a started server does not hold the pipes open.
    child.on('close', (code, signal) => {
      if (code === 0) return resolve(output);
      reject(new Error(`${[command.file, ...command.args].join(' ')} failed (${signal ?? `exit ${code}`}):\n${output}`));
    });
  });
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The pid is in the process table, zombie or not. */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Direct children of a process, from /proc (Linux). */
export function childPids(parentPid: number): number[] {
  const children: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the parenthesised command: state, ppid, ...
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === parentPid) children.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return children;
}

/** Alive and not a zombie: an exited postmaster whose new parent has not reaped it yet is gone. */
export function isAlive(pid: number): boolean {
  if (!pidExists(pid)) return false;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Polls condition until it holds or the deadline passes. A condition that throws counts as "not
 * yet" (a table not replayed yet, a server still starting); the last error is in the timeout's.
 */
export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    try {
      if (await condition()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${reason}`, { cause: lastError });
    }
    await delay(POLL_INTERVAL_MS);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A port the OS says is free on loopback now (another process could take it before the server binds). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
