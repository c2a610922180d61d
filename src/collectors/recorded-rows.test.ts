/**
 * Every collector's row -> Sample mapping on the rows of every version, 13 to 19, each recorded
 * from a real server (test/fixtures/collector-rows/record.ts). The rows are replayed to
 * collect(): no server, no SQL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Sample } from '../domain/index.js';
import type { RowsFixture } from '../../test/fixtures/collector-rows/record.js';
import { createCollectors, majorVersion, type Collector } from './index.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../test/fixtures/collector-rows');
const MAJORS = [13, 14, 15, 16, 17, 18, 19];

function fixture(major: number, collector: string): RowsFixture | null {
  const file = path.join(FIXTURES, `pg${major}`, `${collector}.json`);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as RowsFixture) : null;
}

async function replay(collector: Collector, f: RowsFixture, laterMs = 0): Promise<Sample[]> {
  return collector.collect({
    target: 'recorded',
    server: f.server,
    ...(f.database ? { database: f.database } : {}),
    nowMs: f.nowMs + laterMs,
    query: async () => f.rows,
  });
}

const names = (samples: Sample[]): Set<string> => new Set(samples.map((s) => s.name));
const find = (samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

/** Series a version must have (true) or must not have (false). */
const VERSION_GATES: Record<string, Array<[metric: string, present: (major: number) => boolean]>> = {
  pg_stat_user_tables: [
    ['pg_stat_user_tables_n_tup_newpage_upd_total', (m) => m >= 16],
    ['pg_stat_user_tables_last_seq_scan_timestamp_seconds', (m) => m >= 16],
    ['pg_stat_user_tables_vacuum_time_seconds_total', (m) => m >= 18],
  ],
  pg_replication_slots: [
    ['pg_replication_slots_conflicting', (m) => m >= 16],
    ['pg_replication_slots_invalidated', (m) => m >= 17],
    ['pg_replication_slots_inactive_since_timestamp_seconds', (m) => m >= 17],
  ],
  pg_standby: [
    ['pg_standby_replay_pause_state', (m) => m >= 14],
    ['pg_stat_recovery_replay_end_lsn_bytes', (m) => m >= 19],
  ],
  pg_stat_database_conflicts: [['pg_stat_database_conflicts_confl_active_logicalslot_total', (m) => m >= 16]],
  pg_stat_progress_vacuum: [
    ['pg_stat_progress_vacuum_num_dead_tuples', (m) => m <= 16],
    ['pg_stat_progress_vacuum_dead_tuple_bytes', (m) => m >= 17],
    ['pg_stat_progress_vacuum_delay_time_seconds', (m) => m >= 18],
  ],
  pg_stat_progress_repack: [['pg_stat_progress_repack_heap_tuples_inserted', (m) => m >= 19]],
  pg_stat_database: [
    ['pg_stat_database_sessions_total', (m) => m >= 14],
    ['pg_stat_database_parallel_workers_launched_total', (m) => m >= 18],
  ],
  pg_stat_wal: [
    ['pg_stat_wal_wal_write_total', (m) => m <= 17],
    ['pg_stat_wal_wal_fpi_bytes_total', (m) => m >= 19],
  ],
  pg_stat_checkpointer: [
    ['pg_stat_checkpointer_restartpoints_done_total', (m) => m >= 17],
    ['pg_stat_checkpointer_num_done_total', (m) => m >= 18],
    ['pg_stat_checkpointer_buffers_backend_total', (m) => m <= 16],
  ],
};

