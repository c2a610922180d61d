/**
 * Starts test/helpers/outbox-restart-child.ts (an AlertStore and an Outbox in a process of their
 * own) and kills it with SIGKILL: the outbox's crash tests drive it by `fire KEY` and `resolve KEY`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface OutboxChild {
  proc: ChildProcess;
  /** Sends a command and waits until the child has committed it. */
  send(command: string): Promise<void>;
}

const CHILD = path.join(import.meta.dirname, 'outbox-restart-child.ts');

/** `args`: the child's arguments after the store (`pagerduty URL KEY` or `webhook URL`). */
export function startOutboxChild(store: string, ...args: string[]): Promise<OutboxChild> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, store, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  proc.stdout!.on('data', (chunk: Buffer) => {
    lines.push(...chunk.toString().split('\n').filter(Boolean));
    for (const wake of waiters.splice(0)) wake();
  });
  proc.on('exit', () => { for (const wake of waiters.splice(0)) wake(); });
  const nextLine = (expected: string) => new Promise<void>((resolve, reject) => {
    const check = () => {
      const i = lines.indexOf(expected);
      if (i >= 0) return void (lines.splice(i, 1), resolve());
      if (proc.exitCode !== null || proc.signalCode !== null) return reject(new Error(`outbox child exited (${proc.exitCode ?? proc.signalCode}): ${stderr}`));
      waiters.push(check);
    };
    check();
  });
  return nextLine('started').then(() => ({
    proc,
    send: async (command: string) => {
      proc.stdin!.write(`${command}\n`);
      await nextLine('ok');
    },
  }));
}

export async function killChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  proc.kill('SIGKILL');
  await exited;
}
