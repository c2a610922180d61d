/**
 * How many workers `pgvigil analyze` starts without `-j`: the number of cores, at most 8, when the
 * input is large enough to repay starting them (a worker loads the whole parser: tens of ms, more
 * on a busy machine); 1 for a few small files, which parse in the main thread in that time.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import { DEFAULT_RANGE_BYTES } from './range-bytes.js';
import { isGzip } from '../sources/offline-reader.js';

export const MAX_DEFAULT_JOBS = 8;

export async function defaultJobs(files: readonly string[], cores = os.availableParallelism()): Promise<number> {
  const jobs = Math.min(cores, MAX_DEFAULT_JOBS);
  if (jobs < 2) return 1;
  let plainBytes = 0;
  let gzipFiles = 0;
  for (const file of files) {
    try {
      if (await isGzip(file)) gzipFiles++;
      else plainBytes += (await fsp.stat(file)).size;
    } catch {
      // reported when the file is read
    }
    if (plainBytes >= 2 * DEFAULT_RANGE_BYTES || gzipFiles >= 2) return jobs;
  }
  return 1;
}
