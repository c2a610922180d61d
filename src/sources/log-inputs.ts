/**
 * The inputs of `pgvigil analyze`: which files its arguments name and their bytes, decompressed.
 *
 * - An argument is a file, a directory (its files, not its subdirectories), a glob pgvigil
 *   expands itself (quoted, so it works where the shell did not expand it: `'logs/*.gz'`;
 *   `**` for any depth of directories), or `-` for standard input.
 * - Compression is told by magic bytes, never by the name (a rotated `.1` may be compressed):
 *   gzip (Node's zlib), bzip2 (seek-bzip), xz (xz-decompress) and zstd (fzstd). All are
 *   libraries: no tool that may be missing is run.
 *
 * Owns: naming and opening inputs, decompressing. Never: splitting lines or parsing.
 */
import { createReadStream, promises as fsp } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Decompress as ZstdStream } from 'fzstd';
import type Bunzip from 'seek-bzip';
import type { XzReadableStream } from 'xz-decompress';

/** The argument that names standard input. */
export const STDIN = '-';

export type Compression = 'gzip' | 'bzip2' | 'xz' | 'zstd';

const MAGIC: ReadonlyArray<[Compression, readonly number[]]> = [
  ['gzip', [0x1f, 0x8b]],
  ['bzip2', [0x42, 0x5a, 0x68]], // "BZh"
  ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]],
  ['zstd', [0x28, 0xb5, 0x2f, 0xfd]],
];
const MAGIC_BYTES = 6;

/** The compression whose magic bytes start `head`; null for anything else (plain text). */
export function compressionOf(head: Uint8Array): Compression | null {
  for (const [name, magic] of MAGIC) {
    if (head.length >= magic.length && magic.every((byte, i) => head[i] === byte)) return name;
  }
  return null;
}

/** The compression of the file at `file`, from its first bytes. */
export async function compressionOfFile(file: string): Promise<Compression | null> {
  const handle = await fsp.open(file, 'r');
  try {
    const head = Buffer.alloc(MAGIC_BYTES);
    const { bytesRead } = await handle.read(head, 0, MAGIC_BYTES, 0);
    return compressionOf(head.subarray(0, bytesRead));
  } finally {
    await handle.close();
  }
}

/**
 * The decompressed bytes of a compressed file or of standard input (compressed or not), in
 * chunks of at most `chunkBytes`. Plain files are read by offline-reader.ts on its faster path.
 */
export async function* decodedChunks(file: string, chunkBytes: number): AsyncGenerator<Buffer> {
  const raw = file === STDIN ? (process.stdin as AsyncIterable<Buffer>) : createReadStream(file, { highWaterMark: chunkBytes });
  const { head, rest } = await peek(raw, MAGIC_BYTES);
  const compression = compressionOf(head);
  const source = prepend(head, rest);
  const decoded = compression === null ? source : decompress(compression, source, chunkBytes);
  for await (const chunk of decoded) {
    for (let start = 0; start < chunk.length; start += chunkBytes) yield chunk.subarray(start, Math.min(start + chunkBytes, chunk.length));
  }
}

// The decoders load when a file needs them (most runs read plain text or gzip). seek-bzip and
// xz-decompress are CommonJS: Node's ESM loader gives their module.exports as the default export.
const loadBunzip = (): Promise<{ default: typeof Bunzip }> => import('seek-bzip');
const loadXz = async (): Promise<{ XzReadableStream: typeof XzReadableStream }> =>
  ((await import('xz-decompress')) as unknown as { default: { XzReadableStream: typeof XzReadableStream } }).default;

function decompress(compression: Compression, source: AsyncIterable<Buffer>, chunkBytes: number): AsyncIterable<Buffer> {
  switch (compression) {
    case 'gzip':
      return Readable.from(source).pipe(createGunzip({ chunkSize: chunkBytes })) as AsyncIterable<Buffer>;
    case 'bzip2':
      return bunzipBlocks(source);
    case 'xz':
      return unxz(source);
    case 'zstd':
      return unzstd(source);
  }
}

/**
 * bzip2, one block (at most ~900 kB of text) at a time. seek-bzip decodes synchronously from a
 * whole buffer, so the compressed bytes are held in memory (a tenth of the text, about); the
 * decoded text is not. Its block loop (the one Bunzip.decode runs) is run here so that each
 * block's text is handed on before the next is decoded; the stream CRC is checked as decode does.
 */
async function* bunzipBlocks(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const { default: Bunzip } = await loadBunzip();
  const parts: Buffer[] = [];
  for await (const part of source) parts.push(part);
  const input = Buffer.concat(parts);
  const output = new BlockOutput();
  const inputStream = new Bunzip.Stream();
  let position = 0;
  inputStream.readByte = () => (position < input.length ? input[position++]! : -1);
  inputStream.eof = () => position >= input.length;
  const bz = new Bunzip(inputStream, output);
  for (;;) {
    if (inputStream.eof()) return;
    if (bz._init_block()) {
      bz._read_bunzip();
      yield output.take();
      continue;
    }
    const expected = bz.reader.read(32) >>> 0;
    if (expected !== bz.streamCRC) throw new Error(`bzip2: bad stream CRC (got ${bz.streamCRC.toString(16)}, expected ${expected.toString(16)})`);
    if (inputStream.eof()) return;
    bz._start_bunzip(inputStream, output); // the next stream of a multi-stream file (pbzip2)
  }
}

