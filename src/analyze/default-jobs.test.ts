import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { MIN_PARALLEL_BYTES, defaultJobs, workersCanRead } from './default-jobs.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgvigil-jobs-'));
const write = (name: string, bytes: Buffer | string): string => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, bytes);
  return file;
};
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const SUMMARY = { wholeEvents: false };

describe('defaultJobs', () => {
  /** A sparse file of `bytes`: only its size is read. */
  const sized = (name: string, bytes: number): string => {
    const file = write(name, '');
    fs.truncateSync(file, bytes);
    return file;
  };
  /** A .gz file whose trailer says it holds `plainBytes`. */
  const gzipOf = (name: string, plainBytes: number): string => {
    const gz = gzipSync('x\n');
    gz.writeUInt32LE(plainBytes, gz.length - 4);
    return write(name, gz);
  };

  it('is 1 below MIN_PARALLEL_BYTES of input, the cores (at most 8) from there on', async () => {
    const small = write('small.log', 'x\n');
    const big = sized('big.log', MIN_PARALLEL_BYTES);
    expect(await defaultJobs([small], SUMMARY, 4)).toBe(1);
    expect(await defaultJobs([sized('almost.log', MIN_PARALLEL_BYTES - 1)], SUMMARY, 4)).toBe(1);
    expect(await defaultJobs([small, big], SUMMARY, 4)).toBe(4);
    expect(await defaultJobs([big], SUMMARY, 16)).toBe(8);
    expect(await defaultJobs([big], SUMMARY, 1)).toBe(1);
  });

  it('is 1 whatever the input when every event is taken whole (--events, --db, --rules, --redact)', async () => {
    expect(await defaultJobs([sized('huge.log', 4 * MIN_PARALLEL_BYTES)], { wholeEvents: true }, 8)).toBe(1);
  });

  it('counts a .gz file by the size its trailer gives, and needs two of them: one is read by one worker', async () => {
    const half = MIN_PARALLEL_BYTES / 2;
    expect(await defaultJobs([gzipOf('a.log.gz', half), gzipOf('b.log.gz', half)], SUMMARY, 4)).toBe(4);
    expect(await defaultJobs([gzipOf('c.log.gz', half), gzipOf('d.log.gz', half - 1)], SUMMARY, 4)).toBe(1);
    expect(await defaultJobs([gzipOf('e.log.gz', 2 ** 32 - 1)], SUMMARY, 4)).toBe(1);
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
