/**
 * A store for historical review filled from a recorded real log: its events stored and judged
 * by the catalog's rules the way the daemon does it, so `pgvigil report` and the timeline page
 * have real alerts and evidence to show.
 */
import path from 'node:path';
import { systemClock, type Clock } from '../../src/domain/clock.js';
import { buildHttpApp } from '../../src/http/build-http-app.js';
import { Metrics } from '../../src/http/metrics.js';
import { silentLogger } from '../../src/lib/logger.js';
import { RULES_DEFAULTS, buildRules } from '../../src/rules/catalog.js';
import { RuleEngine } from '../../src/rules/engine.js';
import { StoreRuleViewSource } from '../../src/rules/store-rule-view.js';
import { AlertStore } from '../../src/store/alert-store.js';
import { openStore, type Db } from '../../src/store/open-store.js';
import { StoreQueries } from '../../src/store/queries.js';
import { StoreWriter } from '../../src/store/store-writer.js';
import { ManualClock } from './manual-clock.js';
import { caseName, FIXTURES_DIR, readCase } from './scenarios/fixture-case.js';
import { parseLogFile } from './scenarios/parse-log.js';

export interface RecordedLog {
  major: number;
  format: 'stderr' | 'csvlog' | 'jsonlog';
  scenario: string;
  target: string;
}

/** Stores the recorded log's events in `file`, evaluates the rules once after its last line, and returns the window it spans. */
export async function storeFromRecordedLog(file: string, log: RecordedLog): Promise<{ startMs: number; endMs: number }> {
  const dir = path.join(FIXTURES_DIR, caseName(log.major, log.format, log.scenario));
  const fixture = readCase(dir);
  const { events } = await parseLogFile(path.join(dir, fixture.log_file), { format: log.format, prefix: fixture.log_line_prefix, timezone: fixture.log_timezone, target: log.target });
  const db = openStore(file);
  try {
    const clock = new ManualClock(events[0]!.tsMs);
    const writer = new StoreWriter(db, clock, silentLogger());
    writer.enqueue({ events });
    writer.flush();
    const engine = new RuleEngine({
      rules: buildRules(RULES_DEFAULTS), views: new StoreRuleViewSource(db, { targets: [{ name: log.target, cluster: null }], staleAfterMs: 5_000 }),
      alerts: new AlertStore(db, []), clock, log: silentLogger(),
    });
    const endMs = events.at(-1)!.tsMs + 1_000;
    engine.evaluate(endMs);
    return { startMs: events[0]!.tsMs, endMs };
  } finally {
    db.close();
  }
}

/** pgvigil's HTTP app (API and timeline page) over a store, as `pgvigil run` serves it, on a free loopback port. */
export async function serveStore(db: Db, options: { clock?: Clock; token?: string | null } = {}): Promise<{ url: string; close: () => Promise<void> }> {
  const clock = options.clock ?? systemClock;
  const app = await buildHttpApp({
    metrics: new Metrics({ clock }), queries: new StoreQueries(db), clock, listenHost: '127.0.0.1', token: options.token ?? null,
    readiness: { store: () => ({ writable: true, detail: null }), postgres: () => [], logs: () => [] },
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, close: () => app.close() };
}
