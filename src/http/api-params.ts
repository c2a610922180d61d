/**
 * Parsing of the API's query parameters that JSON schema cannot express (times, durations, label
 * matchers). Every failure is a BadRequest naming the parameter, what was given and what is
 * allowed: the route answers 400 with that message, never 500.
 */
import { DateTime } from 'luxon';

export class BadRequest extends Error {
  readonly statusCode = 400;
  readonly code = 'bad_request';
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const RELATIVE = /^now(?:-(\d+)(ms|s|m|h|d))?$/;

/** The range of a JS Date: a time outside it cannot be printed, compared or stored as a time. */
const MAX_TIME_MS = 8.64e15;

/** Epoch milliseconds, ISO 8601 (`2026-10-14T03:12:45Z`), `now` or `now-<n><unit>` (ms, s, m, h, d). */
export function parseTime(name: string, value: string | undefined, fallbackMs: number, nowMs: number): number {
  if (value === undefined) return fallbackMs;
  const ms = timeOf(value, nowMs);
  if (ms !== null && Math.abs(ms) <= MAX_TIME_MS) return ms;
  throw new BadRequest(`${name}=${JSON.stringify(value)} is not a time: use epoch milliseconds, ISO 8601 (2026-10-14T03:12:45Z), now or now-1h`);
}

function timeOf(value: string, nowMs: number): number | null {
  if (/^\d+$/.test(value)) return Number(value);
  const relative = RELATIVE.exec(value);
  if (relative) return relative[1] === undefined ? nowMs : nowMs - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  const parsed = DateTime.fromISO(value, { zone: 'utc' });
  return parsed.isValid ? parsed.toMillis() : null;
}

/** Milliseconds as an integer or `<n><unit>` (ms, s, m, h, d). */
export function parseDuration(name: string, value: string): number {
  if (/^\d+$/.test(value)) return Number(value);
  const match = DURATION.exec(value);
  if (match) return Number(match[1]) * UNIT_MS[match[2]!]!;
  throw new BadRequest(`${name}=${JSON.stringify(value)} is not a duration: use milliseconds or <n><unit> with unit ms, s, m, h or d (e.g. 30s)`);
}

/** `datname=shop,relname=orders` or a JSON object of strings (for values with commas). */
export function parseLabels(value: string | undefined): Record<string, string> {
  if (value === undefined || value === '') return {};
  if (value.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new BadRequest(`labels is not valid JSON: ${JSON.stringify(value)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((v) => typeof v === 'string')) {
      throw new BadRequest('labels as JSON must be an object of strings, e.g. {"datname":"shop"}');
    }
    return parsed as Record<string, string>;
  }
  const labels: Record<string, string> = {};
  for (const pair of value.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new BadRequest(`labels: ${JSON.stringify(pair)} is not name=value; use datname=shop,relname=orders`);
    labels[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return labels;
}

export function checkRange(fromMs: number, toMs: number): void {
  if (fromMs > toMs) throw new BadRequest(`from (${new Date(fromMs).toISOString()}) is after to (${new Date(toMs).toISOString()})`);
}
