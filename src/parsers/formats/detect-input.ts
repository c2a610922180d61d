/**
 * Format detection with envelopes: a log's first lines say whether PostgreSQL's lines came
 * wrapped (CloudNativePG JSON, a Cloud Logging export, a logplex drain) or joined by a relay;
 * the PostgreSQL lines inside are then detected as a plain file's are (detect-format.ts).
 *
 * An envelope named with --format is not guessed, only what is inside it; with --prefix too,
 * nothing is.
 */
import { detectFormat, type DetectedFormat, type DetectOptions } from '../detect-format.js';
import type { LogFormat } from '../framer.js';
import { compilePrefix } from '../prefix.js';
import { SyslogHeaderParser } from '../syslog-header.js';
import { TimestampParser } from '../timestamp.js';
import { isCnpgManagerLine } from './cnpg.js';
import { cloudLogEntry, openCloudLoggingFirstLines } from './cloud-logging.js';
import type { OpenEnvelope } from './envelope-framer.js';
import type { Envelope } from './input-format.js';
import { hasJoint, type StartsLine } from './joined-lines.js';
import { openLogplex } from './logplex.js';

export interface DetectInputOptions extends DetectOptions {
  /** The format named with --format; absent for auto. */
  named?: { format: LogFormat; envelope?: Envelope };
}

/** Same thresholds as detect-format.ts: enough lines and a clear share, or the end of input. */
const MIN_LINES = 20;
const MIN_SHARE = 0.9;
const MIN_SHARE_FINAL = 0.5;
/** A line of a logplex drain, whatever the dyno (app[web.1], heroku[router], app[postgres.N]). */
const DRAIN_LINE = /^\d{4}-\d\d-\d\dT\S+ +(?:\S+ +)?[a-z][\w-]*\[[^\]]{1,64}\]:? /;

/** The format of the log whose first lines are `lines`; null when they do not tell (yet). */
export function detectInput(lines: readonly string[], options: DetectInputOptions): DetectedFormat | null {
  const named = options.named;
  if (named !== undefined) return named.envelope === undefined ? { format: named.format, prefix: options.prefix } : detectInside(named.envelope, lines, options);
  const sample = lines.filter((line) => line.length > 0);
  if (sample.length === 0) return null;
  const clear = (count: number): boolean => (options.final ? count >= MIN_SHARE_FINAL * sample.length
    : sample.length >= MIN_LINES && count >= MIN_SHARE * sample.length);

  if (clear(count(sample, isCnpgManagerLine))) return { format: 'jsonlog', envelope: 'cnpg' };
  if (clear(count(sample, (line) => cloudLogEntry(line) !== null))) return detectInside('cloud_logging', sample, options);
  if (clear(count(sample, (line) => DRAIN_LINE.test(line))) && count(sample, (line) => openLogplex(line) !== null) > 0) {
    return detectInside('logplex', sample, options);
  }
  const plain = detectFormat(sample, options);
  if (plain === null || plain.format !== 'stderr' || plain.prefix === undefined) return plain;
  return sample.some(jointTest(plain.prefix, plain.syslog === true)) ? { ...plain, envelope: 'joined' } : plain;
}

/** The format of the PostgreSQL lines inside `envelope`. */
function detectInside(envelope: Envelope, lines: readonly string[], options: DetectOptions): DetectedFormat | null {
  if (envelope === 'cnpg') return { format: 'jsonlog', envelope };
  if (options.prefix !== undefined) return { format: 'stderr', prefix: options.prefix, syslog: envelope === 'logplex', envelope };
  const inner = envelope === 'joined' ? lines : opened(lines, envelope === 'logplex' ? openLogplex : openCloudLoggingFirstLines);
  const found = detectFormat(inner, options);
  return found === null ? null : { ...found, envelope };
}

function opened(lines: readonly string[], open: OpenEnvelope): string[] {
  const out: string[] = [];
  for (const line of lines) out.push(...(open(line) ?? []));
  return out;
}

function count(lines: readonly string[], test: (line: string) => boolean): number {
  let n = 0;
  for (const line of lines) if (test(line)) n++;
  return n;
}

/** Whether a line (syslog header and all) holds a relay's joint. */
function jointTest(prefix: string, syslog: boolean): (line: string) => boolean {
  const startsLine = startsLineOf(prefix);
  const header = syslog ? new SyslogHeaderParser(new TimestampParser(), Date.now) : null;
  return (line) => {
    const start = header === null ? 0 : (header.parse(line)?.bodyStart ?? -1);
    if (start < 0) return false;
    const body = line.slice(start);
    return startsLine(body) && hasJoint(body, startsLine);
  };
}

/** Whether a text starts with the prefix and a severity or field label. */
export function startsLineOf(prefix: string): StartsLine {
  const regex = compilePrefix(prefix).regex;
  return (text) => regex.test(text);
}
