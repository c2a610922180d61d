/**
 * One gzip member (RFC 1952) from a prefix compressed once and a short tail added per response,
 * so a response that is mostly cached bytes is not compressed again each time.
 *
 * The prefix is raw deflate (RFC 1951) flushed to a byte boundary without a final block
 * (Z_SYNC_FLUSH), so the stream may go on with blocks made elsewhere. The tail goes in stored
 * blocks, the last one final: no compression, because a zlib call per response cost 0.6-1.6 ms
 * for pgvigil's ~8 KB of own health on the bench machine (the cost of a zlib stream's set-up, not
 * of the bytes), and the tail is a few percent of the compressed response. The trailer's CRC-32
 * continues the prefix's over the tail; its length is the sum of both, modulo 2^32.
 */
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw } from 'node:zlib';

const deflateRawAsync = promisify(deflateRaw);

/** ID1 ID2, CM deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952 2.3). */
const HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

/** A stored block holds at most 65,535 bytes after its header byte, LEN and NLEN. */
const MAX_STORED_BLOCK = 0xffff;
const STORED_HEADER = 5;
/** CRC-32 and ISIZE. */
const TRAILER = 8;

export interface GzipPrefix {
  /** The gzip header, then the prefix's deflate blocks (none final). */
  bytes: Buffer;
  /** CRC-32 of the uncompressed prefix. */
  crc: number;
  /** Length of the uncompressed prefix. */
  length: number;
}

/** Compresses the prefix on zlib's thread pool: a megabyte must not hold up the event loop. */
export async function gzipPrefix(text: Buffer): Promise<GzipPrefix> {
  const deflated = await deflateRawAsync(text, { finishFlush: constants.Z_SYNC_FLUSH });
  return { bytes: Buffer.concat([HEADER, deflated]), crc: crc32(text), length: text.length };
}

/** The whole member as two chunks: the cached prefix, then the tail's blocks and the trailer. */
export function gzipWithTail(prefix: GzipPrefix, tail: Buffer): Buffer[] {
  const blocks = Math.max(1, Math.ceil(tail.length / MAX_STORED_BLOCK));
  const end = Buffer.allocUnsafe(tail.length + blocks * STORED_HEADER + TRAILER);
  let at = 0;
  for (let block = 0; block < blocks; block++) {
    const data = tail.subarray(block * MAX_STORED_BLOCK, (block + 1) * MAX_STORED_BLOCK);
    // BFINAL on the last, BTYPE 00 (stored); byte-aligned after the prefix's sync flush.
    at = end.writeUInt8(block === blocks - 1 ? 1 : 0, at);
    at = end.writeUInt16LE(data.length, at);
    at = end.writeUInt16LE(data.length ^ 0xffff, at);
    at += data.copy(end, at);
  }
  // Not crc32 of an empty buffer: zlib's crc32 answers 0 for a buffer without memory behind it.
  at = end.writeUInt32LE(tail.length === 0 ? prefix.crc : crc32(tail, prefix.crc), at);
  end.writeUInt32LE((prefix.length + tail.length) % 2 ** 32, at);
  return [prefix.bytes, end];
}
