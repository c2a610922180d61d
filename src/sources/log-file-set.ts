/**
 * The files of a log directory that belong to one server: `log_filename` (a strftime pattern such
 * as `postgresql-%Y-%m-%d_%H%M%S.log`) turned into a regular expression, and the matching files in
 * the order the server wrote them (mtime, then name).
 *
 * Owns: pattern matching and ordering. Never: reading files.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import type { LogFormat } from '../parsers/framer.js';
import { identityOf, isMissing, listDirectory } from './file-identity.js';

export const DEFAULT_LOG_FILENAME = 'postgresql-%Y-%m-%d_%H%M%S.log';

export interface LogFile {
  path: string;
  name: string;
  id: string;
  sizeBytes: number;
  mtimeMs: number;
}

const ESCAPES: Record<string, string> = {
  Y: '\\d{4}', G: '\\d{4}', y: '\\d{2}', C: '\\d{2}', m: '\\d{2}', d: '\\d{2}', e: '[ \\d]\\d',
  H: '\\d{2}', I: '\\d{2}', k: '[ \\d]\\d', l: '[ \\d]\\d', M: '\\d{2}', S: '\\d{2}', j: '\\d{3}',
  U: '\\d{2}', W: '\\d{2}', V: '\\d{2}', u: '\\d', w: '\\d', s: '\\d+',
  a: '[A-Za-z]+', A: '[A-Za-z]+', b: '[A-Za-z]+', h: '[A-Za-z]+', B: '[A-Za-z]+', p: '(?:AM|PM|am|pm)',
  z: '[+-]\\d{4}', Z: '[A-Za-z0-9+-]+',
  F: '\\d{4}-\\d{2}-\\d{2}', T: '\\d{2}:\\d{2}:\\d{2}', R: '\\d{2}:\\d{2}', D: '\\d{2}/\\d{2}/\\d{2}',
  '%': '%', n: '\\n', t: '\\t',
};

/**
 * The file name PostgreSQL writes for `format`: csvlog and jsonlog replace a `.log` suffix with
 * `.csv` / `.json`, or append it when there is none (syslogger.c logfile_getname()).
 */
export function fileNameForFormat(logFilename: string, format: LogFormat): string {
  if (format === 'stderr') return logFilename;
  const suffix = format === 'csvlog' ? '.csv' : '.json';
  return logFilename.endsWith('.log') ? logFilename.slice(0, -4) + suffix : logFilename + suffix;
}

export function patternToRegExp(logFilename: string): RegExp {
  let source = '';
  for (let i = 0; i < logFilename.length; i++) {
    const char = logFilename[i]!;
    if (char === '%' && i + 1 < logFilename.length) {
      const letter = logFilename[++i]!;
      source += ESCAPES[letter] ?? '.+?';
    } else {
      source += char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    }
  }
  return new RegExp(`^${source}$`);
}

/**
 * True when sorting names sorts files by time: the escapes run from years down without gaps
 * (`%Y-%m-%d_%H%M%S`, `%Y%j`) or the name holds an epoch (`%s`). `%a` or `%H` alone repeat.
 */
export function namesSortByTime(logFilename: string): boolean {
  const letters = [...logFilename.matchAll(/%(.)/g)].map((m) => m[1]).filter((l) => l !== '%').join('');
  if (letters === 's') return true;
  return letters.length > 0 && ('YmdHMS'.startsWith(letters) || 'YjHMS'.startsWith(letters));
}

/** Matching files in write order; an absent directory gives null (not the same as empty). */
export async function listLogFiles(directory: string, pattern: RegExp): Promise<LogFile[] | null> {
  const names = await listDirectory(directory);
  if (names === null) return null;
  const files: LogFile[] = [];
  for (const name of names) {
    if (!pattern.test(name)) continue;
    const filePath = path.join(directory, name);
    try {
      const stats = await fsp.stat(filePath, { bigint: true });
      if (!stats.isFile()) continue;
      files.push({ path: filePath, name, id: identityOf(stats), sizeBytes: Number(stats.size), mtimeMs: Number(stats.mtimeMs) });
    } catch (err) {
      if (!isMissing(err)) throw err; // removed between readdir and stat: it is simply not there
    }
  }
  return files.sort(compareWriteOrder);
}

export function compareWriteOrder(a: LogFile, b: LogFile): number {
  return a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * A log link re-pointed more than once between two looks (twice while pgvigil was down, say):
 * the files it pointed to in between, oldest first. They are the siblings of the two targets
 * written after the old one and before the new one, named like both (the two names' common
 * start and extension: `postgresql-2026-12-01_1200.log` and `..._1400.log` take `..._1300.log`,
 * never a csv beside them or another server's files).
 */
export function linkTargetsBetween(previous: LogFile, next: LogFile, siblings: readonly LogFile[]): LogFile[] {
  const extension = path.extname(next.name);
  if (path.extname(previous.name) !== extension) return [];
  let shared = 0;
  while (shared < previous.name.length && previous.name[shared] === next.name[shared]) shared++;
  const stem = previous.name.slice(0, shared);
  if (stem === '') return [];
  return siblings
    .filter((f) => f.id !== previous.id && f.id !== next.id && f.name.startsWith(stem) && path.extname(f.name) === extension)
    .filter((f) => compareWriteOrder(f, previous) > 0 && compareWriteOrder(f, next) < 0)
    .sort(compareWriteOrder);
}
