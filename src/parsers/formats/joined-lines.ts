/**
 * Undoing what relays do to a multi-line stderr entry (an autovacuum report, an ERROR with its
 * DETAIL and STATEMENT) when they carry it as one physical line:
 *
 * - rsyslog escapes control characters as `#` and three octal digits: the newline is `#012`,
 *   the TAB that starts a continuation line `#011` ("... index scans: 0#012#011pages: ...");
 * - some shippers write the newline as a literal backslash-n, the TAB kept or written `\t`;
 * - others replace each newline with a TAB ("... index scans: 0\t\tpages: ...") or drop it and
 *   keep the continuation's own TAB ("... index scans: 0\tpages: ...").
 *
 * The pieces are the physical lines the server wrote, so the stderr framer reads them as it
 * reads an unjoined log and every field comes out the same.
 */

/** Tells whether a text starts a line of its own (the log_line_prefix matches it). */
export type StartsLine = (text: string) => boolean;

const RSYSLOG_ESCAPE = /#([0-3][0-7]{2})/g;
/** Continuation lines that report entries (autovacuum, autoanalyze, checkpoints) start with. */
const REPORT_LINE = /^(?:pages|tuples|tuples missed|removable cutoff|new rel(?:frozenxid|minmxid)|frozen|visibility map|index scan [a-z ]+|index "[^"]*"|parallel workers|memory usage|delay time|I\/O timings|avg read rate|buffer usage|WAL usage|system usage): /;

/** The physical lines `body` was joined from (itself alone when it holds no joint). */
export function splitJoinedLine(body: string, startsLine: StartsLine): string[] {
  if (body.includes('#012')) return unescapeRsyslog(body).split('\n');
  if (body.includes('\\n')) return splitLiteralNewlines(body, startsLine);
  if (body.includes('\t')) return splitTabs(body, startsLine);
  return [body];
}

/** Whether `body` carries a joint this module would split (format detection). */
export function hasJoint(body: string, startsLine: StartsLine): boolean {
  if (body.includes('#012')) return true;
  if (body.includes('\\n') && splitLiteralNewlines(body, startsLine).length > 1) return true;
  // A TAB at the start is a continuation line's own, not a joint.
  for (let at = body.indexOf('\t', leadingTabs(body)); at >= 0; at = body.indexOf('\t', at + 1)) {
    while (body.charCodeAt(at + 1) === 9) at++;
    const rest = body.slice(at + 1);
    if (REPORT_LINE.test(rest) || startsLine(rest)) return true;
  }
  return false;
}

/** rsyslog writes control characters (0-31, 127) as #ooo; other #ddd text is left alone. */
function unescapeRsyslog(text: string): string {
  return text.replace(RSYSLOG_ESCAPE, (whole: string, octal: string) => {
    const code = parseInt(octal, 8);
    return code < 32 || code === 127 ? String.fromCharCode(code) : whole;
  });
}

/** Splits at a literal `\n` that a continuation (TAB or `\t`) or a new prefixed line follows. */
function splitLiteralNewlines(body: string, startsLine: StartsLine): string[] {
  const lines: string[] = [];
  let from = 0;
  for (let at = body.indexOf('\\n'); at >= 0; at = body.indexOf('\\n', at + 2)) {
    const next = at + 2;
    if (!(body.startsWith('\t', next) || body.startsWith('\\t', next) || startsLine(body.slice(next)))) continue;
    lines.push(body.slice(from, at));
    from = next;
  }
  lines.push(body.slice(from));
  // A continuation written `\t` starts with the TAB it stood for.
  return lines.map((line, i) => (i > 0 && line.startsWith('\\t') ? `\t${line.slice(2)}` : line));
}

/**
 * Splits at each run of TABs: a prefixed line after it was a line of its own; anything else
 * continues the entry, as a line that starts with one TAB fewer than the run (newline -> TAB) or
 * with the run's one TAB (the newline dropped).
 */
function splitTabs(body: string, startsLine: StartsLine): string[] {
  const lines: string[] = [];
  let lineStart = 0;
  let at = body.indexOf('\t', leadingTabs(body));
  while (at >= 0) {
    let end = at;
    while (body.charCodeAt(end) === 9) end++;
    const rest = body.slice(end);
    lines.push(body.slice(lineStart, at));
    if (startsLine(rest)) lineStart = end;
    else lineStart = end - Math.max(1, end - at - 1); // keep the continuation's TABs
    at = body.indexOf('\t', end);
  }
  lines.push(body.slice(lineStart));
  return lines;
}

function leadingTabs(text: string): number {
  let n = 0;
  while (text.charCodeAt(n) === 9) n++;
  return n;
}
