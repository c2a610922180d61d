import { describe, expect, it } from 'vitest';
import { batchBytesFor, DEFAULT_RANGE_BYTES, MAX_SUMMARY_RANGE_BYTES, creditBatches, rangeBytesFor } from './range-bytes.js';

const MB = 1024 * 1024;

describe('range sizes of analyze -j N', () => {
  it('cuts a summary-only file into at least two ranges per worker, between the default and the maximum size', () => {
    expect([rangeBytesFor(1 * MB, 2, true), rangeBytesFor(20 * MB, 2, true), rangeBytesFor(64 * MB, 2, true), rangeBytesFor(1024 * MB, 2, true)])
      .toEqual([DEFAULT_RANGE_BYTES, 5 * MB, MAX_SUMMARY_RANGE_BYTES, MAX_SUMMARY_RANGE_BYTES]);
  });

  it('keeps the default size when whole events wait for the merge', () => {
    expect(rangeBytesFor(1024 * MB, 2, false)).toBe(DEFAULT_RANGE_BYTES);
  });

  it('lets a worker post a whole range and more before the merge reads it, never fewer batches than a default range needs', () => {
    for (const summaryOnly of [true, false]) {
      const batchBytes = batchBytesFor(summaryOnly);
      for (const rangeBytes of [997, DEFAULT_RANGE_BYTES, 5 * MB, MAX_SUMMARY_RANGE_BYTES]) {
        expect(creditBatches(rangeBytes, batchBytes) * batchBytes).toBeGreaterThan(Math.max(rangeBytes, DEFAULT_RANGE_BYTES));
      }
    }
  });
});
