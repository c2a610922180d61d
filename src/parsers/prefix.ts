/**
 * log_line_prefix compiler. Turns a server's log_line_prefix into one anchored RegExp that
 * matches a stderr line's prefix and the word after it ("LOG:  ", "DETAIL:  "), with a capture
 * group per field a LogEntry needs. Compiled once per log; the hot path is one exec per line.
 *
 * Mirrors log_status_format() in src/backend/utils/error/elog.c (13-19, pg-messages.md §7.3):
 * - escapes that need a client connection (%a %u %d %r %h %i) print nothing in background
 *   processes, so their patterns accept the empty string;
 * - %q ends the prefix in processes without a connection: everything after it is one optional
 *   group, tried without first;
 * - padding (%-10u, %10p) pads with spaces to the width and never truncates;
 * - an unknown escape prints nothing; a prefix ending in "%", "%-" or "%10" stops there.
 * Free-text values use bounded lazy patterns, so a line that almost matches (or is 100 MB long)
 * costs a bounded amount of backtracking.
 */
import { LINE_WORDS_PATTERN } from './severity.js';

export type TimestampKind = 'm' | 't' | 'n';

/** Capture-group numbers in CompiledPrefix.regex; 0 when the prefix lacks the escape. */
export interface PrefixGroups {
  /** %m/%t: the date, "YYYY-MM-DD"; %n: the whole epoch value. */
  timestamp: number;
  /** %m/%t: the time of day, "HH:MM:SS". */
  time: number;
  /** %m: the three millisecond digits. */
  millis: number;
  /** %m/%t: the zone as printed. */
  zone: number;
  pid: number;
  session: number;
  user: number;
  database: number;
  application: number;
  backendType: number;
  sqlstate: number;
  /** The word after the prefix (severity or field label); always present. */
  word: number;
}

export interface CompiledPrefix {
  readonly prefix: string;
  /** Use execPrefix, which tries it only on a line that holds a line word. */
  readonly regex: RegExp;
  /** A line word anywhere in the line: without one the prefix cannot match (linear, no backtracking). */
  readonly wordSearch: RegExp;
  readonly groups: Readonly<PrefixGroups>;
  /** Which escape gives the entry time: %m, %t or %n (the first one in the prefix). */
  readonly timestampKind: TimestampKind | null;
  /** Where the pid comes from: %p, or the pid half of the session id %c; null: nowhere. */
  readonly pidFrom: 'p' | 'c' | null;
}

type CapturedField = Exclude<keyof PrefixGroups, 'word'>;

interface Escape {
  pattern: string;
  field?: CapturedField;
  /** The pattern with capture groups when it fills several fields (the timestamps). */
  captured?: { pattern: string; fields: CapturedField[] };
  /** Free text: a value right after a literal "@" excludes "@" (users are often "a@b.com"). */
  text?: boolean;
}

// Timestamps are captured in parts so the per-second cache of TimestampParser compares strings
// the regex already cut, instead of cutting them again. Date and time apart: a capture of 13
// characters or more is a slice of the line, and comparing slices takes a runtime call in V8;
// shorter captures are copies, compared inline.
const DATE = '\\d{4}-\\d\\d-\\d\\d';
const TIME = '\\d\\d:\\d\\d:\\d\\d';
const DATE_TIME = `${DATE} ${TIME}`;
const ZONE = '[A-Za-z0-9+-]{1,10}';
const TS_SECONDS = `${DATE_TIME} ${ZONE}`;
const TS_MILLIS = `${DATE_TIME}\\.\\d{3} ${ZONE}`;

const ESCAPES: Readonly<Record<string, Escape>> = {
  a: { pattern: '{0,256}?', field: 'application', text: true }, // 16+ may hex-escape non-ASCII (4x)
  u: { pattern: '{0,128}?', field: 'user', text: true },
  d: { pattern: '{0,128}?', field: 'database', text: true },
  // host(port), or host alone for a Unix socket ("[local]"); the host is at most NI_MAXHOST. The
  // port in parentheses ends an IPv6 host that a ":" separator would otherwise cut.
  r: { pattern: '[^ ()]{1,1025}\\(\\d{1,5}\\)|[^ ]{0,1025}?' },
  h: { pattern: '[^ ]{0,1025}?' },
  L: { pattern: '[^ ]{0,64}?' }, // PG 18+: local address, "[none]" without a connection
  b: { pattern: '{0,96}?', field: 'backendType', text: true }, // bgw_type is up to BGW_MAXLEN
  p: { pattern: '\\d{1,10}', field: 'pid' },
  P: { pattern: '\\d{0,10}' }, // PG 14+: parallel leader pid, empty outside parallel workers
  t: { pattern: TS_SECONDS, field: 'timestamp', captured: { pattern: `(${DATE}) (${TIME}) (${ZONE})`, fields: ['timestamp', 'time', 'zone'] } },
  m: {
    pattern: TS_MILLIS, field: 'timestamp',
    captured: { pattern: `(${DATE}) (${TIME})\\.(\\d{3}) (${ZONE})`, fields: ['timestamp', 'time', 'millis', 'zone'] },
  },
  n: { pattern: '\\d{1,12}\\.\\d{3}', field: 'timestamp' },
  s: { pattern: TS_SECONDS },
  i: { pattern: '{0,256}?', text: true },
  e: { pattern: '[0-9A-Z]{5}', field: 'sqlstate' },
  c: { pattern: '[0-9a-f]{1,16}\\.[0-9a-f]{1,8}', field: 'session' },
  l: { pattern: '\\d{1,20}' },
  v: { pattern: '(?:-?\\d{1,10}/\\d{1,10})?' },
  x: { pattern: '\\d{1,10}' },
  Q: { pattern: '-?\\d{1,20}' }, // PG 14+
};

