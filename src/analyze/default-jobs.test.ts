import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultJobs, workersCanRead } from './default-jobs.js';
import { DEFAULT_RANGE_BYTES } from './range-bytes.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-jobs-'));
const write = (name: string, bytes: Buffer | string): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('defaultJobs', () => {
  it('is 1 for a small file, the cores (at most 8) for enough plain text or two .gz files', async () => {
    const small = write('small.log', 'x\n');
    const big = write('big.log', Buffer.alloc(2 * DEFAULT_RANGE_BYTES, 0x61));
    const [a, b] = [write('a.log.gz', gzipSync('x\n')), write('b.log.gz', gzipSync('y\n'))];
    expect(await defaultJobs([small], 4)).toBe(1);
    expect(await defaultJobs([small, big], 4)).toBe(4);
    expect(await defaultJobs([a, b], 16)).toBe(8);
    expect(await defaultJobs([big], 1)).toBe(1);
  });
});

describe('workersCanRead', () => {
  it('plain text and gzip, and a missing file (reported alike); not stdin, a directory, bzip2, xz or zstd', async () => {
    expect(await workersCanRead([write('p.log', 'x\n'), write('g.gz', gzipSync('x')), path.join(dir, 'missing')])).toBe(true);
    for (const other of ['-', dir, write('b.bz2', 'BZh91AY'), write('x.xz', Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 1])), write('z.zst', Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0]))]) {
      expect(await workersCanRead([other]), other).toBe(false);
    }
  });
});
