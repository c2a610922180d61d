/**
 * `pgvigil analyze` run in-process with its stdout and stderr captured, for CLI tests.
 */
import { PassThrough } from 'node:stream';
import { runAnalyze, type AnalyzeIo, type AnalyzeOptions } from '../../src/cli/analyze.js';

/** `clock`: the progress line's (with `options.progress`). */
export async function analyzeCaptured(files: string[], options: AnalyzeOptions = {}, clock?: AnalyzeIo['clock']): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (d: Buffer) => out.push(d));
  stderr.on('data', (d: Buffer) => err.push(d));
  const code = await runAnalyze(files, options, { stdout, stderr, clock });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}