/**
 * `lineWords`: the whole tokens a translated server writes after the prefix (`FEHLER:  `,
 * `CONTEXTE :  `, English ones included, see lang/translator.ts); the word group then captures the
 * token, colon and spaces included. Without it, the English words and ":  ".
 */
export function compilePrefix(prefix: string, lineWords?: readonly string[]): CompiledPrefix {
  const groups: PrefixGroups = {
    timestamp: 0, time: 0, millis: 0, zone: 0, pid: 0, session: 0, user: 0, database: 0, application: 0, backendType: 0, sqlstate: 0, word: 0,
  };
  let timestampKind: TimestampKind | null = null;
  let source = '^';
  let groupCount = 0;
  let optionalOpen = false;
  let previousLiteral = '';

  for (let i = 0; i < prefix.length; i++) {
    const ch = prefix.charAt(i);
    if (ch !== '%') {
      source += escapeRegExp(ch);
      previousLiteral = ch;
      continue;
    }
    i++;
    if (i >= prefix.length) break;
    let letter = prefix.charAt(i);
    if (letter === '%') {
      source += '%';
      previousLiteral = '%';
      continue;
    }
    let padding = 0;
    if (letter <= '9') {
      const parsed = parsePadding(prefix, i);
      if (parsed === null) break; // the server stops at a prefix that ends inside the padding
      padding = parsed.padding;
      i = parsed.letterAt;
      letter = prefix.charAt(i);
    }
    if (letter === 'q') {
      if (!optionalOpen) source += '(?:';
      optionalOpen = true;
      continue;
    }
    const escape = ESCAPES[letter];
    if (escape === undefined) continue; // the server prints nothing for an unknown escape
    let pattern = escape.pattern;
    if (escape.text === true) pattern = (previousLiteral === '@' ? '[^@]' : '.') + pattern;
    let value = `(?:${pattern})`;
    if (escape.field !== undefined && groups[escape.field] === 0) {
      const captured = escape.captured ?? { pattern: `(${pattern})`, fields: [escape.field] };
      for (const field of captured.fields) groups[field] = ++groupCount;
      if (escape.field === 'timestamp') timestampKind = letter as TimestampKind;
      value = captured.pattern;
    }
    if (padding > 0) source += ` {0,${padding}}${value}`;
    else if (padding < 0) source += `${value} {0,${-padding}}`;
    else source += value;
    previousLiteral = '';
  }
  // Lazy: tried without the group first. A background process prints nothing after %q, and a
  // greedy group would take its message for a session's fields when the message holds an "@" and,
  // further on, a line word ("... to ops@example.com LOG:  ..."). A session's line cannot match
  // without the group: its user@db stands where the line word would have to be.
  if (optionalOpen) source += ')??';
  groupCount++;
  groups.word = groupCount;
  const words = lineWords === undefined ? `(?:${LINE_WORDS_PATTERN}):  ` : `(?:${alternation(lineWords)})`;
  source += lineWords === undefined ? `(${LINE_WORDS_PATTERN}):  ` : `(${alternation(lineWords)})`;

  return {
    prefix,
    regex: new RegExp(source),
    wordSearch: new RegExp(words),
    groups,
    timestampKind,
    pidFrom: groups.pid !== 0 ? 'p' : groups.session !== 0 ? 'c' : null,
  };
}

/** The pid inside a session id "%lx.%x" (start time hex "." pid hex); null if malformed. */
export function pidFromSessionId(sessionId: string): number | null {
  const dot = sessionId.indexOf('.');
  if (dot < 0) return null;
  const pid = Number.parseInt(sessionId.slice(dot + 1), 16);
  return Number.isNaN(pid) ? null : pid;
}

/** process_log_prefix_padding(): optional "-", digits, then the escape letter. */
function parsePadding(prefix: string, start: number): { padding: number; letterAt: number } | null {
  let i = start;
  let sign = 1;
  if (prefix.charAt(i) === '-') {
    sign = -1;
    i++;
  }
  let width = 0;
  while (i < prefix.length && prefix.charAt(i) >= '0' && prefix.charAt(i) <= '9') {
    width = width * 10 + (prefix.charCodeAt(i) - 48);
    i++;
  }
  if (i >= prefix.length) return null;
  return { padding: sign * width, letterAt: i };
}

/** Longest first, so a token that begins another (`LOG:  ` / `LOGG:  `) never shadows it. */
function alternation(words: readonly string[]): string {
  return [...words].sort((a, b) => b.length - a.length).map((word) => word.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&')).join('|');
}

function escapeRegExp(ch: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(ch) ? `\\${ch}` : ch;
}

/**
 * The prefix regex's match of `line`, or null. Padded and free-text escapes make the regex try
 * many ways to cut a line before it fails (bounded, but up to seconds for `%-20u|%20d|%b|%a:` on
 * a line of "| | | ..."): a line without any line word, which no cut can match (garbage, a
 * message's stray continuation), is refused first by a scan that does not backtrack. The scan
 * reads the whole line: for a test at many positions of one text, use the anchored regex alone.
 */
export function execPrefix(prefix: CompiledPrefix, line: string): RegExpExecArray | null {
  return prefix.wordSearch.test(line) ? prefix.regex.exec(line) : null;
}
