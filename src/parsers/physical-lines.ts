/**
 * Text held in memory as the physical lines the line reader would produce (byte offsets, 1-based
 * line numbers), and fed through a framer or a pipeline: for unit tests, golden tests of real server logs and
 * callers that already hold a whole log in a string. The daemon reads files with
 * src/sources/line-reader.ts instead.
 */
import type { PhysicalLine } from './framer.js';

/** A Framer or a LogPipeline: anything fed line by line that returns what each line finished. */
export interface LineFed<T> {
  push(line: PhysicalLine): T[];
  flush(): T[];
}

/** Lines of `text` (split on "\n", a final empty line dropped) with their byte offsets. */
export function physicalLines(text: string): PhysicalLine[] {
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  let offset = 0;
  return parts.map((part, index) => {
    const line = { text: part, offset, line: index + 1 };
    offset += Buffer.byteLength(part) + 1;
    return line;
  });
}

/**
 * Pushes every line of `text` into a framer or pipeline, then flushes; returns everything it
 * returned, in order (entries, or events).
 */
export function feedAll<T>(sink: LineFed<T>, text: string): T[] {
  const out: T[] = [];
  for (const line of physicalLines(text)) out.push(...sink.push(line));
  out.push(...sink.flush());
  return out;
}
