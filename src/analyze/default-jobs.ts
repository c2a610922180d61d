/**
 * How many workers `pgvigil analyze` starts without `-j`: the number of cores, at most 8, when the
 * input is large enough to repay starting them (a worker loads the whole parser: tens of ms, more
 * on a busy machine); 1 for a few small files, which parse in the main thread in that time.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import { DEFAULT_RANGE_BYTES } from './range-bytes.js';
import { compressionOfFile } from '../sources/log-inputs.js';

export const MAX_DEFAULT_JOBS = 8;

/**
 * Whether every input is a regular file of plain text or gzip, which the workers read; anything
 * else (stdin, other compressions) is parsed in the main thread by the reader that opens it.
 */
export async function workersCanRead(files: readonly string[]): Promise<boolean> {
  for (const file of files) {
    try {
      if (!(await fsp.stat(file)).isFile()) return false;
      // bzip2, xz, zstd: the workers read plain text and gzip only.
      const compression = await compressionOfFile(file);
      if (compression !== null && compression !== 'gzip') return false;
    } catch {
      if (file === '-') return false;
      // A missing or unreadable file is reported the same way by either path.
    }
  }
  return true;
}

export async function defaultJobs(files: readonly string[], cores = os.availableParallelism()): Promise<number> {
  const jobs = Math.min(cores, MAX_DEFAULT_JOBS);
  if (jobs < 2) return 1;
  let plainBytes = 0;
  let gzipFiles = 0;
  for (const file of files) {
    try {
      if (await compressionOfFile(file) === 'gzip') gzipFiles++;
      else plainBytes += (await fsp.stat(file)).size;
    } catch {
      // reported when the file is read
    }
    if (plainBytes >= 2 * DEFAULT_RANGE_BYTES || gzipFiles >= 2) return jobs;
  }
  return 1;
}
