/**
 * Reads whole log files for offline analysis: plain, compressed (gzip, bzip2, xz, zstd: see
 * log-inputs.ts) or standard input, in ~64 KiB chunks, as physical lines with byte offsets
 * (offsets in the decompressed stream when compressed).
 *
 * Owns: opening, decompressing, chunking. Never: parsing, or following a growing file (the tailer
 * does that).
 */
import { promises as fsp } from 'node:fs';
import type { PhysicalLine } from '../parsers/framer.js';
import { LineSplitter, type LineSplitterStats } from './line-reader.js';
import { compressionOfFile, decodedChunks, STDIN } from './log-inputs.js';

export const CHUNK_BYTES = 64 * 1024;
/** Bytes per read() of a plain file; split into CHUNK_BYTES chunks for decoding. */
export const READ_BYTES = 1024 * 1024;

/**
 * The file's (decompressed) bytes in chunks of `chunkBytes`. A yielded Buffer is only valid until
 * the next one is requested (read buffers are reused).
 *
 * Plain files are read READ_BYTES at a time with the next read already in flight while the
 * current block is parsed: parsing and I/O overlap, and there are 16x fewer reads than chunks.
 * Chunks stay ~64 KiB because that is the size lines are decoded and split at fastest.
 */
export async function* readChunks(path: string, chunkBytes = CHUNK_BYTES): AsyncGenerator<Buffer> {
  if (path === STDIN || (await compressionOfFile(path)) !== null) {
    yield* decodedChunks(path, chunkBytes);
    return;
  }
  const handle = await fsp.open(path, 'r');
  const buffers = [Buffer.allocUnsafe(READ_BYTES), Buffer.allocUnsafe(READ_BYTES)];
  let pending: Promise<{ bytesRead: number }> | null = null;
  try {
    let current = 0;
    pending = handle.read(buffers[current]!, 0, READ_BYTES, null);
    for (;;) {
      const { bytesRead } = await pending;
      pending = null;
      if (bytesRead === 0) return;
      const block = buffers[current]!;
      current = 1 - current;
      // Sequential reads (position null) run in order, so this one continues after `block`.
      pending = handle.read(buffers[current]!, 0, READ_BYTES, null);
      for (let start = 0; start < bytesRead; start += chunkBytes) {
        yield block.subarray(start, Math.min(start + chunkBytes, bytesRead));
      }
    }
  } finally {
    // A consumer that stops early leaves a read in flight: let it land before closing.
    await pending?.catch(() => undefined);
    await handle.close();
  }
}

export interface ReadLinesResult extends LineSplitterStats {
  /** Decompressed bytes read. */
  bytes: number;
}

/**
 * Calls `onLine` for every line of the file, the last one too when it lacks a newline. `onChunk`
 * runs after each chunk's lines (a place to write output and respect back-pressure).
 */
export async function readLines(
  path: string,
  onLine: (line: PhysicalLine) => void,
  /** After each chunk, with the bytes read so far (decompressed). */
  onChunk?: (bytesRead: number) => Promise<void> | void,
): Promise<ReadLinesResult> {
  const splitter = new LineSplitter();
  let bytes = 0;
  for await (const chunk of readChunks(path)) {
    bytes += chunk.length;
    splitter.push(chunk, onLine);
    if (onChunk) await onChunk(bytes);
  }
  splitter.end(onLine);
  return { bytes, ...splitter.stats };
}

/** The first complete lines of a file (up to `maxBytes` read), for format detection and ordering. */
export async function readHeadLines(path: string, maxBytes = CHUNK_BYTES, maxLines = 200): Promise<PhysicalLine[]> {
  const splitter = new LineSplitter();
  const lines: PhysicalLine[] = [];
  let bytes = 0;
  for await (const chunk of readChunks(path)) {
    splitter.push(chunk, (line) => { if (lines.length < maxLines) lines.push(line); });
    bytes += chunk.length;
    if (bytes >= maxBytes || lines.length >= maxLines) return lines;
  }
  splitter.end((line) => { if (lines.length < maxLines) lines.push(line); });
  return lines;
}
