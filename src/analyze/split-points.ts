/**
 * Where `pgvigil analyze -j N` cuts a plain log file into ranges for its workers: at the first
 * line that begins an entry after each split point, so that a range never starts inside a
 * multi-line entry or a csv record (range-parser.ts checks that the previous range's entries are
 * finished there, and reads on when they are not).
 *
 * Owns: which lines may start a range, and finding them. Never: parsing entries.
 */
import { promises as fsp } from 'node:fs';
import type { DetectedFormat } from '../parsers/detect-format.js';
import { CSV_RECORD_START } from '../parsers/frame-csvlog.js';
import { DEFAULT_PREFIX } from '../parsers/log-pipeline.js';
import { compilePrefix, execPrefix } from '../parsers/prefix.js';
import { levelOf } from '../parsers/severity.js';

/** Tells whether a line begins an entry; null when the format cannot be cut (one range). */
export function entryStartTest(format: DetectedFormat): ((line: string) => boolean) | null {
  switch (format.format) {
    case 'stderr': {
      // A syslog header splits long lines into chunks of its own numbering: left whole.
      if (format.syslog) return null;
      const prefix = compilePrefix(format.prefix ?? DEFAULT_PREFIX);
      // A prefixed DETAIL/STATEMENT/... line belongs to an entry before it: only a severity starts one.
      return (line) => {
        const m = execPrefix(prefix, line);
        return m !== null && levelOf(m[prefix.groups.word] as string) !== null;
      };
    }
    case 'csvlog':
      return (line) => CSV_RECORD_START.test(line);
    case 'jsonlog':
      return (line) => line.charCodeAt(0) === 123; // {
  }
}

/**
 * Offset of the first line in `bytes` that starts after its first newline and begins an entry;
 * null when none does. `bytes` starts one byte before a split point, so a line starting right at
 * the split point counts.
 */
export function firstEntryStart(bytes: Buffer, isEntryStart: (line: string) => boolean): number | null {
  let newline = bytes.indexOf(0x0a);
  while (newline !== -1) {
    const start = newline + 1;
    newline = bytes.indexOf(0x0a, start);
    if (newline === -1) return null; // a line cut by the window: the caller reads on
    if (isEntryStart(bytes.toString('utf8', start, newline))) return start;
  }
  return null;
}

const WINDOW_BYTES = 256 * 1024;

/**
 * Start offsets of the ranges of a file of `sizeBytes` cut about every `rangeBytes`: 0 first,
 * then the first entry start at or after each split point; a split point with none before the
 * next one is dropped.
 */
export async function rangeStarts(path: string, sizeBytes: number, rangeBytes: number, isEntryStart: (line: string) => boolean): Promise<number[]> {
  const starts = [0];
  const handle = await fsp.open(path, 'r');
  try {
    const window = Buffer.allocUnsafe(WINDOW_BYTES);
    for (let split = rangeBytes; split < sizeBytes; split += rangeBytes) {
      const found = await firstStartFrom(handle, window, split, Math.min(split + rangeBytes, sizeBytes), isEntryStart);
      if (found !== null && found > starts[starts.length - 1]!) starts.push(found);
    }
  } finally {
    await handle.close();
  }
  return starts;
}

async function firstStartFrom(handle: fsp.FileHandle, window: Buffer, split: number, limit: number, isEntryStart: (line: string) => boolean): Promise<number | null> {
  // Windows overlap by their last line, which may have been cut.
  for (let from = split - 1; from < limit;) {
    const { bytesRead } = await handle.read(window, 0, window.length, from);
    if (bytesRead === 0) return null;
    const bytes = window.subarray(0, bytesRead);
    const found = firstEntryStart(bytes, isEntryStart);
    if (found !== null) return from + found < limit ? from + found : null;
    const lastNewline = bytes.lastIndexOf(0x0a);
    if (bytesRead < window.length) return null;
    // A line longer than the window: skip to its end.
    from = lastNewline > 0 ? from + lastNewline : from + bytesRead;
  }
  return null;
}
