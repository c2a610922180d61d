/**
 * How many threads `pgvigil analyze` parses on without `-j` when only the summary is printed: the
 * number of cores, at most 8, when the input is large enough to repay starting workers; 1
 * otherwise, and the main thread parses. Always 1 with whole events (--events, --db, --rules,
 * --redact): the main thread spends more taking an event from a worker (a structured clone) than
 * parsing it. 256 MB of the bench's mixed log, -j 1 against -j 2: --events 10.4 s and
 * 114 MB of peak RSS against 14.2 s and 306 MB; --db 21 s and 173 MB against 20 s and 334 MB.
 *
 * Measured on a shared 2-core machine (December 2026, the bench's mixed log, --json, so the main
 * thread parses beside one worker): -j 2 took 1.45x the wall time of -j 1 on 64 MB, 1.2x on
 * 256 MB (bench: -j 2 / -j 1 0.83x, 0.80-0.94), and about the same on 1 GiB. A worker spends
 * ~0.3 s starting and warming V8 up, and one -j 1 run already keeps ~1.3 cores busy (GC helper
 * threads, reads, the kernel): two -j 1 runs on the two halves of 256 MB took 1.4-1.9 s each,
 * against 1.05-1.25 s alone. So the workers win back their start only on large inputs, and never
 * when the machine is busy. An explicit `-j N` is always obeyed.
 */
import { promises as fsp } from 'node:fs';
import os from 'node:os';
import { DEFAULT_RANGE_BYTES } from './range-bytes.js';
import { compressionOfFile } from '../sources/log-inputs.js';

export const MAX_DEFAULT_JOBS = 8;

/** Input (decompressed) below which the default is to parse in the main thread. */
export const MIN_PARALLEL_BYTES = 1024 * 1024 * 1024;

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

/**
 * A gzip file's decompressed size as its trailer says it (ISIZE: modulo 4 GiB, of the last member
 * only): an estimate, which errs towards the main thread.
 */
async function gzipPlainBytes(file: string): Promise<number> {
  const handle = await fsp.open(file, 'r');
  try {
    const { size } = await handle.stat();
    const trailer = Buffer.alloc(4);
    const { bytesRead } = await handle.read(trailer, 0, 4, Math.max(0, size - 4));
    return bytesRead === 4 ? trailer.readUInt32LE(0) : 0;
  } finally {
    await handle.close();
  }
}

/** @param mode.wholeEvents the caller takes every event whole (--events, --db, --rules, --redact), not only a summary */
export async function defaultJobs(files: readonly string[], mode: { wholeEvents: boolean }, cores = os.availableParallelism()): Promise<number> {
  const jobs = Math.min(cores, MAX_DEFAULT_JOBS);
  if (jobs < 2 || mode.wholeEvents) return 1;
  let bytes = 0;
  // What workers can share: a plain file's ranges, a whole .gz file.
  let pieces = 0;
  for (const file of files) {
    try {
      if (await compressionOfFile(file) === 'gzip') {
        bytes += await gzipPlainBytes(file);
        pieces++;
      } else {
        const { size } = await fsp.stat(file);
        bytes += size;
        pieces += Math.ceil(size / DEFAULT_RANGE_BYTES);
      }
    } catch {
      // reported when the file is read
    }
    if (bytes >= MIN_PARALLEL_BYTES && pieces >= 2) return jobs;
  }
  return 1;
}
