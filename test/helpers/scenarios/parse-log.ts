/**
 * Runs one log file through the real pipeline (line reader with byte offsets -> framing ->
 * classification), as `pgvigil analyze` does, and returns its events and framing counts.
 */
import path from 'node:path';
import type { AnyLogEvent } from '../../../src/domain/index.js';
import { createLogPipeline, type LogPipeline } from '../../../src/parsers/log-pipeline.js';
import type { Translator } from '../../../src/parsers/lang/translator.js';
import { readLines } from '../../../src/sources/offline-reader.js';
import type { LogFormat } from './scenario-log.js';

export interface ParseOptions {
  format: LogFormat;
  /** log_line_prefix (stderr). */
  prefix: string;
  timezone: string;
  target?: string;
  /** The log's language when the server's lc_messages is not English. */
  translator?: Translator | null;
}

export interface ParsedLog {
  events: AnyLogEvent[];
  stats: LogPipeline['stats'];
}

export async function parseLogFile(file: string, options: ParseOptions): Promise<ParsedLog> {
  const pipeline = createLogPipeline({
    target: options.target ?? 'fixture',
    format: options.format,
    prefix: options.prefix,
    timezone: options.timezone,
    file,
    translator: options.translator ?? null,
  });
  const events: AnyLogEvent[] = [];
  await readLines(file, (line) => {
    for (const event of pipeline.push(line)) events.push(event);
  });
  events.push(...pipeline.flush());
  return { events, stats: pipeline.stats };
}

/** One event per line, with source.file relative to `baseDir` so goldens do not depend on the checkout path. */
export function eventsToNdjson(events: readonly AnyLogEvent[], baseDir: string): string {
  return events
    .map((event) => JSON.stringify({ ...event, source: { ...event.source, file: path.relative(baseDir, event.source.file) } }))
    .map((line) => `${line}\n`)
    .join('');
}