describe.each(MAJORS)('PostgreSQL %i rows', (major) => {
  for (const collector of createCollectors()) {
    const f = fixture(major, collector.name);
    it(`${collector.name}: maps every row, names only declared series, honours its version gates`, async () => {
      if (!f) {
        // Only a collector that does not run on this version may lack rows.
        expect(collector.supports({ versionNum: major * 10_000, version: String(major), inRecovery: collector.name === 'pg_standby', startedAtMs: 0 })).toBe(false);
        return;
      }
      expect(majorVersion(f.server)).toBe(major);
      expect(collector.supports(f.server)).toBe(true);
      const samples = await replay(collector, f);
      expect(samples.length).toBeGreaterThan(0);
      const declared = new Set(collector.metrics.map((m) => m.name));
      for (const s of samples) {
        if (collector.name !== 'pg_settings') expect(declared, s.name).toContain(s.name);
        expect(s.value === null || Number.isFinite(s.value), `${s.name} ${s.value}`).toBe(true);
        expect(Object.values(s.labels).every((v) => typeof v === 'string')).toBe(true);
        expect(s.tsMs).toBe(f.nowMs);
      }
      for (const [metric, present] of VERSION_GATES[collector.name] ?? []) {
        expect(names(samples).has(metric), `${metric} on ${major}`).toBe(present(major));
      }
    });
  }
});

