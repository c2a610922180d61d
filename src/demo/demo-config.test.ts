import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadConfig } from '../config/load-config.js';
import { buildRules } from '../rules/catalog.js';
import { demoConfig } from './demo-config.js';

describe('demoConfig', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-demo-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const server = (port: number) => ({ host: '127.0.0.1', port, logDir: `/tmp/pg-${port}/log` });

  it('is a config pgvigil run accepts: both servers in one cluster, as the monitoring role, thresholds the rules know', () => {
    const file = path.join(dir, 'pgvigil.yaml');
    writeFileSync(file, stringify(demoConfig({ primary: server(5432), standby: server(5433), listen: '127.0.0.1:9899', db: '/tmp/demo.db' })));
    const config = loadConfig({ file, env: {} });
    expect(config.targets.map((t) => [t.name, t.cluster, t.dsn, t.log?.path])).toEqual([
      ['primary', 'demo', 'postgres://pgvigil_monitor@127.0.0.1:5432/postgres', '/tmp/pg-5432/log'],
      ['standby', 'demo', 'postgres://pgvigil_monitor@127.0.0.1:5433/postgres', '/tmp/pg-5433/log'],
    ]);
    // Lowered for the demo only: each override changes what the rules are built with.
    expect(config.rules.thresholds).toMatchObject({
      'xmin-horizon-held': { warnAgeXids: 1_000 }, 'replica-lag-over-lb-limit': { limitSeconds: 10 }, 'vacuum-held-back': { minHeldMs: 15_000 },
    });
    expect(buildRules(config.rules).length).toBeGreaterThan(0);
  });
});
