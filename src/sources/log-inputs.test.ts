import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { compressionOf, decodedChunks, expandInputs } from './log-inputs.js';
import { readLines } from './offline-reader.js';

const LOGS = path.resolve('test/fixtures/logs');
const COMPRESSED = path.resolve('test/fixtures/compressed');

/** What test/fixtures/compressed/README.md says each file holds. */
function pg18StderrConcatenated(): Buffer {
  const folders = readdirSync(LOGS).filter((name) => name.startsWith('pg18-stderr-')).sort();
  return Buffer.concat(folders.flatMap((folder) => readdirSync(path.join(LOGS, folder))
    .filter((name) => name.endsWith('.log'))
    .map((name) => readFileSync(path.join(LOGS, folder, name)))));
}

async function decoded(file: string, chunkBytes = 64 * 1024): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of decodedChunks(file, chunkBytes)) {
    expect(chunk.length).toBeLessThanOrEqual(chunkBytes);
    parts.push(Buffer.from(chunk));
  }
  return Buffer.concat(parts);
}

describe('decodedChunks', () => {
  const original = pg18StderrConcatenated();

  it.each([
    ['pg18-stderr-all.log.gz', 'gzip'],
    ['pg18-stderr-all.log.bz2', 'bzip2'],
    ['pg18-stderr-all.multistream.log.bz2', 'bzip2'],
    ['pg18-stderr-all.log.xz', 'xz'],
    ['pg18-stderr-all.log.zst', 'zstd'],
  ])('%s (%s) decompresses to the original bytes', async (name, compression) => {
    const file = path.join(COMPRESSED, name);
    expect(compressionOf(readFileSync(file).subarray(0, 6))).toBe(compression);
    const text = await decoded(file, 16 * 1024);
    expect(text.length).toBe(original.length);
    expect(text.equals(original)).toBe(true);
  });

  it('reads the lines of a compressed file with offsets in the decompressed text', async () => {
    const lines: Array<{ text: string; offset: number }> = [];
    const read = await readLines(path.join(COMPRESSED, 'pg18-stderr-all.log.zst'), (line) => lines.push(line));
    expect(read.bytes).toBe(original.length);
    const last = lines[lines.length - 1]!;
    expect(original.toString('utf8', last.offset, last.offset + Buffer.byteLength(last.text))).toBe(last.text);
  });

  it('stops with an error on a damaged bzip2 file instead of returning less', async () => {
    const damaged = Buffer.from(readFileSync(path.join(COMPRESSED, 'pg18-stderr-all.log.bz2')));
    damaged[damaged.length - 3]! ^= 0xff; // inside the stream CRC
    const file = path.join(suiteTempDir('log-inputs-bad'), 'damaged.bz2');
    writeFileSync(file, damaged);
    await expect(decoded(file)).rejects.toThrow(/bzip2/);
  });
});

describe('expandInputs', () => {
  const dir = suiteTempDir('log-inputs');
  mkdirSync(path.join(dir, 'logs', '2026-11'), { recursive: true });
  for (const name of ['postgresql-1.log', 'postgresql-2.log.gz', '.hidden', 'other.txt']) writeFileSync(path.join(dir, 'logs', name), '');
  writeFileSync(path.join(dir, 'logs', '2026-11', 'postgresql-3.log'), gzipSync('x'));
  const at = (...names: string[]): string => path.join(dir, 'logs', ...names);

  it('names the files of a directory (not its subdirectories, not hidden files), sorted', async () => {
    expect(await expandInputs([at()])).toEqual([at('other.txt'), at('postgresql-1.log'), at('postgresql-2.log.gz')]);
  });

  it('expands globs itself, ** across directories, and keeps - and argument order', async () => {
    expect(await expandInputs(['-', at('postgresql-*.log*')])).toEqual(['-', at('postgresql-1.log'), at('postgresql-2.log.gz')]);
    expect(await expandInputs([at('**', 'postgresql-[13].log')])).toEqual([at('2026-11', 'postgresql-3.log'), at('postgresql-1.log')]);
    expect(await expandInputs([at('postgresql-?.log')])).toEqual([at('postgresql-1.log')]);
  });

  it('leaves a missing plain name for the reader to report, and refuses a glob that matches nothing', async () => {
    expect(await expandInputs([at('missing.log')])).toEqual([at('missing.log')]);
    await expect(expandInputs([at('*.csv')])).rejects.toThrow(/no file matches/);
  });
});
