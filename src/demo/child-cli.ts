/**
 * pgvigil's own CLI as a child process, for the demo: the daemon (`pgvigil run`) exactly as an
 * operator starts it, and `pgvigil report` afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

// From src/demo (tsx) and from dist/demo (built) alike.
const PGVIGIL_BIN = fileURLToPath(new URL('../../bin/pgvigil.js', import.meta.url));
const READY_WAIT_MS = 30_000;
const STOP_WAIT_MS = 15_000;

export interface DaemonChild {
  readonly process: ChildProcess;
  /** Resolves with the exit code once the daemon has exited. */
  readonly exited: Promise<number | null>;
  /** SIGTERM (the daemon flushes and exits), then SIGKILL if it takes too long. */
  stop(): Promise<void>;
}

/**
 * Starts `pgvigil run --config <file>` with its own log in logFile, in its own process group (a
 * Ctrl-C in the terminal reaches only the demo, which stops the daemon in order), and resolves
 * once it answers /healthz.
 */
export async function startDaemon(configFile: string, logFile: string, baseUrl: string): Promise<DaemonChild> {
  const log = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [PGVIGIL_BIN, 'run', '--config', configFile, '--log-level', 'warn'], {
    detached: true,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  // Whatever ends the demo, the daemon must not outlive it.
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => {
    process.off('exit', killOnExit);
    resolve(code);
  }));
  const daemon: DaemonChild = {
    process: child,
    exited,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + READY_WAIT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgvigil run exited with code ${child.exitCode} before serving ${baseUrl}; its log: ${logFile}`);
    if (await answers(`${baseUrl}/healthz`)) return daemon;
    if (Date.now() > deadline) {
      await daemon.stop();
      throw new Error(`pgvigil run did not answer ${baseUrl}/healthz within ${READY_WAIT_MS / 1000} s; its log: ${logFile}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).ok;
  } catch {
    return false;
  }
}

/** `pgvigil report --format html -o <file>` over the demo's window. */
export async function writeReport(store: string, fromIso: string, toIso: string, htmlFile: string): Promise<void> {
  const result = await runCli(['report', '--db', store, '--from', fromIso, '--to', toIso, '--format', 'html', '-o', htmlFile]);
  if (result.code !== 0) throw new Error(`pgvigil report failed (exit ${result.code}): ${result.stderr.trim()}`);
}

function runCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [PGVIGIL_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
