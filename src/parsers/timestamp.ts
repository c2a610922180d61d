/**
 * Strict parsing of the timestamps PostgreSQL writes in its logs: %m / csvlog / jsonlog
 * ("2026-11-30 07:12:01.123 CET"), %t and %s ("2026-11-30 07:12:01 CET") and %n
 * ("1796022721.123"), to epoch milliseconds.
 *
 * The zone is what pg_strftime's %Z printed for log_timezone: an abbreviation (UTC, CET, CEST)
 * or a numeric offset ("+01", "-03", "+0545"). A numeric offset or an unambiguous abbreviation is
 * exact. Anything else (CST, IST, an abbreviation tzdata may add later) is resolved with the
 * server's log_timezone when it was given; without it the parse fails with a reason.
 *
 * Speed: a log has many lines per second, so the last second's result is cached (one string
 * compare per line), and luxon is asked for a zone's offset at most once per local hour. The hot
 * path never calls luxon or allocates.
 *
 * Never throws on data; a bad value returns NaN and sets `failure`. The constructor throws on a
 * bad log_timezone (configuration, fails fast).
 */
import { Info, type Zone } from 'luxon';
import { ZONE_ABBREVIATION_OFFSETS_MIN, parseNumericZone } from './time-zone-abbreviations.js';

export type TimestampFailure =
  | 'invalid_timestamp'
  | 'unknown_time_zone'
  | 'ambiguous_time_zone'
  | 'nonexistent_local_time';

export class TimeZoneConfigError extends Error {
  readonly code = 'PARSE_BAD_TIMEZONE';
  constructor(readonly timezone: string) {
    super(
      `log timezone "${timezone}" is not a time zone luxon knows; ` +
        'use the server\'s log_timezone as an IANA name (e.g. "Europe/Paris", "UTC") or "UTC+3"',
    );
  }
}

