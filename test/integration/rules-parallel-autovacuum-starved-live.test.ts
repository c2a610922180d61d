/**
 * parallel-autovacuum-starved live, on a real PostgreSQL 19: two tables with four indexes and the
 * reloption autovacuum_parallel_workers, autovacuum_max_parallel_workers = 2 so autovacuum plans 2
 * parallel index-vacuum workers per table, and max_parallel_workers = 0 so the pool is empty and it
 * launches none. Two starved runs make it "repeatedly" (min_reports: 2).
 *
 * The daemon's own machinery watches (live-rules-rig.ts): the log tailer reads the autovacuum
 * reports, the poller samples pg_settings, the rules engine writes the alert. Then the built CLI
 * (`npm run build`) analyzes the log the server wrote: the same conclusion, from the log alone.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { basisOf } from '../../src/domain/index.js';
import { destroyAllServers, startPrimary, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-server.js';
import { churnFourIndexTable, createFourIndexTable, fillFourIndexTable } from '../helpers/scenarios/autovacuum.js';
import { PARALLEL_ROWS, parallelSettings, parallelTableOptions } from '../helpers/scenarios/parallel-autovacuum.js';
import { describeWithTool } from '../helpers/tools.js';
import { createMonitorRole } from './collectors-rig.js';
import { startLiveRules, type LiveRules } from './live-rules-rig.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RULE = 'parallel-autovacuum-starved';
const TABLES = ['pav_orders', 'pav_events'];
const PLANNED = 2;
const FIRE_WAIT_MS = 40_000;
// Longer than the rig's 2 s hold-down and several 500 ms evaluations.
const STAYS_MS = 3_000;

describeWithTool('pg19', 'rules on a live PostgreSQL 19: parallel autovacuum starved of workers', () => {
  let server: PgServer;
  let rig: LiveRules;

  beforeAll(async () => {
    server = await startPrimary({
      version: 19, name: 'rules-pav-starved',
      settings: parallelSettings(19, { autovacuum_max_parallel_workers: PLANNED, max_parallel_workers: 0 }),
    });
    await createMonitorRole(server);
    rig = await startLiveRules(server);
  });

  afterAll(async () => {
    await rig?.stop();
    await destroyAllServers();
  });

  it('fires after two runs launch fewer workers than planned, naming the tables and the pool sizes; stays for the hour', async () => {
    // Loaded and churned with autovacuum off for the table, then switched on: one index-vacuum pass each.
    await Promise.all(TABLES.map(async (table) => {
      await createFourIndexTable(server, table, parallelTableOptions('autovacuum_enabled = false'));
      await fillFourIndexTable(server, table, PARALLEL_ROWS);
      await churnFourIndexTable(server, table);
    }));
    for (const table of TABLES) await server.query(`ALTER TABLE ${table} SET (autovacuum_enabled = true)`);

    const sampled = (a: { summary: string }) => a.summary.includes('(max_parallel_workers = 0,');
    await waitUntil(() => rig.alerts(RULE).some(sampled), FIRE_WAIT_MS, `the ${RULE} alert with the sampled pool sizes`);
    const [fired, ...others] = rig.alerts(RULE);
    expect(others).toEqual([]);
    expect(fired!.severity).toBe('warning');
    expect(fired!.summary).toMatch(new RegExp(
      '^autovacuum got fewer parallel workers than it planned in 2 of 2 parallel runs in the last 60 min ' +
      `\\(worst: postgres\\.public\\.(${TABLES.join('|')}), index vacuum: ${PLANNED} planned, 0 launched\\): ` +
      'the max_parallel_workers / max_worker_processes pool is exhausted ' +
      `\\(max_parallel_workers = 0, max_worker_processes = \\d+, autovacuum_max_parallel_workers = ${PLANNED}\\)$`,
    ));
    const evidence = JSON.parse(fired!.evidence);
    expect(evidence.facts).toMatchObject({
      starved_runs: 2, parallel_runs: 2, workers_planned: PLANNED, workers_launched: 0,
      max_parallel_workers: 0, autovacuum_max_parallel_workers: PLANNED,
    });
    expect(evidence.facts.tables.split(', ').sort()).toEqual(TABLES.map((t) => `postgres.public.${t}`).sort());
    // The cited events are the two autovacuum reports the tailer stored.
    const reports = rig.db.prepare("SELECT id FROM events WHERE kind = 'autovacuum' AND json_extract(details, '$.parallel_workers_launched') = 0 ORDER BY id")
      .pluck().all();
    expect(evidence.eventIds).toEqual(reports);
    expect(evidence.series.map((s: { name: string }) => s.name)).toContain('pg_settings_max_parallel_workers');
    expect(basisOf(evidence)).toBe('log+samples');

    // The starved runs stay in the hour's window: the alert stays firing, once.
    await new Promise((resolve) => setTimeout(resolve, STAYS_MS));
    expect(rig.alerts(RULE).map((a) => a.state)).toEqual(['firing']);
    expect(rig.transitions(fired!.id)).toEqual(['firing']);
  });

  it('pgvigil analyze --rules finds the same from the log the server wrote, with basis log', () => {
    const logs = fs.readdirSync(server.logDir).filter((f) => /^postgresql-.*\.log$/.test(f)).sort().map((f) => path.join(server.logDir, f));
    expect(logs.length).toBeGreaterThan(0);
    const result = spawnSync(process.execPath, ['bin/pgvigil.js', 'analyze', '--rules', '--json', ...logs], {
      cwd: ROOT, encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH },
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const alerts = JSON.parse(result.stdout).alerts.filter((a: { rule: string }) => a.rule === RULE);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ basis: 'log', ended_at: null, severity: 'warning' });
    expect(alerts[0].summary).toMatch(new RegExp(
      `in 2 of 2 parallel runs .*index vacuum: ${PLANNED} planned, 0 launched\\): .* \\(its size is not sampled: `,
    ));
    expect(alerts[0].evidence.series).toEqual([]);
    expect(alerts[0].evidence.events).toHaveLength(2);
  });
});
