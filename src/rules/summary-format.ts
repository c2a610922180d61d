/**
 * How numbers read in a finding's summary: the way a DBA writes them in an incident channel
 * ("84 s", "12 min", "1.2 GB", "104,857,600", "12:00:01 UTC"). English, UTC, no locale lookups.
 */
import { redactSqlLiterals } from '../lib/redact.js';

export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 120) return `${min} min`;
  const h = Math.floor(min / 60);
  const rest = min % 60;
  return rest === 0 ? `${h} h` : `${h} h ${rest} min`;
}

export function formatHours(hours: number): string {
  return formatDuration(hours * 3_600_000);
}

const UNITS = ['bytes', 'kB', 'MB', 'GB', 'TB'] as const;

/** 1024-based, as PostgreSQL's pg_size_pretty prints them. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${UNITS[unit]}`;
}

/** `12:00:01 UTC`: the time of day an event happened, for "dropped on primary at ...". */
export function formatTime(tsMs: number): string {
  return `${new Date(tsMs).toISOString().slice(11, 19)} UTC`;
}

/** A statement quoted in one line without its literals (a summary is sent off the machine), cut to `maxChars`. */
export function quoteStatement(statement: string, maxChars = 120): string {
  const flat = redactSqlLiterals(statement).replace(/\s+/g, ' ').trim().replace(/;$/, '');
  return flat.length <= maxChars ? flat : `${flat.slice(0, maxChars - 1)}…`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}

/**
 * How long a condition has held, from the first sample of its trailing run: "for 12 min (since
 * 10:04:00 UTC)", or "for more than 60 min" when that run starts at the first sample read and
 * about `lookbackMs` ago, so it began before what the rule reads.
 */
export function heldFor(runStartMs: number, firstReadMs: number | undefined, nowMs: number, lookbackMs: number): string {
  return runStartMs === firstReadMs && nowMs - runStartMs >= lookbackMs - 60_000
    ? `for more than ${formatDuration(nowMs - runStartMs)}` : `for ${formatDuration(nowMs - runStartMs)} (since ${formatTime(runStartMs)})`;
}
