/**
 * Makes one running process's unlink() calls slow for real: strace attaches to it and holds each
 * unlink/unlinkat on entry for `delayMs` before the kernel runs it (`-e inject=...:delay_enter`),
 * so the process really spends that time in its own syscalls, as it would on a filesystem that
 * frees a large file's extents slowly. Every traced call is written to `traceFile` with its time
 * and result, marked `(DELAYED)`, so a test can show which files the process removed.
 *
 * strace is a Debian tool: gate the test with itWithTool('strace', ...) (tools.ts).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { waitUntil } from './pg-server.js';
import { toolPath } from './tools.js';

const ATTACH_WAIT_MS = 10_000;
const DETACH_WAIT_MS = 10_000;

export interface SlowUnlink {
  /** Detaches (the process goes on, unslowed) and returns the trace: one line per call. */
  detach(): Promise<string>;
}

export async function slowUnlinksOf(pid: number, delayMs: number, traceFile: string): Promise<SlowUnlink> {
  // Injection applies only to traced calls, hence -e trace with the same set.
  const strace = spawn(toolPath('strace'), [
    '-p', String(pid), '-tt', '-o', traceFile,
    '-e', 'trace=unlink,unlinkat', '-e', `inject=unlink,unlinkat:delay_enter=${delayMs}ms`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  strace.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<number | null>((resolve) => strace.on('exit', (code) => resolve(code)));
  let done = false;
  void exited.then(() => { done = true; });
  const attached = () => stderr.includes(`Process ${pid} attached`);
  await waitUntil(() => done || attached(), ATTACH_WAIT_MS, `strace to attach to pid ${pid}`).catch(() => undefined);
  if (!attached()) {
    strace.kill('SIGKILL');
    throw new Error(`strace -p ${pid} did not attach within ${ATTACH_WAIT_MS} ms${done ? ' (it exited)' : ''}: ${stderr.trim()}`);
  }
  return {
    async detach() {
      // SIGINT: strace detaches, and a call it is holding runs at once.
      if (!done) strace.kill('SIGINT');
      const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), DETACH_WAIT_MS))]);
      if (code === 'timeout') {
        strace.kill('SIGKILL');
        throw new Error(`strace -p ${pid} did not detach within ${DETACH_WAIT_MS} ms: ${stderr.trim()}`);
      }
      return readFileSync(traceFile, 'utf8');
    },
  };
}

/** The paths of the calls strace held and that succeeded, in order (strace pads before ` = `). */
export function heldUnlinks(trace: string): string[] {
  return [...trace.matchAll(/\bunlink(?:at)?\((?:AT_FDCWD, )?"((?:[^"\\]|\\.)*)"(?:, \d+)?\)\s+= 0 \(DELAYED\)/g)].map((m) => m[1]!);
}
