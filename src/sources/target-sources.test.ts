import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { suiteTempDir } from '../../test/helpers/temp-dir.js';
import { ManualClock } from '../../test/helpers/manual-clock.js';
import { loadConfig } from '../config/load-config.js';
import { silentLogger } from '../lib/logger.js';
import { openStore, type Db } from '../store/open-store.js';
import { StoreWriter } from '../store/store-writer.js';
import type { ConnectionBudgetOptions } from './connection-budget.js';
import { TargetSources } from './target-sources.js';

// Nothing here connects: building TargetSources builds its scheduler and its connection budget,
// which connects only when asked for a connection. The scheduler keeps its options and budget
// private, with no pure wiring function in between, so the test looks inside through index access.
describe('TargetSources', () => {
  const dir = suiteTempDir('target-sources');
  const opened: Db[] = [];
  afterEach(() => {
    for (const db of opened.splice(0)) db.close();
  });

  function build(yaml: string): Record<string, unknown> {
    const path = join(dir, 'pgvigil.yaml');
    writeFileSync(path, yaml);
    const config = loadConfig({ file: path, env: {} });
    const [target] = config.targets;
    if (!target) throw new Error('the config has no target');
    const db = openStore(':memory:');
    opened.push(db);
    const clock = new ManualClock();
    const log = silentLogger();
    const sources = new TargetSources(target, { config, db, writer: new StoreWriter(db, clock, log), clock, log });
    const budget = sources.scheduler['connections']['options'] as ConnectionBudgetOptions;
    const { databaseLockCheckMs, databases } = sources.scheduler['options'];
    const { idleTimeoutMs, maxConnections, minFreeConnections } = budget;
    return { databaseLockCheckMs, databases, idleTimeoutMs, maxConnections, minFreeConnections };
  }

  it('hands the configured connection settings to the poll scheduler and its connection budget', () => {
    const built = build(`dsn: postgres://pgvigil@127.0.0.1:1/postgres
collectors:
  idle_connection_timeout_ms: 45000
  database_lock_check_interval_ms: 750
  max_connections: 4
  min_free_connections: 9
  databases: { include: ['shop_*'], exclude: ['shop_test'] }
`);
    expect(built).toEqual({
      databaseLockCheckMs: 750, idleTimeoutMs: 45_000, maxConnections: 4, minFreeConnections: 9,
      databases: { include: ['shop_*'], exclude: ['shop_test'] },
    });
  });

  it('hands the defaults over when the config leaves them out', () => {
    expect(build('dsn: postgres://pgvigil@127.0.0.1:1/postgres\n')).toEqual({
      databaseLockCheckMs: 1_000, idleTimeoutMs: 120_000, maxConnections: 3, minFreeConnections: 5, databases: { include: [], exclude: [] },
    });
  });
});
