/**
 * Guesses a log's format from its first lines, for offline files and `format: auto`: jsonlog,
 * csvlog, or stderr with one of the common log_line_prefix settings, optionally behind a syslog
 * header. A prefix outside the list is not guessed: the operator passes it (or pgvigil reads it
 * from the server).
 *
 * Each candidate scores the lines it recognises (an entry start, or a line that continues one);
 * the best score wins, and earlier candidates win ties (the list runs from specific to general).
 */
import type { Envelope } from './formats/input-format.js';
import type { LogFormat } from './framer.js';
import { compilePrefix, execPrefix, type CompiledPrefix } from './prefix.js';
import { SyslogHeaderParser } from './syslog-header.js';
import { TimestampParser } from './timestamp.js';

export interface DetectedFormat {
  format: LogFormat;
  /** log_line_prefix, for stderr. */
  prefix?: string;
  /** stderr lines carry a syslog header. */
  syslog?: boolean;
  /** The envelope the lines came in (formats/input-format.ts); absent for PostgreSQL's own files. */
  envelope?: Envelope;
}

export interface DetectOptions {
  /** No more lines will come: answer with the best candidate even on little evidence. */
  final: boolean;
  /** The log_line_prefix the operator gave: the only stderr candidate (with and without a syslog header). */
  prefix?: string;
  /**
   * The tokens after the prefix when the log may be translated (lang/detect-language.ts): the
   * severity words and labels of every known language, English included.
   */
  lineWords?: readonly string[];
}

/** Common settings, specific before general (a prefix with %q also reads lines without it). */
export const COMMON_PREFIXES: readonly string[] = [
  // pgvigil's recommendation: Debian's with the SQLSTATE. Before it, since Debian's reads a %e
  // line too, the code taken into the database name (%d matches lazily up to the level); a sample
  // with no session's line reads the same under both.
  '%m [%p] %q%u@%d %e ',
  '%m [%p] %q%u@%d ', // Debian/Ubuntu packages
  '%m [%p] %q[user=%u,db=%d,app=%a] ',
  '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ', // pgBadger's recommendation
  '%m [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ',
  '%t [%p]: user=%u,db=%d,app=%a,client=%h ',
  '%t [%p]: [%l-1] user=%u,db=%d ',
  '%t [%p-%l] %q%u@%d ',
  '%t:%r:%u@%d:[%p]:', // Amazon RDS
  '%m [%p]: [%l-1] db=%d,user=%u ', // Google Cloud SQL, AlloyDB
  '%t [%p] %q%u@%d ',
  '%m [%p] ', // PostgreSQL's default since 10
  '%t [%p] ',
  '',
];

/** What servers logging to syslog usually set (the header already has time and pid). */
const SYSLOG_PREFIXES: readonly string[] = [
  'user=%u,db=%d,app=%a,client=%h ', // pgBadger's recommendation for syslog
  '%m [%p] %q%u@%d ',
  '%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ',
  // pgBadger's syslog form without the time (the header has it), fields as Dalibo writes them:
  // seen in a real rsyslog capture (test/fixtures/formats/captured-rsyslog-pgtoolkit-autovacuum).
  '[%p]: [%l-1] db=%d,user=%u,app=%a,client=%h ',
  '%m [%p] ',
  '%q%u@%d ',
  ' sql_error_code = %e ', // Heroku Postgres (logplex drains)
  '',
];

const MIN_LINES = 20;
const MIN_SHARE = 0.9;
/** With no more lines to come, a candidate that reads half of them beats saying nothing. */
const MIN_SHARE_FINAL = 0.5;
const CSV_RECORD_START = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} [A-Za-z0-9+-]{1,10},/;

let compiledStderr: CompiledPrefix[] | null = null;
let compiledSyslog: CompiledPrefix[] | null = null;
/** The prefixes compiled with translated words, per word list (one list per process in practice). */
const compiledWithWords = new WeakMap<readonly string[], { stderr: CompiledPrefix[]; syslog: CompiledPrefix[] }>();