describe('what the recorded rows say', () => {
  const collectorNamed = (name: string): Collector => createCollectors().find((c) => c.name === name)!;
  const recorded = (major: number, name: string): Promise<Sample[]> => replay(collectorNamed(name), fixture(major, name)!);

  it.each(MAJORS)('PG %i: slots by owner; the unconsumed logical slot pins a catalog_xmin but no xmin', async (major) => {
    const samples = await recorded(major, 'pg_replication_slots');
    expect(find(samples, 'pg_replication_slots_info', { slot_name: 'idle_subscription' })[0]?.labels).toMatchObject({
      owner: 'logical_subscription', plugin: 'pgoutput', database: 'shop', temporary: 'false',
    });
    expect(find(samples, 'pg_replication_slots_info', { slot_type: 'physical' })[0]?.labels.owner).toBe('physical_standby');
    expect(find(samples, 'pg_replication_slots_xmin_age_xids', { slot_name: 'idle_subscription' })[0]?.value).toBeNull();
    expect(find(samples, 'pg_replication_slots_catalog_xmin_age_xids', { slot_name: 'idle_subscription' })[0]?.value).toBeGreaterThan(0);
    // A subscription's slot holds catalogs only: no horizon on user tables.
    expect(find(samples, 'pg_replication_slots_horizon_age_xids', { slot_name: 'idle_subscription' })[0]?.value).toBeNull();
  });

  it.each(MAJORS)('PG %i: the standby\'s walsender is physical and replays; the slots say failover and synced from 17 on', async (major) => {
    const walsenders = await recorded(major, 'pg_stat_replication');
    expect(find(walsenders, 'pg_stat_replication_info')[0]?.labels).toMatchObject({ kind: 'physical', slot_name: expect.stringMatching(/^record_standby_/) });
    expect(find(walsenders, 'pg_stat_replication_replay_lsn_bytes', { kind: 'physical' })[0]?.value).toBeGreaterThan(0);
    const slots = await recorded(major, 'pg_replication_slots');
    const known = major >= 17 ? 'false' : '';
    expect(find(slots, 'pg_replication_slots_info', { slot_name: 'idle_subscription' })[0]?.labels).toMatchObject({ failover: known, synced: known });
  });

  it.each(MAJORS)('PG %i: the walreceiver\'s silence, by the standby\'s own clock', async (major) => {
    const silent = find(await recorded(major, 'pg_standby'), 'pg_stat_wal_receiver_silent_seconds')[0]?.value;
    expect(silent).toBeGreaterThanOrEqual(0);
    expect(silent).toBeLessThan(60);
  });

  it.each(MAJORS)('PG %i: the 5 oldest transactions with their relation locks; a lazy VACUUM is left out, a table rewrite kept', async (major) => {
    const samples = await recorded(major, 'pg_long_transactions');
    const ages = find(samples, 'pg_long_transactions_xact_age_seconds');
    expect(ages.length).toBeLessThanOrEqual(5);
    expect(ages.map((s) => s.labels.query)).not.toContain('VACUUM big');
    // On 19 the REPACK and its reader started first: the VACUUM FULL, the newest, is past the 5.
    const rewrite = ages.find((s) => s.labels.query === (major >= 19 ? 'REPACK (CONCURRENTLY) repack_me' : 'VACUUM FULL rewrite_me'));
    expect(rewrite?.labels).toMatchObject({ state: 'active', strongest_lock: 'AccessExclusiveLock' });
    expect(find(samples, 'pg_long_transactions_relation_locks', { pid: rewrite!.labels.pid! })[0]?.value).toBeGreaterThan(0);
    const writer = ages.find((s) => s.labels.query === 'UPDATE orders SET amount = 0 WHERE id = 1');
    expect(writer?.labels).toMatchObject({ state: 'idle in transaction', strongest_lock: 'RowExclusiveLock' });
  });

  it.each(MAJORS)('PG %i: a failed CREATE UNIQUE INDEX CONCURRENTLY leaves its index invalid, left behind and never ready', async (major) => {
    const samples = await recorded(major, 'pg_invalid_indexes');
    const index = { datname: 'shop', schemaname: 'public', relname: 'orders', indexrelname: 'orders_amount_unique' };
    expect(find(samples, 'pg_invalid_indexes_left_behind', index)[0]?.value).toBe(1);
    expect(find(samples, 'pg_invalid_indexes_ready', index)[0]?.value).toBe(0);
    expect(find(samples, 'pg_invalid_indexes_indexes', { datname: 'shop' })[0]?.value).toBe(1);
  });

  it('PG 19: REPACK\'s slot is recognised by what it is, owned by the REPACK session, and holds all tables', async () => {
    const samples = await recorded(19, 'pg_replication_slots');
    const [info] = find(samples, 'pg_replication_slots_info', { owner: 'repack' });
    const sessions = await recorded(19, 'pg_maintenance_sessions');
    const [repack] = find(sessions, 'pg_maintenance_sessions_info', { kind: 'repack_concurrently' });
    const [worker] = find(sessions, 'pg_maintenance_sessions_info', { kind: 'repack_decoding_worker' });
    expect(info?.labels).toMatchObject({ plugin: 'pgrepack', temporary: 'true', owner_backend_type: 'REPACK decoding worker' });
    expect(info?.labels.slot_name).toBe(`pg_repack_${worker?.labels.pid}`);
    expect(info?.labels.owner_pid).toBe(repack?.labels.pid);
    expect(worker?.labels.leader_pid).toBe(repack?.labels.pid);
    expect(find(samples, 'pg_replication_slots_xmin_age_xids', { owner: 'repack' })[0]?.value).toBeNull();
    expect(find(samples, 'pg_replication_slots_horizon_age_xids', { owner: 'repack' })[0]?.value).toBeGreaterThan(0);
    const horizon = await recorded(19, 'pg_xmin_horizon');
    expect(find(horizon, 'pg_xmin_horizon_holder_age_xids', { owner: 'repack' })[0]?.labels).toMatchObject({
      kind: 'slot_catalog_xmin', scope: 'cluster', pid: repack?.labels.pid,
    });
    const progress = await recorded(19, 'pg_stat_progress_repack');
    expect(find(progress, 'pg_stat_progress_repack_info', { relname: 'repack_me' })[0]?.labels).toMatchObject({ command: 'REPACK', phase: 'catch-up' });
  });

  it.each(MAJORS)('PG %i: xmin holders by pid and database, prepared transactions among them', async (major) => {
    const samples = await recorded(major, 'pg_xmin_horizon');
    const idle = find(samples, 'pg_xmin_horizon_holder_age_xids', { kind: 'backend', state: 'idle in transaction', query: 'SELECT count(*) FROM orders' });
    expect(idle[0]?.labels).toMatchObject({ datname: 'shop', scope: 'database' });
    expect(idle[0]?.labels.pid).toMatch(/^\d+$/);
    expect(find(samples, 'pg_xmin_horizon_holder_age_xids', { kind: 'prepared_xact', name: 'recorded_px', datname: 'shop' })).toHaveLength(1);
    expect(find(samples, 'pg_xmin_horizon_age_xids', { kind: 'slot_catalog_xmin', scope: 'catalog' })[0]?.value).toBeGreaterThan(0);
  });

  it.each(MAJORS)('PG %i: a VACUUM FULL rewriting, a VACUUM scanning, a row-lock wait and pg_repack leftovers', async (major) => {
    const progress = await recorded(major, 'pg_stat_progress_repack');
    expect(find(progress, 'pg_stat_progress_repack_info', { relname: 'rewrite_me' })[0]?.labels).toMatchObject({ command: 'VACUUM FULL', phase: 'rebuilding index' });
    const vacuum = await recorded(major, 'pg_stat_progress_vacuum');
    expect(find(vacuum, 'pg_stat_progress_vacuum_heap_blocks_scanned', { relname: 'big' })[0]?.value).toBeGreaterThan(0);
    const sessions = await recorded(major, 'pg_maintenance_sessions');
    expect(find(sessions, 'pg_maintenance_sessions_running', { kind: 'vacuum_full' })[0]?.value).toBe(1);
    const locks = await recorded(major, 'pg_lock_waits');
    const [waiter] = find(locks, 'pg_lock_waits_session_wait_seconds', { relname: 'orders', locktype: 'transactionid' });
    expect(waiter?.labels.blocking_pids).toMatch(/^\d+$/);
    expect(find(locks, 'pg_lock_waits_relation_waiters', { relname: 'orders' })[0]?.value).toBe(1);
    const leftovers = await recorded(major, 'pg_repack_leftovers');
    expect(find(leftovers, 'pg_repack_leftovers_objects_left_behind')[0]?.value).toBe(2);
    expect(find(leftovers, 'pg_repack_leftovers_object_left_behind', { kind: 'trigger', trigger_name: 'repack_trigger' })[0]?.labels.for_table).toBe('public.orders');
  });

  it.each(MAJORS)('PG %i: a paused standby with WAL waiting stands still for as long as it is sampled so', async (major) => {
    const collector = collectorNamed('pg_standby');
    const f = fixture(major, 'pg_standby')!;
    const first = await replay(collector, f);
    expect(find(first, 'pg_standby_replay_paused')[0]?.value).toBe(1);
    expect(find(first, 'pg_standby_replay_pending_bytes')[0]?.value).toBeGreaterThan(0);
    expect(find(first, 'pg_standby_startup_wait_event')[0]?.labels).toEqual({ wait_event_type: 'IPC', wait_event: 'RecoveryPause' });
    const later = await replay(collector, f, 5_000);
    expect(find(later, 'pg_standby_replay_standing_still_seconds')[0]?.value).toBe(5);
  });

  it.each(MAJORS)('PG %i: dead rows per table, and no change rate limit while counters stand still', async (major) => {
    const collector = collectorNamed('pg_stat_user_tables');
    const f = fixture(major, 'pg_stat_user_tables')!;
    const first = await replay(collector, f);
    expect(find(first, 'pg_stat_user_tables_n_dead_tup', { datname: 'shop', relname: 'orders' })[0]?.value).toBeGreaterThan(0);
    expect(find(first, 'pg_stat_user_tables_tables', { datname: 'shop' })[0]?.value).toBe(f.rows.length);
    expect(find(first, 'pg_stat_user_tables_changes_per_second')).toEqual([]);
    const later = await replay(collector, f, 10_000);
    expect(find(later, 'pg_stat_user_tables_changes_per_second', { relname: 'orders' })[0]?.value).toBe(0);
    expect(find(later, 'pg_stat_user_tables_repack_seconds_until_ceiling', { relname: 'orders' })[0]?.value).toBeNull();
  });

  it.each(MAJORS)('PG %i: settings in base units, text settings as info', async (major) => {
    const samples = await recorded(major, 'pg_settings');
    expect(find(samples, 'pg_settings_server_version_num')[0]?.value).toBe(fixture(major, 'pg_settings')!.server.versionNum);
    expect(find(samples, 'pg_settings_max_standby_streaming_delay_seconds')[0]?.value).toBe(30);
    expect(find(samples, 'pg_settings_info', { name: 'log_line_prefix' })[0]?.labels.setting).toBe('%m [%p] %q%u@%d ');
    expect(find(samples, 'pg_settings_lock_timeout_seconds')[0]?.value).toBe(0);
  });
});
