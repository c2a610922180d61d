/**
 * What `pgvigil analyze` learns from the first lines of a file, read once: the format, the
 * language (with its catalog majors), the first timestamp (files are read in that order) and the
 * first line that is not blank (for the "nothing understood" message). Ordering, the parallel
 * plan and the workers' translators all take it from here instead of reading the head again.
 *
 * The head is the lines a single-threaded run detects from (SourceParser: up to 200 lines), so
 * the format and language found are the ones it finds.
 *
 * Owns: reading the head and what it tells. Never: parsing the rest of the file.
 */
import type { DetectedFormat } from '../parsers/detect-format.js';
import { STDIN } from '../sources/log-inputs.js';
import { readHeadLines } from '../sources/offline-reader.js';
import { SourceParser, type LogTranslation, type ParserLog, type ParserSettings } from '../sources/source-parser.js';

export interface FileHead {
  format: DetectedFormat;
  /** Null for English. */
  translation: LogTranslation | null;
  /** Earliest timestamp among the head's events; null when none has one. */
  firstTsMs: number | null;
  firstLine: string | null;
}

/** A file's head, or why it could not be read (reported when the file is read for real). */
export type HeadOrError = FileHead | { error: string };

export async function readFileHead(file: string, settings: ParserSettings, log: ParserLog): Promise<FileHead> {
  const head = await readHeadLines(file, Infinity);
  const parser = new SourceParser(settings, log);
  parser.openFile(file);
  let firstTsMs: number | null = null;
  const seen = (events: ReturnType<SourceParser['push']>): void => {
    for (const e of events) if (firstTsMs === null || e.tsMs < firstTsMs) firstTsMs = e.tsMs;
  };
  for (const line of head) seen(parser.push(line));
  seen(parser.flush());
  return {
    format: parser.format!,
    translation: parser.translation,
    firstTsMs,
    firstLine: head.find((line) => line.text.trim() !== '')?.text ?? null,
  };
}

/** The heads of `files` (standard input is read once, when its turn comes: never here). One file at a time: a thousand rotated files must not mean a thousand open descriptors. */
export async function readFileHeads(files: readonly string[], settings: ParserSettings, log: ParserLog): Promise<Map<string, HeadOrError>> {
  const heads = new Map<string, HeadOrError>();
  for (const file of files) {
    if (file === STDIN) continue;
    try {
      heads.set(file, await readFileHead(file, settings, log));
    } catch (err) {
      heads.set(file, { error: (err as Error).message });
    }
  }
  return heads;
}
