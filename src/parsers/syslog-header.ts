/**
 * The header a syslog daemon writes before each message PostgreSQL sends with
 * log_destination = 'syslog':
 *
 *   Oct 14 03:12:45 db1 postgres[41235]: [3-1] <log_line_prefix>LOG:  ...      (RFC 3164, rsyslog default)
 *   2026-10-14T03:12:45.123456+00:00 db1 postgres[41235]: [3-2] #011pages: ... (RFC 3339 timestamps)
 *
 * write_syslog() (elog.c, 13-19) sends every line of a message, and every 900-byte piece of a
 * long line, as its own syslog message tagged "[seq-chunk]" ("[seq]" when the message was one
 * short line; no tag with syslog_sequence_numbers = off). rsyslog writes the TAB that starts a
 * continuation line as "#011".
 */
import type { TimestampParser } from './timestamp.js';

export interface SyslogHeader {
  pid: number;
  /** Chunk number within the message (1 when untagged or "[seq]"). */
  chunk: number;
  /** Where the PostgreSQL text starts in the line. */
  bodyStart: number;
}

const HEADER =
  /^(?:([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d)|(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:?\d\d))) [^ ]{1,255} [^ [\]]{1,64}\[(\d{1,10})\]: (?:\[\d{1,20}(?:-(\d{1,10}))?\] )?/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const TWO_DAYS_MS = 2 * 86_400_000;

export class SyslogHeaderParser {
  private match: RegExpExecArray | null = null;

  /**
   * @param timestamps reads RFC 3164 times (no year, no zone) in the server's log_timezone
   * @param nowMs RFC 3164 has no year: the year is the one that puts the time at most two days
   *   after now
   */
  constructor(
    private readonly timestamps: TimestampParser,
    private readonly nowMs: () => number,
  ) {}

  /** Parses the header of `text`; null when the line has none. */
  parse(text: string): SyslogHeader | null {
    const m = HEADER.exec(text);
    this.match = m;
    if (m === null) return null;
    return { pid: Number(m[7]), chunk: m[8] === undefined ? 1 : Number(m[8]), bodyStart: m[0].length };
  }

  /** Epoch ms of the header parsed last; NaN when invalid (the parser's `failure` says why). */
  timeOfLast(): number {
    const m = this.match;
    if (m === null) return Number.NaN;
    if (m[6] !== undefined) return parseRfc3339(m[6]);
    const month = MONTHS.indexOf(m[1] ?? '') + 1;
    const day = Number((m[2] ?? '').trim());
    const hour = Number(m[3]);
    const minute = Number(m[4]);
    const second = Number(m[5]);
    if (month === 0 || hour > 23 || minute > 59 || second > 59) return Number.NaN;
    const now = this.nowMs();
    const year = new Date(now).getUTCFullYear();
    const thisYear = this.timestamps.localToEpochMs(year, month, day, hour, minute, second);
    if (!(thisYear > now + TWO_DAYS_MS)) return thisYear;
    return this.timestamps.localToEpochMs(year - 1, month, day, hour, minute, second);
  }
}

/** "2026-10-14T03:12:45.123456+00:00" (or "+0000", "Z") to epoch ms; NaN when invalid. */
function parseRfc3339(text: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:Z|([+-])(\d\d):?(\d\d))$/.exec(text);
  if (m === null) return Number.NaN;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number, number, number, number, number, number,
  ];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return Number.NaN;
  const naiveMs = Date.UTC(year, month - 1, day, hour, minute, second);
  if (new Date(naiveMs).getUTCDate() !== day) return Number.NaN; // Feb 30 rolls over: reject
  const millis = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  const offsetMin = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]));
  return naiveMs + millis - offsetMin * 60_000;
}
