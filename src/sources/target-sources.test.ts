import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { loadConfig } from '../config/load-config.js';
import { silentLogger } from '../lib/logger.js';
import { openStore, type Db } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import { TargetSources } from './target-sources.js';

// Nothing here connects: building TargetSources builds its scheduler, and a pg.Pool connects only
// when asked for a client. The scheduler keeps its options and pools private, with no pure
// wiring function in between, so the test looks inside through index access.
describe('TargetSources', () => {
  const dir = suiteTempDir('target-sources');
  const opened: Array<{ db: Db; pool: pg.Pool }> = [];
  afterEach(async () => {
    for (const { db, pool } of opened.splice(0)) {
      await pool.end();
      db.close();
    }
  });

  function build(yaml: string): { lockCheckMs: number | undefined; poolIdleTimeoutMs: number | null | undefined } {
    const path = join(dir, 'pgvigil.yaml');
    writeFileSync(path, yaml);
    const config = loadConfig({ file: path, env: {} });
    const [target] = config.targets;
    if (!target) throw new Error('the config has no target');
    const db = openStore(':memory:');
    const clock = new ManualClock();
    const log = silentLogger();
    const sources = new TargetSources(target, { config, db, writer: new StoreWriter(db, clock, log), clock, log });
    // The main database's pool, as the scheduler's first probe would open it.
    const pool = sources.scheduler['connections'].pool(null);
    opened.push({ db, pool });
    return { lockCheckMs: sources.scheduler['options'].databaseLockCheckMs, poolIdleTimeoutMs: pool.options.idleTimeoutMillis };
  }

  it('hands the configured connection timings to the poll scheduler and its pools', () => {
    const built = build('dsn: postgres://pgvigil@127.0.0.1:1/postgres\ncollectors:\n  idle_connection_timeout_ms: 45000\n  database_lock_check_interval_ms: 750\n');
    expect(built).toEqual({ lockCheckMs: 750, poolIdleTimeoutMs: 45_000 });
  });

  it('hands the defaults over when the config leaves them out', () => {
    expect(build('dsn: postgres://pgvigil@127.0.0.1:1/postgres\n')).toEqual({ lockCheckMs: 1_000, poolIdleTimeoutMs: 120_000 });
  });
});
