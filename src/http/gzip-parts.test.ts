import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { gzipPrefix, gzipWithTail } from './gzip-parts.js';

async function member(prefix: Buffer, tail: Buffer): Promise<Buffer> {
  return Buffer.concat(gzipWithTail(await gzipPrefix(prefix), tail));
}

/** Lines like an exposition's: compressible, as the cached part is. */
function exposition(series: number): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < series; i++) lines.push(`pg_stat_user_tables_n_dead_tup{target="db1",datname="shop",schemaname="public",relname="t${i}"} ${i * 7}\n`);
  return Buffer.from(lines.join(''), 'utf8');
}

describe('gzip from a cached prefix and a per-response tail', () => {
  const cases: Array<[string, Buffer, Buffer]> = [
    ['an exposition and a short tail', exposition(2_000), Buffer.from('pgvigil_build_info{version="0.1.0"} 1\n')],
    ['an empty prefix', Buffer.alloc(0), exposition(10)],
    ['an empty tail', exposition(10), Buffer.alloc(0)],
    ['both empty', Buffer.alloc(0), Buffer.alloc(0)],
    // Stored blocks hold 65,535 bytes: one full block, one byte over, several blocks.
    ['a tail of exactly one stored block', exposition(100), randomBytes(0xffff)],
    ['a tail one byte past a stored block', exposition(100), randomBytes(0x10000)],
    ['a tail of several stored blocks', exposition(100), exposition(3_000)],
    ['incompressible bytes in both', randomBytes(300_000), randomBytes(1_000)],
  ];

  it.each(cases)('is one gzip member that inflates to prefix + tail: %s', async (_name, prefix, tail) => {
    const gz = await member(prefix, tail);
    expect(gunzipSync(gz).equals(Buffer.concat([prefix, tail]))).toBe(true);
  });

  it('passes the gzip tool, which checks the CRC and length in the trailer', async () => {
    const prefix = exposition(5_000);
    const tail = exposition(800);
    const gz = await member(prefix, tail);
    const gunzip = spawnSync('gzip', ['-dc'], { input: gz, maxBuffer: 64 * 1024 * 1024 });
    expect(gunzip.stderr.toString()).toBe('');
    expect(gunzip.status).toBe(0);
    expect(gunzip.stdout.equals(Buffer.concat([prefix, tail]))).toBe(true);
  });

  it('reuses one compressed prefix with different tails', async () => {
    const prefix = exposition(1_000);
    const compressed = await gzipPrefix(prefix);
    for (const tail of ['a 1\n', 'a 2\nb 3\n']) {
      expect(gunzipSync(Buffer.concat(gzipWithTail(compressed, Buffer.from(tail)))).toString()).toBe(prefix.toString() + tail);
    }
    // The cached prefix compresses: the point of caching it.
    expect(compressed.bytes.length).toBeLessThan(prefix.length / 5);
  });

  it('is refused by gunzip when a byte of the trailer is wrong (the test can fail)', async () => {
    const gz = await member(exposition(50), Buffer.from('x 1\n'));
    gz[gz.length - 5]! ^= 1;
    expect(() => gunzipSync(gz)).toThrow(/incorrect data check|incorrect length check/);
  });
});
