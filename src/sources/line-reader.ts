/**
 * Splits raw log bytes into physical lines with the exact byte offset of each line's first byte.
 *
 * Owns: newline framing, byte offsets, UTF-8 decoding (invalid bytes become U+FFFD, never an
 * exception), the over-long-line guard. Never: parsing a line, or emitting a line whose newline
 * has not arrived (the tailer must not see half a line; offline reading calls `end()` at EOF).
 *
 * Why split on the Buffer: byte offsets stay exact whatever the text holds. Text that is ASCII
 * (the common case) is decoded from one byte a character in slabs of about 4 KiB that end at a
 * newline, and its lines are slices of their slab: a binding call per line less (some 10% of
 * pgvigil analyze on a log of vacuum reports). A slice keeps its slab alive wherever it is kept
 * (a metric label, a summary key), so slabs are small: a kept name costs at most one slab, not
 * the 64 KiB chunk. The price, measured on live ingest of 1 GiB: peak RSS 150 MB instead of
 * 122 MB, slabs of entries waiting for the store being promoted and collected only by a full GC;
 * the live heap after one stays at about 9 MB either way. Other text is decoded as UTF-8 a line
 * at a time.
 */
import { isAscii } from 'node:buffer';
import type { PhysicalLine } from '../parsers/framer.js';

export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;
/** ASCII decoded at once: what one kept slice of a line can keep alive (a longer line is its own slab). */
const SLAB_BYTES = 4096;

type Decode = (this: Buffer, start: number, end: number) => string;
/**
 * Buffer's own decoders, which toString(encoding, start, end) dispatches to (not in the typings);
 * toString itself where a runtime lacks them.
 */
const decoders = Buffer.prototype as unknown as { latin1Slice?: Decode; utf8Slice?: Decode };
const latin1Slice: Decode = decoders.latin1Slice ?? function (this: Buffer, start, end) { return this.toString('latin1', start, end); };
const utf8Slice: Decode = decoders.utf8Slice ?? function (this: Buffer, start, end) { return this.toString('utf8', start, end); };
const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 13;

export interface LineSplitterOptions {
  /** Byte offset, in the file or decompressed stream, of the first byte that will be pushed. */
  startOffset?: number;
  /** 1-based number of the first line pushed; null when unknown (resuming mid-file). */
  startLine?: number | null;
  /** Bytes kept of one line; the rest is skipped up to its newline and counted. */
  maxLineBytes?: number;
}

export interface LineSplitterStats {
  lines: number;
  /** Lines longer than maxLineBytes: emitted cut to maxLineBytes. */
  overLongLines: number;
  /** Bytes skipped from over-long lines. */
  skippedBytes: number;
}

export type LineSink = (line: PhysicalLine) => void;

export class LineSplitter {
  private nextOffset: number;
  private lineStartOffset: number;
  private lineNumber: number | null;
  private held: Buffer[] = [];
  private heldBytes = 0;
  private droppedBytes = 0;
  private readonly maxLineBytes: number;
  readonly stats: LineSplitterStats = { lines: 0, overLongLines: 0, skippedBytes: 0 };