/** Whether `timezone` (a log_timezone value) can be used; for configuration checks. */
export function isKnownTimeZone(timezone: string): boolean {
  return Info.normalizeZone(timezone).isValid;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const ABBREVIATIONS = new Map(Object.entries(ZONE_ABBREVIATION_OFFSETS_MIN));

export class TimestampParser {
  /** Why the last parse returned NaN. */
  failure: TimestampFailure = 'invalid_timestamp';

  private readonly zone: Zone | null;
  // Per-second cache: "YYYY-MM-DD", "HH:MM:SS" and zone of the last good parse, its second in ms.
  private lastDate = '';
  private lastTime = '';
  private lastZone = '';
  private lastSecondMs = 0;
  // Per-local-hour cache of the configured zone's offset (only for hours far from a transition).
  private cachedHour = Number.NaN;
  private cachedHourOffsetMin = 0;

  /** @param timezone the server's log_timezone (IANA name or "UTC+n"); null when unknown. */
  constructor(timezone: string | null = null) {
    if (timezone === null || timezone === '') {
      this.zone = null;
      return;
    }
    const zone = Info.normalizeZone(timezone);
    if (!zone.isValid) throw new TimeZoneConfigError(timezone);
    this.zone = zone;
  }

  /** "YYYY-MM-DD HH:MM:SS[.mmm] ZONE" to epoch ms; NaN (and `failure`) when invalid. */
  parse(text: string): number {
    const c19 = text.charCodeAt(19);
    if (c19 === 46 /* . */) {
      if (text.charCodeAt(23) !== 32) return this.fail('invalid_timestamp');
      return this.parseParts(text.slice(0, 19), text.slice(20, 23), text.slice(24));
    }
    if (c19 !== 32) return this.fail('invalid_timestamp');
    return this.parseParts(text.slice(0, 19), undefined, text.slice(20));
  }

  /**
   * The same timestamp already cut in parts: "YYYY-MM-DD HH:MM:SS", the three millisecond digits
   * (absent for %t), the zone.
   */
  parseParts(dateTime: string, millisText: string | undefined, zone: string): number {
    if (dateTime.length !== 19 || dateTime.charCodeAt(10) !== 32) return this.fail('invalid_timestamp');
    return this.parseDateTime(dateTime.slice(0, 10), dateTime.slice(11), millisText, zone);
  }

  /**
   * The timestamp cut as the prefix regex captures it: "YYYY-MM-DD", "HH:MM:SS", the three
   * millisecond digits (absent for %t), the zone.
   */
  parseDateTime(date: string, time: string, millisText: string | undefined, zone: string): number {
    let millis = 0;
    if (millisText !== undefined) {
      millis = millisText.length === 3 ? digitsAt(millisText, 0, 3) : -1;
      if (millis < 0) return this.fail('invalid_timestamp');
    }
    if (time === this.lastTime && date === this.lastDate && zone === this.lastZone) return this.lastSecondMs + millis;

    const year = digitsAt(date, 0, 4);
    const month = digitsAt(date, 5, 2);
    const day = digitsAt(date, 8, 2);
    const hour = digitsAt(time, 0, 2);
    const minute = digitsAt(time, 3, 2);
    const second = digitsAt(time, 6, 2);
    if (
      date.length !== 10 || time.length !== 8 || zone.length === 0 ||
      year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) ||
      hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 ||
      date.charCodeAt(4) !== 45 || date.charCodeAt(7) !== 45 || time.charCodeAt(2) !== 58 || time.charCodeAt(5) !== 58
    ) {
      return this.fail('invalid_timestamp');
    }
    const naiveMs = Date.UTC(year, month - 1, day, hour, minute, second);
    const offsetMin = this.offsetOf(zone, naiveMs);
    if (Number.isNaN(offsetMin)) return Number.NaN;

    this.lastDate = date;
    this.lastTime = time;
    this.lastZone = zone;
    this.lastSecondMs = naiveMs - offsetMin * MINUTE_MS;
    return this.lastSecondMs + millis;
  }

  /** %n: "<epoch seconds>.<mmm>" to epoch ms; NaN when invalid. */
  parseEpoch(text: string): number {
    const dot = text.length - 4;
    if (dot < 1 || text.charCodeAt(dot) !== 46) return this.fail('invalid_timestamp');
    const seconds = digitsAt(text, 0, dot);
    const millis = digitsAt(text, dot + 1, 3);
    if (seconds < 0 || millis < 0) return this.fail('invalid_timestamp');
    return seconds * 1000 + millis;
  }

  /**
   * A wall-clock time without a printed zone (a syslog header), read in the configured zone or,
   * without one, in UTC. Fields are already range-checked by the caller except the day.
   */
  localToEpochMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
    if (day < 1 || day > daysInMonth(year, month)) return this.fail('invalid_timestamp');
    const naiveMs = Date.UTC(year, month - 1, day, hour, minute, second);
    if (this.zone === null) return naiveMs;
    const offsetMin = this.offsetInZone(this.zone, naiveMs, null);
    return Number.isNaN(offsetMin) ? Number.NaN : naiveMs - offsetMin * MINUTE_MS;
  }

  private offsetOf(zoneText: string, naiveMs: number): number {
    const numeric = parseNumericZone(zoneText);
    if (numeric !== null) return numeric;
    const known = ABBREVIATIONS.get(zoneText);
    if (known !== undefined && known.length === 1) return known[0] as number;
    if (this.zone === null) return this.fail(known === undefined ? 'unknown_time_zone' : 'ambiguous_time_zone');
    return this.offsetInZone(this.zone, naiveMs, zoneText);
  }

  /**
   * Offset of `zone` at the local time `naiveMs` (local time written as if it were UTC). In the
   * hour repeated when clocks go back, the printed abbreviation picks the offset (as ICU names it,
   * else through the abbreviation table), else the first occurrence wins; a time skipped when
   * clocks go forward cannot have been printed.
   */
  private offsetInZone(zone: Zone, naiveMs: number, printed: string | null): number {
    const hour = Math.floor(naiveMs / HOUR_MS);
    if (hour === this.cachedHour) return this.cachedHourOffsetMin;
    const before = zone.offset(naiveMs - DAY_MS);
    const after = zone.offset(naiveMs + DAY_MS);
    if (before === after && zone.offset(naiveMs - before * MINUTE_MS) === before) {
      this.cachedHour = hour;
      this.cachedHourOffsetMin = before;
      return before;
    }
    const valid = [before, after].filter((o) => zone.offset(naiveMs - o * MINUTE_MS) === o);
    if (valid.length === 0) return this.fail('nonexistent_local_time');
    if (valid.length === 1 || printed === null) return Math.max(...valid);
    const named = valid.find((o) => zone.offsetName(naiveMs - o * MINUTE_MS, { format: 'short', locale: 'en-US' }) === printed);
    if (named !== undefined) return named;
    const listed = ABBREVIATIONS.get(printed);
    const matching = valid.filter((o) => listed?.includes(o) === true);
    return matching.length === 1 ? (matching[0] as number) : Math.max(...valid);
  }

  private fail(reason: TimestampFailure): number {
    this.failure = reason;
    return Number.NaN;
  }
}

/** The decimal number in text[start, start+count), or -1 if any of those is not a digit. */
function digitsAt(text: string, start: number, count: number): number {
  let value = 0;
  for (let i = start; i < start + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
