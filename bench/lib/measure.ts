/**
 * Timing whole processes for benchmarks: wall time (start-up included) and peak RSS from
 * /usr/bin/time, plus the child's stdout. Medians and ranges over runs.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ProcessRun {
  seconds: number;
  /** Peak resident set of the child in MB; null without /usr/bin/time. */
  peakRssMb: number | null;
  /** User + system CPU seconds of the child: steadier than wall time on a shared machine. */
  cpuSeconds: number | null;
  stdout: string;
}

const TIME = '/usr/bin/time';

export async function timeProcess(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ProcessRun> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-time-'));
  const rssFile = path.join(dir, 'rss');
  const useTime = existsSync(TIME);
  const [cmd, cmdArgs] = useTime ? [TIME, ['-f', '%M %U %S', '-o', rssFile, file, ...args]] : [file, args];
  const started = process.hrtime.bigint();
  try {
    const stdout = await new Promise<string>((resolve, reject) => {
      const child = spawn(cmd, cmdArgs, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-4000); });
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${file} ${args.join(' ')} exited ${code}:\n${err}`))));
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (!useTime) return { seconds, peakRssMb: null, cpuSeconds: null, stdout };
    const [rssKb, user, system] = readFileSync(rssFile, 'utf8').trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
    return { seconds, peakRssMb: rssKb / 1024, cpuSeconds: user + system, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function range(values: number[]): string {
  return `${Math.min(...values).toFixed(1)}-${Math.max(...values).toFixed(1)}`;
}

/** A positive number from the environment, or the fallback. */
export function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}
