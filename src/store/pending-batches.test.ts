import { describe, expect, it } from 'vitest';
import type { Sample } from '../domain/index.js';
import { PendingBatches } from './pending-batches.js';
import type { WriteBatch } from './store-writer.js';

const samples = (n: number, tsMs = 0): Sample[] => Array.from({ length: n }, (_, i) => ({ target: 't', name: 'pg_x', labels: { i: String(i) }, tsMs, value: i }));
const offset = (n: number): WriteBatch => ({ offsets: [{ target: 't', source: '/log', filePath: '/log/a', fileId: '1:2', offset: n }] });

describe('PendingBatches', () => {
  it('hands out the oldest batches up to a row count, never splitting one, at least one', () => {
    const pending = new PendingBatches(1_000);
    const batches = [{ samples: samples(4) }, offset(1), { samples: samples(5) }];
    for (const batch of batches) pending.push(batch);
    expect(pending.oldest(5)).toEqual(batches.slice(0, 2));
    expect(pending.oldest(2)).toEqual(batches.slice(0, 1));
    pending.removeOldest(2);
    expect(pending.oldest(2)).toEqual(batches.slice(2));
    expect(pending.rows).toBe(5);
  });

  it('counts log rows apart from droppable samples, and drops only sample-only batches, oldest first', () => {
    const pending = new PendingBatches(10);
    const mixed: WriteBatch = { samples: samples(8), offsets: offset(2).offsets! };
    const first = { samples: samples(6, 1) };
    pending.push(first);
    pending.push(mixed);
    expect(pending.logRows).toBe(9);
    const second = { samples: samples(6, 2) };
    expect(pending.push(second)).toEqual({ batches: 1, samples: 6 });
    expect(pending.oldest(100)).toEqual([mixed, second]);
    expect(pending.rows).toBe(15);
  });
});