  constructor(options: LineSplitterOptions = {}) {
    this.nextOffset = options.startOffset ?? 0;
    this.lineStartOffset = this.nextOffset;
    this.lineNumber = options.startLine === undefined ? 1 : options.startLine;
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  /** Offset just past the newline of the last complete line: where an unfinished line starts. */
  get consumedOffset(): number {
    return this.lineStartOffset;
  }

  /** Offset of the next byte expected (consumedOffset + bytes held for an unfinished line). */
  get readOffset(): number {
    return this.nextOffset;
  }

  /** Bytes of an unfinished line held (or skipped) waiting for its newline. */
  get pendingBytes(): number {
    return this.nextOffset - this.lineStartOffset;
  }

  /**
   * Emits every line completed by `chunk`. The chunk may be reused by the caller afterwards:
   * an unfinished tail is copied.
   */
  push(chunk: Buffer, emit: LineSink): void {
    const length = chunk.length;
    let pos = 0;
    if (this.pendingBytes > 0) {
      const newline = chunk.indexOf(NEWLINE);
      if (newline === -1) {
        this.hold(chunk, 0, length);
        this.nextOffset += length;
        return;
      }
      this.hold(chunk, 0, newline);
      this.emitHeld(emit);
      pos = newline + 1;
      this.lineStartOffset = this.nextOffset + pos;
    }
    const last = chunk.lastIndexOf(NEWLINE);
    if (last >= pos) {
      this.emitRegion(chunk, pos, last, emit);
      pos = last + 1;
      this.lineStartOffset = this.nextOffset + pos;
    }
    if (pos < length) this.hold(chunk, pos, length);
    this.nextOffset += length;
  }

  /** At the end of a complete file: emits a last line that has no newline, if any. */
  end(emit: LineSink): void {
    if (this.pendingBytes === 0) return;
    this.emitHeld(emit);
    this.lineStartOffset = this.nextOffset;
  }

  /** Forgets an unfinished line (the file was truncated or replaced) and restarts at `offset`. */
  reset(offset: number, startLine: number | null): void {
    this.held = [];
    this.heldBytes = 0;
    this.droppedBytes = 0;
    this.nextOffset = offset;
    this.lineStartOffset = offset;
    this.lineNumber = startLine;
  }

  /** Lines [start, end) of chunk, each ended by a newline at or before `end` (a newline itself). */
  private emitRegion(chunk: Buffer, start: number, end: number, emit: LineSink): void {
    if (!isAscii(chunk.subarray(start, end))) return this.emitUtf8Region(chunk, start, end, emit);
    let slabStart = start;
    for (;;) {
      let slabEnd = end;
      if (end - slabStart > SLAB_BYTES) {
        // The slab ends at its last newline, or at the first one after a line longer than a slab.
        const cut = chunk.lastIndexOf(NEWLINE, slabStart + SLAB_BYTES);
        slabEnd = cut >= slabStart ? cut : chunk.indexOf(NEWLINE, slabStart + SLAB_BYTES);
      }
      this.emitAsciiSlab(chunk, slabStart, slabEnd, emit);
      if (slabEnd >= end) return;
      slabStart = slabEnd + 1;
    }
  }

  /**
   * Lines [start, end) of ASCII bytes, as slices of one string of them. In ASCII a character is a
   * byte, so string indexes are byte offsets. The decoder is called directly: toString() would
   * look the encoding up again.
   */
  private emitAsciiSlab(chunk: Buffer, start: number, end: number, emit: LineSink): void {
    const text = latin1Slice.call(chunk, start, end);
    let from = 0;
    for (;;) {
      const found = text.indexOf('\n', from);
      const lineEnd = found === -1 ? text.length : found;
      const cut = lineEnd > from && text.charCodeAt(lineEnd - 1) === CARRIAGE_RETURN ? lineEnd - 1 : lineEnd;
      this.emitLine(text.slice(from, cut), this.nextOffset + start + from, emit);
      if (found === -1) return;
      from = lineEnd + 1;
    }
  }

  private emitUtf8Region(chunk: Buffer, start: number, end: number, emit: LineSink): void {
    let from = start;
    for (;;) {
      const found = chunk.indexOf(NEWLINE, from);
      const lineEnd = found === -1 || found > end ? end : found;
      const cut = lineEnd > from && chunk[lineEnd - 1] === CARRIAGE_RETURN ? lineEnd - 1 : lineEnd;
      this.emitLine(utf8Slice.call(chunk, from, cut), this.nextOffset + from, emit);
      if (lineEnd === end) return;
      from = lineEnd + 1;
    }
  }

  private emitLine(text: string, offset: number, emit: LineSink): void {
    const line = this.lineNumber;
    if (line !== null) this.lineNumber = line + 1;
    this.stats.lines++;
    emit({ text, offset, line });
  }

  private emitHeld(emit: LineSink): void {
    const bytes = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    let end = bytes.length;
    if (this.droppedBytes > 0) {
      // The limit may fall inside a character: its first bytes would decode as U+FFFD.
      const kept = characterBoundaryAtOrBefore(bytes, end);
      this.stats.overLongLines++;
      this.stats.skippedBytes += this.droppedBytes + end - kept;
      end = kept;
    } else if (end > 0 && bytes[end - 1] === CARRIAGE_RETURN) {
      end--;
    }
    this.emitLine(bytes.toString('utf8', 0, end), this.lineStartOffset, emit);
    this.held = [];
    this.heldBytes = 0;
    this.droppedBytes = 0;
  }

  private hold(chunk: Buffer, start: number, end: number): void {
    const room = this.maxLineBytes - this.heldBytes;
    const keep = Math.min(end - start, Math.max(room, 0));
    if (keep > 0) {
      // Copy: the caller reuses its read buffer.
      this.held.push(Buffer.from(chunk.subarray(start, start + keep)));
      this.heldBytes += keep;
    }
    this.droppedBytes += end - start - keep;
  }
}

/**
 * `end`, or the start of the UTF-8 character it cuts. A lead byte announces its sequence's length
 * (110xxxxx: 2, 1110xxxx: 3, 11110xxx: 4); continuation bytes are 10xxxxxx.
 */
function characterBoundaryAtOrBefore(bytes: Buffer, end: number): number {
  for (let i = end - 1; i >= Math.max(0, end - 4); i--) {
    const byte = bytes[i]!;
    if ((byte & 0xc0) === 0x80) continue;
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i + length > end ? i : end;
  }
  return end;
}
