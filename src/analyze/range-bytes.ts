/**
 * Size of the ranges a plain file is cut into for `analyze -j N`, and how many batches a worker
 * may have waiting for the in-order merge.
 */
import { CHUNK_BYTES } from '../sources/offline-reader.js';

/**
 * Ranges whose events go out whole (--events, --db, --rules, --redact): small enough that a
 * range's events waiting for the in-order merge stay a few MB.
 */
export const DEFAULT_RANGE_BYTES = 4 * 1024 * 1024;

/**
 * Ranges of a summary-only run, whose batches are a few bytes per run of generic events (generic-columns.ts). Each
 * range costs its worker ~30 ms of CPU (one worker: 64 MB in sixteen 4 MB ranges took 0.5 s more
 * than in one; the profile shows twice the GC and the fresh pipelines' cold timestamp caches), so
 * fewer, larger ranges: 64 MB at -j 2 took 2.7 s of CPU with 4 MB ranges, 2.3 s with 16 MB.
 */
export const MAX_SUMMARY_RANGE_BYTES = 16 * 1024 * 1024;

/** The range size for a file: summary-only runs cut it into at least two ranges per worker, so no worker is left with the only long one. */
export function rangeBytesFor(fileBytes: number, jobs: number, summaryOnly: boolean): number {
  if (!summaryOnly) return DEFAULT_RANGE_BYTES;
  return Math.min(MAX_SUMMARY_RANGE_BYTES, Math.max(DEFAULT_RANGE_BYTES, Math.ceil(fileBytes / (2 * jobs))));
}

/**
 * Input bytes whose events a worker posts as one batch. A summary's batch is a few runs and a
 * message costs its two threads ~0.1 ms whatever it holds: one per 64 KB chunk was 0.4 s of a
 * 256 MB log's 4 s of CPU at -j 2. Whole events are cloned into the message: batches of 1 MB
 * made --events -j 2 on 64 MB take 5.6 s and 340 MB instead of 4.0 s and 176 MB per chunk.
 */
export function batchBytesFor(summaryOnly: boolean): number {
  return summaryOnly ? 1024 * 1024 : CHUNK_BYTES;
}

/**
 * Batches a worker may post before the merge reads them: a whole range and a little, since the
 * merge reads ranges in order, so a worker on the next range must be able to finish it while
 * the merge still reads the current one, or the workers take turns.
 */
export function creditBatches(rangeBytes: number, batchBytes: number): number {
  return Math.ceil((Math.max(rangeBytes, DEFAULT_RANGE_BYTES) * 1.25) / batchBytes);
}
