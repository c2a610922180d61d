/**
 * The built daemon (`bin/pgvigil.js run`, dist/: `npm run build` first) as a child process for
 * fault tests: its JSON log lines, its /metrics, and how it ended. Optionally run as another
 * user (uid/gid), for tests of permissions that root would ignore.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { freePort, waitUntil } from './pg-server.js';

const PGVIGIL = join(import.meta.dirname, '../../bin/pgvigil.js');

export interface DaemonExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface DaemonProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Its JSON log lines so far. */
  logLines(): Array<Record<string, unknown>>;
  /** The first log line whose msg matches, once there is one; rejects when it exits first. */
  waitForLog(pattern: RegExp, timeoutMs: number): Promise<Record<string, unknown>>;
  /** /metrics as text, '' while it does not answer. */
  metrics(): Promise<string>;
  exit: Promise<DaemonExit>;
}

export interface SpawnOptions {
  /** Run as this user (the test runs as root). */
  user?: { uid: number; gid: number };
  /** `serve` for the read-only API over a store; default `run`. */
  command?: 'run' | 'serve';
  /** Added to the environment (which is PATH alone otherwise). */
  env?: Record<string, string>;
  cwd?: string;
  /** A command the daemon runs under (`strace -f -o FILE`); `child` is then that command's process. */
  wrapper?: string[];
}

/** `pgvigil run ARGS --listen 127.0.0.1:<free port>` (or `pgvigil serve ...`). */
export async function spawnDaemon(args: string[], options: SpawnOptions = {}): Promise<DaemonProcess> {
  const port = await freePort();
  const command = [...(options.wrapper ?? []), process.execPath, PGVIGIL, options.command ?? 'run', ...args, '--listen', `127.0.0.1:${port}`];
  const child = spawn(command[0]!, command.slice(1), {
    env: { PATH: process.env.PATH, ...options.env },
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => { output += text; });
  child.stdout.setEncoding('utf8').on('data', (text: string) => { output += text; });
  const exit = new Promise<DaemonExit>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const logLines = () => output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    url,
    output: () => output,
    logLines,
    async waitForLog(pattern, timeoutMs) {
      let found: Record<string, unknown> | undefined;
      await waitUntil(() => {
        found = logLines().find((l) => pattern.test(String(l.msg)));
        if (found === undefined && child.exitCode !== null) throw new Error(`pgvigil exited ${child.exitCode} before logging ${pattern}:\n${output}`);
        return found !== undefined;
      }, timeoutMs, `pgvigil to log ${pattern}`);
      return found!;
    },
    metrics: () => fetch(`${url}/metrics`).then((r) => r.text(), () => ''),
    exit,
  };
}

/** SIGKILL, then the exit. */
export async function killDaemon(daemon: DaemonProcess): Promise<DaemonExit> {
  daemon.child.kill('SIGKILL');
  return daemon.exit;
}