function compiledPrefixes(lineWords: readonly string[] | undefined): { stderr: CompiledPrefix[]; syslog: CompiledPrefix[] } {
  if (lineWords === undefined) {
    compiledStderr ??= COMMON_PREFIXES.map((prefix) => compilePrefix(prefix));
    compiledSyslog ??= SYSLOG_PREFIXES.map((prefix) => compilePrefix(prefix));
    return { stderr: compiledStderr, syslog: compiledSyslog };
  }
  let compiled = compiledWithWords.get(lineWords);
  if (compiled === undefined) {
    compiled = {
      stderr: COMMON_PREFIXES.map((prefix) => compilePrefix(prefix, lineWords)),
      syslog: SYSLOG_PREFIXES.map((prefix) => compilePrefix(prefix, lineWords)),
    };
    compiledWithWords.set(lineWords, compiled);
  }
  return compiled;
}

/**
 * The format of the log whose first lines are `lines`; null when the lines do not tell yet (not
 * final) or at all (final).
 */
export function detectFormat(lines: readonly string[], options: DetectOptions): DetectedFormat | null {
  const sample = lines.filter((line) => line.length > 0);
  if (sample.length === 0) return null;
  const compiled = compiledPrefixes(options.lineWords);
  const given = options.prefix === undefined ? null : [compilePrefix(options.prefix, options.lineWords)];

  let best: { found: DetectedFormat; score: number } = { found: { format: 'stderr' }, score: 0 };
  const consider = (found: DetectedFormat, score: number): void => {
    if (score > best.score) best = { found, score };
  };
  consider({ format: 'jsonlog' }, scoreJsonlog(sample));
  consider({ format: 'csvlog' }, scoreCsvlog(sample));
  for (const prefix of given ?? compiled.stderr) consider({ format: 'stderr', prefix: prefix.prefix }, scoreStderr(sample, prefix, false));
  for (const prefix of given ?? compiled.syslog) {
    consider({ format: 'stderr', prefix: prefix.prefix, syslog: true }, scoreStderr(sample, prefix, true));
  }

  if (options.final) return best.score >= MIN_SHARE_FINAL * sample.length ? best.found : null;
  const enough = sample.length >= MIN_LINES && best.score >= MIN_SHARE * sample.length;
  return enough ? best.found : null;
}

function scoreJsonlog(sample: readonly string[]): number {
  let score = 0;
  for (const line of sample) {
    if (line.charCodeAt(0) !== 123 /* { */) continue;
    try {
      const value: unknown = JSON.parse(line);
      if (typeof value === 'object' && value !== null && 'timestamp' in value && 'error_severity' in value) score++;
    } catch {
      // not JSON: not recognised
    }
  }
  return score;
}

/** Record starts, and the lines inside a record's quoted newlines. */
function scoreCsvlog(sample: readonly string[]): number {
  let score = 0;
  let insideQuotes = false;
  for (const line of sample) {
    if (insideQuotes || CSV_RECORD_START.test(line)) score++;
    else continue;
    if ((line.split('"').length - 1) % 2 === 1) insideQuotes = !insideQuotes;
  }
  return score;
}

/** Lines the prefix matches, and continuation lines after a matched line. */
function scoreStderr(sample: readonly string[], prefix: CompiledPrefix, syslog: boolean): number {
  const header = syslog ? new SyslogHeaderParser(new TimestampParser(), Date.now) : null;
  let score = 0;
  let afterMatch = false;
  for (const line of sample) {
    let body = line;
    if (header !== null) {
      const parsed = header.parse(line);
      if (parsed === null) {
        afterMatch = false;
        continue;
      }
      body = line.slice(parsed.bodyStart);
    }
    const continuation = body.charCodeAt(0) === 9 || (syslog && body.startsWith('#011'));
    if (continuation ? afterMatch : execPrefix(prefix, body) !== null) {
      score++;
      afterMatch = true;
    } else {
      afterMatch = false;
    }
  }
  return score;
}
