/**
 * How an alert's evidence reads to a person in the report's text forms (HTML, Markdown). The
 * JSON keeps every fact and every digit; a reader is shown what is known, at a useful precision.
 * Pure.
 */
import type { Evidence } from '../domain/alert.js';

/** Facts worth a line: a null fact means "not known here" and says nothing to a reader. */
export function shownFacts(facts: Evidence['facts']): Array<[string, string]> {
  return Object.entries(facts)
    .filter(([, value]) => value !== null)
    .map(([key, value]) => [key, String(value)]);
}

export interface CitedSeries {
  name: string;
  labels: Record<string, string>;
  value: number | null;
  ts: string;
}

/** `name{label="v"} = 14.51 at time`, in PromQL's notation; braces only when there are labels. */
export function citedSeriesText(s: CitedSeries, time: (iso: string) => string): string {
  const labels = Object.entries(s.labels).map(([k, v]) => `${k}="${v}"`).join(',');
  return `${s.name}${labels === '' ? '' : `{${labels}}`} = ${s.value === null ? 'NULL' : roundedValue(s.value)} at ${time(s.ts)}`;
}

/** At most three decimals, and none on whole numbers (byte counts, XIDs). */
function roundedValue(value: number): string {
  return Number.isInteger(value) ? String(value) : String(Math.round(value * 1000) / 1000);
}
