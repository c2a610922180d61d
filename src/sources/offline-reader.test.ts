import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { PhysicalLine } from '../parsers/framer.js';
import { compressionOfFile } from './log-inputs.js';
import { readHeadLines, readLines } from './offline-reader.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-offline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** ~300 KiB of numbered lines, so reading spans several 64 KiB chunks. */
const body = Array.from({ length: 6000 }, (_, i) => `2026-10-14 03:12:45.123 UTC [${1000 + i}] LOG:  line ${i} é`).join('\n');

async function collect(file: string): Promise<{ lines: PhysicalLine[]; bytes: number }> {
  const lines: PhysicalLine[] = [];
  const result = await readLines(file, (line) => lines.push(line));
  return { lines, bytes: result.bytes };
}

describe('readLines', () => {
  it('reads a plain file with byte offsets, including a last line without newline', async () => {
    const file = path.join(dir, 'plain.log');
    writeFileSync(file, body);
    const { lines, bytes } = await collect(file);
    expect(lines).toHaveLength(6000);
    expect(bytes).toBe(Buffer.byteLength(body));
    const buffer = Buffer.from(body);
    for (const line of [lines[0]!, lines[2999]!, lines[5999]!]) {
      expect(buffer.toString('utf8', line.offset, line.offset + Buffer.byteLength(line.text))).toBe(line.text);
      expect(line.text).toBe(`2026-10-14 03:12:45.123 UTC [${1000 + line.line! - 1}] LOG:  line ${line.line! - 1} é`);
    }
  });

  it('reads gzip by its magic bytes, whatever the name, with offsets in the decompressed stream', async () => {
    const file = path.join(dir, 'postgresql.log.1');
    writeFileSync(file, gzipSync(body + '\n'));
    expect(await compressionOfFile(file)).toBe('gzip');
    const { lines, bytes } = await collect(file);
    expect(bytes).toBe(Buffer.byteLength(body) + 1);
    const plain = await collect(path.join(dir, 'plain.log'));
    expect(lines).toEqual(plain.lines);
  });

  it('rejects a truncated gzip file with an error instead of crashing the process', async () => {
    const file = path.join(dir, 'cut.log.gz');
    const full = gzipSync(body);
    writeFileSync(file, full.subarray(0, full.length / 2));
    await expect(collect(file)).rejects.toThrow(/unexpected end of file/i);
  });

  it('reads head lines for detection without reading the whole file', async () => {
    const head = await readHeadLines(path.join(dir, 'plain.log'), 64 * 1024, 10);
    expect(head.map((l) => l.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });
});
