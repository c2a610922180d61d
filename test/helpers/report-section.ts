/**
 * What every log report section's test needs (src/report/log-report/section.ts): the events of
 * recorded fixtures through the real pipeline, a section folded over them in one pass, and the
 * contract's merge property: any split of the events into ranges, folded apart, turned into JSON
 * and back (the state crosses worker threads and the store as JSON), merged in any grouping that
 * keeps their order, gives the one-pass result.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { expect } from 'vitest';
import type { AnyLogEvent } from '../../src/domain/index.js';
import { DEFAULT_REPORT_LIMITS, type ReportLimits, type ReportSection } from '../../src/report/log-report/section.js';
import { expectGolden } from './golden-file.js';
import { FIXTURES_DIR, readCase } from './scenarios/fixture-case.js';
import { parseLogFile } from './scenarios/parse-log.js';

/** The events of test/fixtures/logs/<name> (or `root`/<name>), parsed from its raw log as `pgvigil analyze` does. */
export async function fixtureEvents(name: string, root = FIXTURES_DIR): Promise<AnyLogEvent[]> {
  const dir = path.join(root, name);
  const fixture = readCase(dir);
  const parsed = await parseLogFile(path.join(dir, fixture.log_file), {
    format: fixture.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: name,
  });
  return parsed.events;
}

export function foldEvents<S, R>(section: ReportSection<S, R>, events: readonly AnyLogEvent[], limits: ReportLimits = DEFAULT_REPORT_LIMITS): S {
  const state = section.empty();
  for (const event of events) section.add(state, event, limits);
  return state;
}

/** The section's result over `events` in one pass, as the JSON a report prints. */
export function foldResult<S, R>(section: ReportSection<S, R>, events: readonly AnyLogEvent[], limits: ReportLimits = DEFAULT_REPORT_LIMITS): R {
  return roundTrip(section.result(foldEvents(section, events, limits), limits));
}

/** Golden files of the sections' results: test/fixtures/log-report-sections/<section key>.json. */
const GOLDEN_DIR = path.resolve(import.meta.dirname, '../fixtures/log-report-sections');

/** test/fixtures/log-report: the log report's recorded workloads (README.md there), cases outside the golden-log ones. */
export const LOG_REPORT_FIXTURES_DIR = path.resolve(import.meta.dirname, '../fixtures/log-report');

/** The cases of a workload in LOG_REPORT_FIXTURES_DIR (`pg<major>-<format>-<scenario>`), sorted: every version and format recorded. */
export function logReportCases(scenario: string): string[] {
  return fs.readdirSync(LOG_REPORT_FIXTURES_DIR).filter((name) => name.endsWith(`-${scenario}`)).sort();
}

/** The section's result over each fixture case (under `root`), compared with its golden file (one per section). */
export async function expectSectionGolden<S, R>(section: ReportSection<S, R>, cases: readonly string[], root = FIXTURES_DIR): Promise<void> {
  const results: Record<string, unknown> = {};
  for (const name of cases) results[name] = foldResult(section, await fixtureEvents(name, root));
  expectGolden(path.join(GOLDEN_DIR, `${section.key}.json`), `${JSON.stringify(results, null, 2)}\n`);
}

function roundTrip<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Merges `states[from..to)` in the grouping `splits` picks (a binary tree over the ranges). */
function mergeTree<S, R>(section: ReportSection<S, R>, states: S[], from: number, to: number, pick: () => number, limits: ReportLimits): S {
  if (to - from === 1) return states[from]!;
  const middle = from + 1 + (pick() % (to - from - 1));
  const earlier = roundTrip(mergeTree(section, states, from, middle, pick, limits));
  const later = roundTrip(mergeTree(section, states, middle, to, pick, limits));
  return section.merge(earlier, later, limits);
}

/** fast-check: every split of `events` and every grouping of the merges gives the one-pass result. */
export function expectMergeProperty<S, R>(section: ReportSection<S, R>, events: readonly AnyLogEvent[], limits: ReportLimits = DEFAULT_REPORT_LIMITS, numRuns = 300): void {
  const whole = foldResult(section, events, limits);
  fc.assert(fc.property(
    fc.uniqueArray(fc.integer({ min: 1, max: Math.max(1, events.length - 1) }), { maxLength: 12 }),
    fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
    (cuts, choices) => {
      const bounds = [0, ...cuts.filter((c) => c < events.length).sort((a, b) => a - b), events.length];
      const states = bounds.slice(1).map((end, i) => roundTrip(foldEvents(section, events.slice(bounds[i], end), limits)));
      let next = 0;
      const merged = mergeTree(section, states, 0, states.length, () => choices[next++ % choices.length]!, limits);
      expect(roundTrip(section.result(merged, limits))).toEqual(whole);
    },
  ), { numRuns });
}