/** seek-bzip's output stream: bytes gathered in a growing buffer, taken after each block. */
class BlockOutput {
  private buffer = Buffer.allocUnsafe(1 << 20);
  private length = 0;

  writeByte(byte: number): void {
    if (this.length === this.buffer.length) {
      const larger = Buffer.allocUnsafe(this.buffer.length * 2);
      this.buffer.copy(larger, 0, 0, this.length);
      this.buffer = larger;
    }
    this.buffer[this.length++] = byte;
  }

  take(): Buffer {
    const out = Buffer.from(this.buffer.subarray(0, this.length));
    this.length = 0;
    return out;
  }
}

async function* unxz(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const { XzReadableStream } = await loadXz();
  const stream = new XzReadableStream(Readable.toWeb(Readable.from(source)) as ReadableStream<Uint8Array>);
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

async function* unzstd(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const { Decompress } = await import('fzstd');
  let ready: Buffer[] = [];
  const stream: ZstdStream = new Decompress((chunk) => ready.push(Buffer.from(chunk)));
  for await (const part of source) {
    stream.push(part);
    yield* drain();
  }
  stream.push(new Uint8Array(0), true);
  yield* drain();

  function drain(): Buffer[] {
    const out = ready;
    ready = [];
    return out;
  }
}

/** The first `bytes` bytes of `source` (fewer when it is shorter) and an iterator over the rest. */
async function peek(source: AsyncIterable<Buffer>, bytes: number): Promise<{ head: Buffer; rest: AsyncIterator<Buffer> }> {
  const rest = source[Symbol.asyncIterator]();
  const parts: Buffer[] = [];
  let length = 0;
  while (length < bytes) {
    const next = await rest.next();
    if (next.done === true) break;
    parts.push(next.value);
    length += next.value.length;
  }
  return { head: Buffer.concat(parts), rest };
}

async function* prepend(head: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  for (;;) {
    const next = await rest.next();
    if (next.done === true) return;
    yield next.value;
  }
}

/**
 * The files named by `args`, in argument order; a directory's or a glob's files sorted by name.
 * An argument that names nothing stays as it is (reading it reports the error); a glob that
 * matches nothing is an error, so a typo is not an analysis of zero files.
 */
export async function expandInputs(args: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const arg of args) {
    if (arg === STDIN) {
      out.push(arg);
      continue;
    }
    const stat = await fsp.stat(arg).catch(() => null);
    if (stat?.isDirectory()) out.push(...(await filesIn(arg)));
    else if (stat !== null || !isGlob(arg)) out.push(arg);
    else {
      const matches = await expandGlob(arg);
      if (matches.length === 0) throw new Error(`no file matches ${JSON.stringify(arg)}`);
      out.push(...matches);
    }
  }
  return out;
}

async function filesIn(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => path.join(dir, e.name)).sort();
}

const GLOB_CHARS = /[*?[]/;

function isGlob(arg: string): boolean {
  return GLOB_CHARS.test(arg);
}

/** `*`, `?`, `[...]` within a path segment, `**` for any depth of directories. */
export async function expandGlob(pattern: string): Promise<string[]> {
  const absolute = path.isAbsolute(pattern);
  const segments = pattern.split(/[/\\]+/).filter((s) => s !== '');
  const found: string[] = [];
  await walk(absolute ? path.parse(pattern).root : '', segments, found);
  return [...new Set(found)].sort();
}

async function walk(base: string, segments: readonly string[], found: string[]): Promise<void> {
  const [segment, ...rest] = segments;
  if (segment === undefined) {
    const stat = await fsp.stat(base).catch(() => null);
    if (stat?.isFile()) found.push(base);
    return;
  }
  if (!isGlob(segment)) return walk(path.join(base, segment), rest, found);
  const entries = await fsp.readdir(base === '' ? '.' : base, { withFileTypes: true }).catch(() => []);
  if (segment === '**') {
    await walk(base, rest, found); // zero directories
    for (const entry of entries) {
      if (entry.isDirectory() && !entry.name.startsWith('.')) await walk(path.join(base, entry.name), segments, found);
    }
    return;
  }
  const regex = segmentRegex(segment);
  for (const entry of entries) {
    if (entry.name.startsWith('.') && !segment.startsWith('.')) continue; // as the shell does
    if (regex.test(entry.name)) await walk(path.join(base, entry.name), rest, found);
  }
}

function segmentRegex(segment: string): RegExp {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i]!;
    if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = segment.indexOf(']', i + 2);
      if (end === -1) source += '\\[';
      else {
        const body = segment.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        source += `[${body}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
