/**
 * The whole /metrics exposition of a running pgvigil, with a real PostgreSQL 18 primary and
 * standby behind it (every collector, a logical slot, an xmin-holding transaction) and the events
 * of the recorded server logs, passes `promtool check metrics` with no warning; a dropped table
 * leaves it at the next poll.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { destroyAllServers, startPrimary, startStandby, type PgServer } from '../helpers/pg-harness.js';
import { waitUntil } from '../helpers/pg-processes.js';
import { describeWithTool, toolPath } from '../helpers/tools.js';
import { startOutputs, type OutputsRig } from './metrics-real-feed.js';

describeWithTool('promtool', '/metrics of pgvigil watching PostgreSQL 18', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pgvigil-metrics-'));
  let rig: OutputsRig;
  let primary: PgServer;
  let holder: pg.Client;
  let exposition = '';

  beforeAll(async () => {
    primary = await startPrimary({ version: 18, settings: { wal_level: 'logical', hot_standby_feedback: 'on' } });
    await primary.query(`
      DO $$ BEGIN
        FOR i IN 1..20 LOOP
          EXECUTE format('CREATE TABLE t%s (id int PRIMARY KEY, v text)', i);
          EXECUTE format('INSERT INTO t%s SELECT g, md5(g::text) FROM generate_series(1, 500) g', i);
          EXECUTE format('UPDATE t%s SET v = v || ''x'' WHERE id %% 3 = 0', i);
        END LOOP;
      END $$`);
    await primary.query(`SELECT pg_create_logical_replication_slot('pgvigil_test_logical', 'pgoutput')`);
    // An open REPEATABLE READ transaction holds the xmin horizon while the collectors sample it.
    holder = new pg.Client({ connectionString: primary.dsn(), application_name: 'horizon-holder' });
    await holder.connect();
    await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder.query('SELECT count(*) FROM t1');
    const standby = await startStandby(primary);
    rig = await startOutputs([{ name: 'primary', server: primary }, { name: 'standby', server: standby }], path.join(dir, 'pgvigil.db'));
    rig.alerts.fire({
      ruleId: 'xmin-horizon-held', dedupKey: 'xmin-horizon-held/primary', severity: 'warning', target: 'primary',
      labels: { holder: 'horizon-holder', 'holder.type': 'session' }, summary: 'a session holds the xmin horizon', evidence: { eventIds: [], series: [], facts: {} },
    }, Date.now());
    exposition = await (await fetch(`${rig.url}/metrics`)).text();
  });

  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await rig?.stop();
    await destroyAllServers();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes promtool check metrics with no warning', () => {
    const result = spawnSync(toolPath('promtool'), ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(`${result.stdout}${result.stderr}`).toBe('');
    expect(result.status).toBe(0);
  });

  it('has polled, log-derived and self series for both servers', () => {
    const withSamples = new Set(exposition.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.replace(/[{ ].*/, '')));
    for (const name of [
      'pg_stat_user_tables_n_dead_tup', 'pg_replication_slots_catalog_xmin_age_xids', 'pg_xmin_horizon_holder_age_xids',
      'pg_stat_replication_replay_lag_bytes', 'pg_standby_replay_pending_bytes', 'pg_log_events_total', 'pg_log_autovacuum_elapsed_seconds_count',
      'pgvigil_alert_firing', 'pgvigil_collector_polls_total', 'pgvigil_store_write_duration_seconds_count', 'pgvigil_store_size_bytes',
      'pgvigil_build_info', 'process_resident_memory_bytes', 'process_open_fds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds',
    ]) expect(withSamples, name).toContain(name);
    expect(exposition).toMatch(/^pg_up\{target="primary"\} 1$/m);
    expect(exposition).toMatch(/^pg_up\{target="standby"\} 1$/m);
    // The holder by who it is, not by its session: no statement text, no process id (the store has them).
    expect(exposition).toMatch(/^pg_xmin_horizon_holder_age_xids\{target="primary",application_name="horizon-holder",[^}]*kind="backend"[^}]*\} \d+$/m);
    expect(exposition).not.toMatch(/[{,](query|pid|blocking_pids|leader_pid|owner_pid)="/);
    expect(exposition).toMatch(/^pg_stat_user_tables_n_dead_tup\{target="primary",datname="postgres",relname="t1",schemaname="public"\} \d+$/m);
    expect(exposition).toMatch(/^pgvigil_alert_firing\{target="primary",rule="xmin-horizon-held",dedup_key="xmin-horizon-held\/primary",severity="warning",holder="horizon-holder",holder_type="session"\} 1$/m);
    expect(exposition).toMatch(/^pgvigil_alert_cause_info\{target="primary",rule="xmin-horizon-held",dedup_key="xmin-horizon-held\/primary",summary="a session holds the xmin horizon"\} 1$/m);
    expect(exposition).toMatch(/^pgvigil_collector_polls_total\{target="standby",collector="pg_standby"\} [1-9]/m);
  });

  it('drops a dropped table from /metrics at the next poll of pg_stat_user_tables, keeping the other tables', async () => {
    const pollUserTables = () => rig.schedulers[0]!.runOnce((c) => c.name === 'pg_stat_user_tables');
    /** The pg_stat_user_tables series of a table on the primary's /metrics. */
    const seriesOf = async (relname: string): Promise<string[]> => {
      const text = await (await fetch(`${rig.url}/metrics`)).text();
      return text.split('\n').filter((l) => l.startsWith('pg_stat_user_tables_') && l.includes('target="primary"') && l.includes(`relname="${relname}"`));
    };
    await primary.query('CREATE TABLE dropped_soon (id int PRIMARY KEY); INSERT INTO dropped_soon SELECT generate_series(1, 100)');
    await pollUserTables();
    await waitUntil(async () => (await seriesOf('dropped_soon')).some((l) => l.startsWith('pg_stat_user_tables_n_live_tup{')), 30_000, 'dropped_soon on /metrics');
    await primary.query('DROP TABLE dropped_soon');
    // The next completed run; one already in flight when the table went (it would still list it)
    // is followed by the scheduled one within 15 s, hence the deadline.
    await pollUserTables();
    await waitUntil(async () => (await seriesOf('dropped_soon')).length === 0, 30_000, 'dropped_soon gone from /metrics');
    expect((await seriesOf('t1')).some((l) => l.startsWith('pg_stat_user_tables_n_dead_tup{'))).toBe(true);
  });
});
