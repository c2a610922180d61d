/**
 * pgvigil's connections and session settings, seen from the server, CI-sized: `pgvigil run`
 * (built: `npm run build` first) on a PostgreSQL 18 with 10 databases of 200 tables each, every
 * collector every 2 s (bench/lib/scale.ts; `npm run bench -- scale` runs 10 x 5,000). Asserts the
 * documented bounds (at most collectors.max_connections, 3, sessions at once, all databases
 * together; at most 2 in the main database and 1 in each other; at most one connection opened per
 * database visit), that every session is named `pgvigil` in pg_stat_activity, and that every
 * connection it opened set statement_timeout and lock_timeout for the whole session.
 */
import { afterAll, expect, it } from 'vitest';
import { describeScale, runScale } from '../../bench/lib/scale.js';
import { DEFAULT_TIMEOUT_MS, POLL_LOCK_TIMEOUT_MS } from '../../src/collectors/collector.js';
import { DEFAULT_MAX_CONNECTIONS } from '../../src/sources/connection-budget.js';
import { destroyAllServers } from '../helpers/pg-harness.js';
import { suiteTempDir } from '../helpers/temp-dir.js';

const DATABASES = 10;
const OPTIONS = { databases: DATABASES, tablesPerDatabase: 200, intervalMs: 2_000, runMs: 12_000 };
const dir = suiteTempDir('scale');

afterAll(() => destroyAllServers());

it('holds at most 3 sessions at once, 2 in the main database and 1 in each other, each named pgvigil and opened with statement_timeout and lock_timeout', async () => {
  const result = await runScale({ ...OPTIONS, dir, say: (msg) => console.log(msg) });
  console.log(describeScale(result, OPTIONS).join('\n'));
  expect(result.daemonExit, result.daemonOutput).toEqual({ code: 0, signal: null });
  // Every database was polled, so the bound was reached for real, not by polling fewer.
  expect(result.databasesQueried).toEqual(['postgres', ...result.databases].sort());
  expect(result.maxConnectionsByDatabase.postgres ?? 0).toBeLessThanOrEqual(2);
  for (const db of result.databases) expect(result.maxConnectionsByDatabase[db] ?? 0, db).toBeLessThanOrEqual(1);
  expect(result.maxConnections).toBeLessThanOrEqual(DEFAULT_MAX_CONNECTIONS);
  expect(result.applicationNames).toEqual(['pgvigil']);
  // Each database visit opens at most one connection (over more databases than the budget, each
  // cycle opens one per database): a cycle per interval, the first at start, and the start-up
  // read of the log settings.
  const cycles = OPTIONS.runMs / OPTIONS.intervalMs + 1;
  expect(result.startups.length).toBeGreaterThanOrEqual(1 + DATABASES);
  expect(result.startups.length).toBeLessThanOrEqual(cycles * (1 + DATABASES) + 2);
  // The poller's pools ask for the default statement_timeout; the one start-up read of the log settings for 3 s.
  for (const startup of result.startups) {
    expect(startup).toMatchObject({ application_name: 'pgvigil', lock_timeout: String(POLL_LOCK_TIMEOUT_MS) });
    expect(Number(startup.statement_timeout), JSON.stringify(startup)).toBeGreaterThan(0);
    expect(Number(startup.statement_timeout), JSON.stringify(startup)).toBeLessThanOrEqual(DEFAULT_TIMEOUT_MS);
  }
  expect(result.startups.filter((s) => s.statement_timeout === String(DEFAULT_TIMEOUT_MS)).length).toBeGreaterThanOrEqual(1 + DATABASES);
  // Queries of every collector that runs here reached the server.
  expect(result.queryTimes.some((q) => q.collector === 'pg_stat_user_tables')).toBe(true);
}, 300_000);
