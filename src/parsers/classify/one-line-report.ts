/**
 * Autovacuum reports that managed services print on one line, their sections separated by
 * commas instead of newlines, with sections PostgreSQL does not print:
 *
 *   automatic vacuum of table "db.public.t": index scans: 0, elapsed time: 0 s, index vacuum time: 0 ms,
 *   pages: 0 removed, 839 remain, 0 skipped due to pins, 0 skipped frozen 0 skipped using mintxid, tuples: ...
 *
 * Unfolded into the report PostgreSQL would print (a line per section), it reads as any report:
 * the known lines' figures are extracted and unknown sections go to unknown_lines.
 */

/**
 * `, <key>: ` where a section may start; whether it does depends on the key (PART_KEYS).
 * An index line's key is its quoted name.
 */
const SECTION = /, (index "[^"]*"|[A-Za-z][A-Za-z/ ]{0,40}?): /g;

/** Keys that follow ", " inside a line of PostgreSQL's report, not at the start of one. */
const PART_KEYS: ReadonlySet<string> = new Set([
  'oldest xmin', // PG 13/14 tuples line
  'avg write rate', // avg read rate line
  'write', // I/O timings: read: ..., write: ...
  'system', // system usage: CPU: user: ..., system: ..., elapsed: ...
  'elapsed',
]);

/** Sections run together: "0 skipped frozen 0 skipped using mintxid" is two parts of the pages line. */
const RUN_TOGETHER = /(\d+ skipped frozen) (?=\d+ )/g;

/**
 * The multi-line report a one-line report stands for; null when `message` is not one (it has
 * lines, or no section follows the header's index scans).
 */
export function unfoldOneLineReport(message: string): string | null {
  if (message.includes('\n')) return null;
  const start = message.indexOf('index scans: ');
  if (start === -1) return null;
  let unfolded = '';
  let from = 0;
  let sections = 0;
  for (const m of message.slice(start).matchAll(SECTION)) {
    if (PART_KEYS.has(m[1]!)) continue;
    const at = start + m.index;
    unfolded += `${message.slice(from, at)}\n`;
    from = at + 2;
    sections++;
  }
  if (sections === 0) return null;
  return (unfolded + message.slice(from)).replace(RUN_TOGETHER, '$1, ');
}
