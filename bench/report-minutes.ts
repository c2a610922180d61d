/**
 * `npm run bench -- report-minutes`: what the log report per minute costs the store, and how long
 * `pgvigil report` takes to merge a week of it (issue #26).
 *
 * A busy minute: every event of the recorded stderr logs (test/fixtures/logs and
 * test/fixtures/log-report, all scenarios and versions: statements, errors, sessions, checkpoints,
 * temp files, vacuums, lock waits) placed in one minute and folded by the registered sections, as
 * one merged row. Every minute of a generated week holds that row (an upper bound: each minute as
 * varied as the whole corpus). Prints the row's size, the time to merge the week from its 10,080
 * minutes, to write its hour rows (report-minutes-compactor.ts) and to merge it from them, and the
 * store's bytes per day, and for 14 days against the default size budget.
 * Env: BENCH_DAYS (7), BENCH_RUNS (3).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AnyLogEvent } from '../src/domain/index.js';
import { LOG_REPORT_SECTIONS } from '../src/report/log-report/index.js';
import { foldByMinute, MINUTE_MS } from '../src/report/log-report/minute-folds.js';
import { DEFAULT_REPORT_LIMITS } from '../src/report/log-report/section.js';
import { mergeStoredMinutes } from '../src/report/log-report/stored-log-report.js';
import { openStore, type Db } from '../src/store/open-store.js';
import { ReportMinutesTable } from '../src/store/report-minutes.js';
import { systemClock } from '../src/domain/index.js';
import { ReportMinutesCompactor } from '../src/report/log-report/report-minutes-compactor.js';
import { usedBytes } from '../src/store/retention.js';
import { readCase } from '../test/helpers/scenarios/fixture-case.js';
import { parseLogFile } from '../test/helpers/scenarios/parse-log.js';
import type { Benchmark } from './run.js';

const DAY_MS = 86_400_000;
/** The default retention size budget (config/pgvigil.example.yaml, retention.max_size). */
const BUDGET_BYTES = 2 * 1024 ** 3;
const FIXTURE_ROOTS = ['test/fixtures/logs', 'test/fixtures/log-report'];
const START_MS = Date.UTC(2026, 10, 1);

async function corpusEvents(): Promise<AnyLogEvent[]> {
  const events: AnyLogEvent[] = [];
  for (const root of FIXTURE_ROOTS) {
    for (const name of readdirSync(root).filter((n) => n.includes('-stderr-')).sort()) {
      const dir = path.join(root, name);
      const fixture = readCase(dir);
      const parsed = await parseLogFile(path.join(dir, fixture.log_file), { format: 'stderr', prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: 'busy' });
      events.push(...parsed.events);
    }
  }
  return events;
}

export const benchmark: Benchmark = {
  description: 'the log report per minute: bytes per day in the store, and merging a week of minutes for pgvigil report',
  async run() {
    const days = Number(process.env.BENCH_DAYS ?? 7);
    const runs = Number(process.env.BENCH_RUNS ?? 3);
    const corpus = await corpusEvents();
    // In log order within the minute: the corpus' own order, squeezed into 60 s.
    const inOneMinute = corpus.map((e, i) => ({ ...e, tsMs: START_MS + Math.floor((i * MINUTE_MS) / corpus.length) }) as AnyLogEvent);
    const [row] = foldByMinute(inOneMinute, LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS);
    const states = row!.states;
    process.stdout.write(`sections: ${LOG_REPORT_SECTIONS.map((s) => s.key).join(', ')}\n`);
    process.stdout.write(`a busy minute: ${corpus.length} events of ${FIXTURE_ROOTS.join(' and ')} (stderr), its row ${(states.length / 1024).toFixed(1)} KiB of JSON\n`);

    const dir = mkdtempSync(path.join(os.tmpdir(), 'pgvigil-bench-report-minutes-'));
    const db = openStore(path.join(dir, 'store.db'));
    try {
      measure(db, states, days, runs);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

/** A busy minute's row written for every minute of `days`, then its hours; the store's size and the report's merge times printed. */
function measure(db: Db, states: string, days: number, runs: number): void {
  const table = new ReportMinutesTable(db);
  const minutesPerDay = DAY_MS / MINUTE_MS;
  for (let day = 0; day < days; day++) {
    db.transaction(() => {
      for (let m = 0; m < minutesPerDay; m++) table.insert({ target: 'busy', minuteMs: START_MS + day * DAY_MS + m * MINUTE_MS, states });
    })();
  }
  const window = { fromMs: START_MS, toMs: START_MS + days * DAY_MS - 1 };
  const merged = (label: string) => {
    const started = performance.now();
    const report = mergeStoredMinutes(table.inWindow(window), LOG_REPORT_SECTIONS, DEFAULT_REPORT_LIMITS);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(`${label}: ${days} days from ${report.minuteRows} rows merged into the report in ${seconds.toFixed(2)} s\n`);
    return seconds;
  };
  const fromMinutes = merged('minutes only (before the hours are written)');

  let started = performance.now();
  const compactor = new ReportMinutesCompactor(db, { ...systemClock, nowMs: () => window.toMs + DAY_MS }, { error: (obj) => process.stderr.write(`${JSON.stringify(obj)}\n`) });
  compactor.runOnce();
  process.stdout.write(`writing the ${compactor.stats.hoursWritten} hour rows: ${((performance.now() - started) / 1000).toFixed(2)} s ` +
    `(${((performance.now() - started) / compactor.stats.hoursWritten).toFixed(0)} ms an hour, once per hour in the daemon)\n`);
  const bytesPerDay = usedBytes(db) / days;
  process.stdout.write(`store: ${(bytesPerDay / 1024 ** 2).toFixed(1)} MiB per day of such minutes and hours (SQLite pages in use, states deflated), ` +
    `${((14 * bytesPerDay) / 1024 ** 3).toFixed(2)} GiB for 14 days: ${((100 * 14 * bytesPerDay) / BUDGET_BYTES).toFixed(0)}% of the default 2 GiB budget\n`);
  for (let run = 1; run <= runs; run++) {
    started = performance.now();
    const seconds = merged(`run ${run}, hours and minutes`);
    process.stdout.write(`  ${(fromMinutes / seconds).toFixed(0)}x faster than from the minutes alone\n`);
  }
}
